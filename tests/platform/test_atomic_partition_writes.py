"""A writer killed at any instant of a partition write leaves the old rows or the new ones (issue 21, 1).

A real process (``tests/platform/partition_writer.py``) rewrites two partitions of one table through
the platform's IO manager, on the DuckDB file and on the Parquet store, until it is SIGKILLed; the
kills land at increasing delays, so across the loop they hit the delete, the insert, the commit,
the checkpoint and the rename. After every kill the next open (which replays any write-ahead log
the writer left) must find each partition whole: all its rows, of one version.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from argassets.platform.storage.reader_file import store_path
from argassets.platform.storage.table_store import ParquetTableStore
from tests.platform.partition_writer import KEYS, PARTITION_COLUMN, TABLE

ROOT = Path(__file__).resolve().parents[2]
ROWS = 200_000
#: Kills per storage, 0.2 s apart from 0.1 s after the first whole write: together they span more
#: than one rewrite loop. The DuckDB file is where a lost partition was seen (issue 21, case 1).
KILLS = {"duckdb": 8, "parquet": 5}

pytestmark = pytest.mark.concurrency


def _start_writer(storage: str, location: Path, errors: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.platform.partition_writer", storage, str(location), str(ROWS)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=errors.open("w"),
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.strip() == "ready", f"the writer did not start: {line!r} {errors.read_text()[-3000:]}"
    return process


def _duckdb_partitions(location: Path) -> dict[str, tuple[int, int]]:
    # A read-write open of the runs' store is what the next run does: it replays a WAL the killed writer left.
    with duckdb.connect(str(store_path(location))) as con:
        rows = con.execute(
            f"SELECT {PARTITION_COLUMN}, count(*), count(DISTINCT version) FROM main.{TABLE} GROUP BY 1"
        ).fetchall()
    return {key: (count, versions) for key, count, versions in rows}


def _parquet_partitions(location: Path) -> dict[str, tuple[int, int]]:
    frame = ParquetTableStore(location).read_partitions(TABLE, PARTITION_COLUMN)
    assert frame is not None
    counts = frame.groupby(PARTITION_COLUMN)["version"].agg(["size", "nunique"])
    return {str(key): (int(row["size"]), int(row["nunique"])) for key, row in counts.iterrows()}


@pytest.mark.parametrize("storage", ["duckdb", "parquet"])
def test_a_writer_killed_at_any_instant_leaves_every_partition_whole(tmp_path: Path, storage: str) -> None:
    location = tmp_path / ("tables.duckdb" if storage == "duckdb" else "tables")
    read = _duckdb_partitions if storage == "duckdb" else _parquet_partitions
    broken = []
    wal_left = 0
    for kill in range(KILLS[storage]):
        writer = _start_writer(storage, location, tmp_path / "writer.err")
        time.sleep(0.1 + 0.2 * kill)  # later and later into the rewrite loop
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        wal_left += storage == "duckdb" and Path(f"{store_path(location)}.wal").exists()
        found = read(location)
        if found != {key: (ROWS, 1) for key in KEYS}:
            broken.append((kill, found))
    assert not broken, f"partitions not whole after a kill (kill number, {{key: (rows, versions)}}): {broken}"
    if storage == "duckdb":
        print(f"kills that left a write-ahead log behind: {wal_left} of {KILLS[storage]}")  # noqa: T201
