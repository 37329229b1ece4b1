"""A reader holding the warehouse file never makes a run fail (issue 34, part 2; issue 35, part 2).

Study A on the embedded sample, every command a subprocess on its own home. ``random`` is judged;
then a reader process opens the warehouse file the way a notebook, the DuckDB CLI or DBeaver does
and keeps it open through a whole ``argassets materialize`` of another partition:

- read-only (``duckdb.connect(warehouse, read_only=True)``), while it also holds a query of the
  supported read path (``warehouse.connect()``) half-read: the run succeeds; the same connection
  sees the new partition on its next query; the held query reads on to its end;
- read-write (``duckdb.connect(warehouse)``, the DuckDB CLI's default), through a run that also
  writes every report: the run succeeds; the reports' tables appear when the reader reconnects.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_home import BIN, ROOT, cli_environment

pytestmark = pytest.mark.concurrency

REGISTRY = """
[[models]]
name = "longer-wins"
backend = "longer-wins"
studies = ["argument_quality"]

[[models]]
name = "random"
backend = "random"
studies = ["argument_quality"]
seed = 1
"""
#: The sample: 35 comparisons in each of 3 dimensions, 3 strategies, 3 runs.
JUDGED = 3 * 35 * 3 * 3
COUNTS = "SELECT judge_model, count(*) FROM aq_judgments GROUP BY 1 ORDER BY 1"

READER = """
import json, sys
import duckdb
from argassets.platform.storage.warehouse import connect

warehouse, read_only = sys.argv[1], sys.argv[2] == "read_only"
held = duckdb.connect(warehouse, read_only=read_only)
held.execute("SET enable_progress_bar = false")  # a bar on stdout would mix with the report
report = {"before": held.execute(COUNTS).fetchall(), "tables_before": sorted(r[0] for r in held.execute("SHOW TABLES").fetchall())}
path = connect()
stream = path.sql("SELECT * FROM aq_prompts").fetch_record_batch(10)
first = stream.read_next_batch().num_rows
print("REPORT " + json.dumps(report), flush=True)
sys.stdin.readline()  # the run happens meanwhile
report["same_connection"] = held.execute(COUNTS).fetchall()
report["streamed"] = first + sum(batch.num_rows for batch in stream)
report["prompts"] = path.sql("SELECT count(*) FROM aq_prompts").fetchall()[0][0]
held.close()
again = duckdb.connect(warehouse, read_only=True)
report["tables_after"] = sorted(r[0] for r in again.execute("SHOW TABLES").fetchall())
report["reconnected"] = again.execute(COUNTS).fetchall()
print("REPORT " + json.dumps(report), flush=True)
""".replace("COUNTS", repr(COUNTS))


def _argassets(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "argassets"), *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def _report(reader: subprocess.Popen) -> dict:
    """The reader's next report line."""
    assert reader.stdout is not None
    for line in reader.stdout:
        if line.startswith("REPORT "):
            return json.loads(line.removeprefix("REPORT "))
    raise AssertionError(f"the reader stopped: {reader.stderr.read() if reader.stderr else ''}")


def _held_through(env: dict[str, str], mode: str, *run: str) -> tuple[dict, subprocess.CompletedProcess[str]]:
    """Run ``argassets *run`` while a reader process holds the warehouse in ``mode``; its report."""
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, env["ARGASSETS_DUCKDB"], mode],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert reader.stdin is not None and reader.stdout is not None
    try:
        opened = _report(reader)
        done = _argassets(env, *run)
        reader.stdin.write("go\n")
        reader.stdin.flush()
        report = {**opened, **_report(reader)}
    finally:
        reader.kill()
        reader.wait(timeout=60)
    return report, done


def test_a_reader_holding_the_warehouse_file_never_fails_a_run_and_sees_the_new_data(
    tmp_path: Path, study_a_inputs_home: Path
) -> None:
    env = cli_environment(tmp_path, REGISTRY, inputs=study_a_inputs_home)
    first = _argassets(env, "materialize", "random")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]

    report, run = _held_through(env, "read_only", "materialize", "longer-wins")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "lock" not in (run.stdout + run.stderr).lower()
    assert report["before"] == [["random", JUDGED]]
    assert report["same_connection"] == [["longer-wins", JUDGED], ["random", JUDGED]]  # its next query
    assert report["streamed"] == report["prompts"] > 10  # the held query read on to its end

    report, run = _held_through(env, "read_write", "materialize", "random", "--with-reports")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "aq_bt_scores" not in report["tables_before"] and "aq_bt_scores" in report["tables_after"]
    assert {"aq_agreement_report", "aq_majority_votes"} <= set(report["tables_after"])
    assert report["reconnected"] == [["longer-wins", JUDGED], ["random", JUDGED]]
