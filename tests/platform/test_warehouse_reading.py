"""Reading the results while a run writes them (argassets/platform/storage/warehouse.py).

Study A on the embedded sample: ``longer-wins`` and the reports are materialised, then a reader
opens :func:`~argassets.platform.storage.warehouse.connect` and keeps querying while ``random`` and the
reports are materialised again. Both succeed; every answer the reader got is the table before or
after, never a mix; at the end the published tables equal the DuckDB file's.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import duckdb
import pandas as pd
import pytest
from dagster._core.storage.db_io_manager import TableSlice

import argassets.platform.paths as paths
from argassets.cli import common
from argassets.platform.paths import DUCKDB_ENV_VAR
from argassets.platform.resources.storage import (
    TransactionalDuckDbClient,
    duckdb_io_manager,
    read_stored_table,
    wal_of,
)
from argassets.platform.storage.reader_file import open_store, store_path
from argassets.platform.storage.table_store import TABLES_ENV_VAR, ParquetTableStore
from argassets.platform.storage.warehouse import ReadOnlyConnection, connect, published_dir
from argassets.studies import load_registry
from tests.platform.warehouse_fixtures import write_tables

STUDY = ["argument_quality"]
#: The sample: 35 comparisons in each of 3 dimensions, 3 strategies, 3 runs; 12 report rows per model.
JUDGED, REPORTED = 3 * 35 * 3 * 3, 12
QUERIES = {
    "aq_judgments": "SELECT judge_model, count(*) FROM aq_judgments GROUP BY 1 ORDER BY 1",
    "aq_agreement_report": "SELECT model, count(*) FROM aq_agreement_report GROUP BY 1 ORDER BY 1",
}


def _snapshot(connection: ReadOnlyConnection) -> dict[str, list[tuple]]:
    return {table: connection.execute(query).fetchall() for table, query in QUERIES.items()}


def test_a_reader_held_open_across_a_partition_and_its_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARGASSETS_DATA_DIR", raising=False)
    monkeypatch.delenv("ARGASSETS_WEBIS_URL", raising=False)
    monkeypatch.delenv("ARGASSETS_TABLES", raising=False)
    monkeypatch.setattr(paths, "SIBLING_SHARED_DATA_DIR", tmp_path / "no-shared-data")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    database = tmp_path / "db" / "argassets.duckdb"
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(database))
    monkeypatch.setenv("ARGASSETS_CACHE", str(tmp_path / "db" / "cache.sqlite"))
    instance = common.get_instance()
    registry = load_registry()
    common.sync_partitions(instance, registry)
    executor = common.executor(instance)
    assert executor.run_partition(registry, "longer-wins", STUDY) and executor.run_reports(STUDY)

    old = {"aq_judgments": [("longer-wins", JUDGED)], "aq_agreement_report": [("longer-wins", REPORTED)]}
    new = {
        "aq_judgments": [("longer-wins", JUDGED), ("random", JUDGED)],
        "aq_agreement_report": [("longer-wins", REPORTED), ("random", REPORTED)],
    }
    reader = connect()
    assert _snapshot(reader) == old
    seen: list[dict[str, list[tuple]]] = []
    stop = threading.Event()

    def keep_reading() -> None:
        while not stop.is_set():
            seen.append(_snapshot(reader))
            stop.wait(0.05)

    thread = threading.Thread(target=keep_reading)
    thread.start()
    try:
        written = executor.run_partition(registry, "random", STUDY) and executor.run_reports(STUDY)
    finally:
        stop.set()
        thread.join()
    assert written, "a run failed while a reader held the published tables open"
    assert len(seen) > 10
    for snapshot in seen:
        for table, rows in snapshot.items():
            assert rows in (old[table], new[table]), f"{table}: a mix of before and after: {rows}"
    assert _snapshot(reader) == new
    reader.close()

    # The published copy is the runs' store's content, table by table, and the warehouse file's views read it.
    with (
        duckdb.connect(str(store_path(database)), read_only=True) as warehouse,
        connect(published_dir(database)) as published,
        duckdb.connect(str(database), read_only=True) as views,
    ):
        tables = [row[0] for row in warehouse.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        assert {"aq_judgments", "aq_bt_scores", "aq_agreement_report", "webis_arguments"} <= set(tables)
        for table in tables:
            query = f'SELECT * FROM "{table}" ORDER BY ALL'
            pd.testing.assert_frame_equal(warehouse.execute(query).df(), published.execute(query).df(), obj=table)
            pd.testing.assert_frame_equal(warehouse.execute(query).df(), views.execute(query).df(), obj=table)


def test_a_table_read_outside_the_inputs_waits_for_another_process_holding_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Neo4j export's statistics and the embeddings' previous vectors are read this way; a check
    # of the same run holding the file made that step fail at once ("Conflicting lock is held").
    database = tmp_path / "argassets.duckdb"
    monkeypatch.setenv(DUCKDB_ENV_VAR, str(database))
    monkeypatch.delenv(TABLES_ENV_VAR, raising=False)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time\n"
            f"c = duckdb.connect({str(store_path(database))!r})\n"
            "c.execute('CREATE TABLE held AS SELECT 42 AS x')\n"
            "print('holding', flush=True)\n"
            "time.sleep(1)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        table = read_stored_table("held")
    finally:
        holder.wait(timeout=60)
    assert table is not None and table["x"].tolist() == [42]


def test_a_run_waiting_for_the_store_says_who_holds_it(tmp_path: Path) -> None:
    # Nothing waits long in silence: a run's connection held back by another process for more than
    # 2 s says so, then goes on; a shorter wait (another run's write) is not worth a warning. The
    # holder lets go when the wait is said (a fixed hold raced the retries under load).
    database = tmp_path / "argassets.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys\n"
            f"c = duckdb.connect({str(store_path(database))!r})\n"
            "print('holding', flush=True)\n"
            "sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    said: list[str] = []

    def say_and_release(line: str) -> None:
        said.append(line)
        holder.stdin.write("go\n")
        holder.stdin.flush()

    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(duckdb.IOException, match="lock"):
            open_store(database, wait_s=0.5, on_wait=said.append)
        assert said == []
        with open_store(database, on_wait=say_and_release) as connection:
            assert connection.execute("SELECT 1").fetchall() == [(1,)]
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert len(said) == 1, said
    assert said[0].startswith(f"waiting for the table store {store_path(database)}")
    assert f"(PID {holder.pid})" in said[0] and "readers open argassets.duckdb or use argassets sql" in said[0]


def _store_writer(database: Path, then: str) -> subprocess.Popen:
    """A process that writes the store and then ``then`` (Python, with ``c`` its connection)."""
    code = (
        "import duckdb, os, time\n"
        f"c = duckdb.connect({str(store_path(database))!r})\n"
        "c.execute('PRAGMA disable_checkpoint_on_shutdown')\n"
        "c.execute('CREATE OR REPLACE TABLE t AS SELECT 1 AS a')\n"
        "print('written', flush=True)\n" + then
    )
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def _connect_and_read(database: Path) -> list[str]:
    said: list[str] = []
    context = SimpleNamespace(resource_config={"database": str(database)}, log=SimpleNamespace(warning=said.append))
    with TransactionalDuckDbClient.connect(context, TableSlice(table="t", schema="main")) as connection:
        assert connection.execute("SELECT a FROM t").fetchall() == [(1,)]
    return said


def test_only_a_killed_writers_log_is_called_interrupted(tmp_path: Path) -> None:
    database = tmp_path / "argassets.duckdb"
    killed = _store_writer(database, "os._exit(0)")  # its log is left, never checkpointed
    killed.wait(timeout=60)
    assert wal_of(store_path(database)).exists()
    [said] = _connect_and_read(database)
    assert "a write-ahead log left by an interrupted writer was replayed" in said
    assert not wal_of(store_path(database)).exists()
    # A live writer's log, seen while waiting for its lock, is gone when it closes: nothing to say.
    live = _store_writer(database, "time.sleep(2.0)\nc.execute('CHECKPOINT')\nc.close()\n")
    assert live.stdout is not None and live.stdout.readline().strip() == "written"
    assert wal_of(store_path(database)).exists()
    assert _connect_and_read(database) == []
    live.wait(timeout=60)


def test_an_older_warehouse_is_moved_into_the_store_at_the_first_write(tmp_path: Path) -> None:
    # Before issue 34 the warehouse file was the store; a home made then keeps every table.
    database = tmp_path / "argassets.duckdb"
    with duckdb.connect(str(database)) as old:
        old.execute("CREATE TABLE main.scores AS SELECT 'x' AS system, 0.5 AS score")
        scores = old.execute("SELECT * FROM main.scores").df()
    ParquetTableStore(published_dir(database)).write("scores", scores)  # its copy, published then
    held = duckdb.connect(str(database), read_only=True)  # a reader holding the old file meanwhile
    write_tables(database, only="votes")
    assert held.execute("SELECT count(*) FROM scores").fetchall() == [(1,)]  # still reads its file
    held.close()
    with duckdb.connect(str(store_path(database)), read_only=True) as store:
        assert store.execute("SELECT * FROM main.scores").fetchall() == [("x", 0.5)]
        assert store.execute("SELECT count(*) FROM main.votes").fetchall() == [(20,)]
    with duckdb.connect(str(database), read_only=True) as reader:
        kinds = dict(reader.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall())
        assert kinds == {"scores": "VIEW", "votes": "VIEW"}
        assert reader.execute("SELECT * FROM scores").fetchall() == [("x", 0.5)]


def test_a_whole_table_first_written_with_an_empty_column_takes_values_later(tmp_path: Path) -> None:
    # A report with nothing to report writes one row whose text columns are all None (DuckDB type
    # NULL); its next run, with figures, must replace the table, column types included.
    database = tmp_path / "argassets.duckdb"
    rows = [{"model": None, "estimate": float("nan")}]

    @dg.asset
    def report() -> pd.DataFrame:
        """One row per model."""
        return pd.DataFrame(rows)

    resources = {"io_manager": duckdb_io_manager(str(database))}
    instance = dg.DagsterInstance.ephemeral()
    assert dg.materialize([report], resources=resources, instance=instance).success
    rows[:] = [{"model": "smollm2", "estimate": 0.25}, {"model": "random", "estimate": 0.0}]
    assert dg.materialize([report], resources=resources, instance=instance).success
    with duckdb.connect(str(store_path(database)), read_only=True) as store:
        assert store.execute("SELECT * FROM main.report ORDER BY model").fetchall() == [
            ("random", 0.0),
            ("smollm2", 0.25),
        ]
    with connect(published_dir(database)) as reader:
        assert reader.sql("SELECT model FROM report ORDER BY model").fetchall() == [("random",), ("smollm2",)]
