"""``argassets sql`` output (issue 35, part 6): CSV is streamed, a closed pipe ends quietly, errors are one line."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from argassets.platform.storage.warehouse_query import BROKEN_PIPE_STATUS, CSV_BATCH_ROWS, QueryError, run_query

ROOT = Path(__file__).resolve().parents[2]


def test_csv_is_streamed_batch_by_batch(tmp_path: Path) -> None:
    # A query whose later rows fail: rows before the failure reach the output first when the result
    # is streamed; loading the whole result (as before: .df().to_csv) would print nothing at all.
    # How far DuckDB computes ahead of the reader varies with the load (0.5 to 1.3 million rows
    # here), so the failure comes late and at least one whole batch must have been written.
    out = io.StringIO()
    query = "SELECT CASE WHEN range < 4000000 THEN range ELSE error('row 4,000,000') END AS x FROM range(5000000)"
    with pytest.raises(QueryError, match=r"row 4,000,000"):
        run_query(query, csv=True, location=str(tmp_path), out=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "x" and lines[1:4] == ["0", "1", "2"]
    assert len(lines) > CSV_BATCH_ROWS, f"{len(lines)} lines before the failure: the result was not streamed"


def test_csv_of_no_rows_is_the_header(tmp_path: Path) -> None:
    out = io.StringIO()
    assert run_query("SELECT 1 AS a, 'x' AS b WHERE false", csv=True, location=str(tmp_path), out=out) == 0
    assert out.getvalue() == "a,b\n"


def test_csv_keeps_integers_with_nulls_integers(tmp_path: Path) -> None:
    out = io.StringIO()
    run_query(
        "SELECT * FROM (VALUES (1, 'a'), (NULL, 'b'), (3, 'c')) t(n, s)", csv=True, location=str(tmp_path), out=out
    )
    assert out.getvalue() == "n,s\n1,a\n,b\n3,c\n"  # not 1.0 and 3.0


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    env = {**os.environ, "ARGASSETS_TABLES": str(tmp_path), "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)}
    command = [str(Path(sys.executable).parent / "argassets"), "sql", "SELECT * FROM range(5000000)", "--csv"]
    reader = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout is not None and reader.stderr is not None
    assert reader.stdout.readline() == b"range\n"
    reader.stdout.close()  # as `| head -1` does after its line
    status = reader.wait(timeout=120)
    error = reader.stderr.read().decode()
    assert error == "", error
    assert status == BROKEN_PIPE_STATUS


def test_the_table_shows_every_column_however_narrow_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # DuckDB fitted the table to this by hiding 9 of the 12 columns
    query = "SELECT " + ", ".join(f"repeat('x', 60) AS column_number_{i}" for i in range(12))
    out = io.StringIO()
    assert run_query(query, location=str(tmp_path), out=out) == 0
    shown = out.getvalue()
    assert all(f"column_number_{i} " in shown for i in range(12)), shown
    assert "shown" not in shown  # DuckDB's footer "12 columns (3 shown)" when it hides some
