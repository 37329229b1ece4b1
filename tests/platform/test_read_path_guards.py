"""The supported read path cannot write (issue 35, part 1): the probe's attacks, each refused.

A warehouse is written by the platform's IO manager (the runs' store, the Parquet copies, the
reader file); then ``argassets sql`` and :func:`argassets.platform.storage.warehouse.connect`
are asked to attach the warehouse file and delete from it, copy over a published table, read
``/etc/passwd``, create a table and run several statements. Each is refused with one line, and
every file beside the warehouse keeps its bytes and its modification time.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from argassets import cli
from argassets.platform.storage.reader_file import copy_warehouse, store_path
from argassets.platform.storage.warehouse import RefusedQuery, connect, published_dir
from argassets.platform.storage.warehouse_query import QueryError, run_query
from tests.platform.warehouse_fixtures import disk_state, write_tables


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    database = tmp_path_factory.mktemp("written") / "argassets.duckdb"
    write_tables(database)
    return database


@pytest.fixture()
def warehouse(written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    database = tmp_path / "argassets.duckdb"
    copy_warehouse(written, database)
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(database))
    monkeypatch.delenv("ARGASSETS_TABLES", raising=False)
    return database


def attacks(database: Path) -> dict[str, tuple[str, str]]:
    """The probe's cases: the statement, and a word the refusal must contain."""
    copy = published_dir(database) / "scores" / "data.parquet"
    return {
        "attach the warehouse": (f"ATTACH '{database}' AS w", "ATTACH statements are refused"),
        "attach the store": (f"ATTACH '{store_path(database)}' AS s", "ATTACH statements are refused"),
        "delete": ("DELETE FROM votes", "DELETE statements are refused"),
        "copy over a published table": (
            f"COPY (SELECT 'made up' AS system, 9.0 AS score) TO '{copy}' (FORMAT parquet)",
            "COPY statements are refused",
        ),
        "read /etc/passwd": ("SELECT * FROM read_csv('/etc/passwd')", "Permission Error"),
        "read a file beside the tables": (
            f"SELECT * FROM read_text('{published_dir(database)}/../{database.name}')",
            "Permission Error",
        ),
        "create a table": ("CREATE TABLE made_up AS SELECT 1 AS x", "CREATE statements are refused"),
        "several statements": ("SELECT 1; DROP VIEW scores", "one statement per call, this holds 2"),
        "change the guards": ("SET enable_external_access = true", "SET statements are refused"),
        "load an extension": ("LOAD httpfs", "LOAD statements are refused"),
    }


@pytest.mark.parametrize("case", list(attacks(Path("/w/argassets.duckdb"))))
def test_argassets_sql_refuses_each_attack_in_one_line_and_changes_nothing(
    warehouse: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    query, refusal = attacks(warehouse)[case]
    before = disk_state(warehouse.parent)
    assert cli.main(["sql", query]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("argassets: error: ") and refusal in error, error
    assert "\n" not in error and "Traceback" not in error
    assert disk_state(warehouse.parent) == before
    # The tables still hold what the runs wrote.
    with connect() as reader:
        assert reader.sql("SELECT system, score FROM scores ORDER BY 1").fetchall() == [
            ("x", 0.5),
            ("y", 0.25),
            ("z", 0.125),
        ]
        assert reader.sql("SELECT count(*) FROM votes").fetchone() == (20,)


def test_the_python_reader_is_as_read_only_as_the_command(warehouse: Path) -> None:
    before = disk_state(warehouse.parent)
    with connect() as reader:
        for query, refusal in attacks(warehouse).values():
            expected = RefusedQuery if "refused" in refusal or "statement" in refusal else duckdb.PermissionException
            with pytest.raises(expected, match=refusal.split(" Error")[0]):
                reader.sql(query).fetchall()
        # What it hands out runs no further SQL: rows, frames and Arrow only.
        result = reader.sql("SELECT * FROM scores")
        assert not hasattr(result, "query") and not hasattr(result, "to_parquet")
        assert len(result.df()) == 3
    assert disk_state(warehouse.parent) == before


def test_reading_queries_work(warehouse: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for query in ("SHOW TABLES", "DESCRIBE votes", "SUMMARIZE scores", "FROM votes LIMIT 2", "EXPLAIN SELECT 1"):
        assert run_query(query) == 0, query
    shown = capsys.readouterr().out
    assert "scores" in shown and "votes" in shown


def test_a_bad_max_rows_is_one_line(warehouse: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sql", "SELECT 1", "--max-rows", "-5"]) == 2
    assert capsys.readouterr().err == "argassets: error: --max-rows must be 1 or more, got -5\n"
    with pytest.raises(QueryError, match="--max-rows must be 1 or more, got 0"):
        run_query("SELECT 1", max_rows=0)


def test_the_help_says_the_read_path_is_read_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["sql", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "read-only" in shown and "cannot write, attach, copy, create or read other files" in shown
