"""A small warehouse written by the platform's own IO manager, for the read-path tests.

Two tables: ``scores`` (unpartitioned) and ``votes`` (partitioned by ``judge_model``, keys ``a``
and ``b``), written in process through :func:`argassets.platform.resources.storage.duckdb_io_manager`
(so the runs' store, the published Parquet copies and the reader file all exist), or through the
Parquet IO manager (``$ARGASSETS_TABLES`` mode).
"""

import hashlib
from pathlib import Path

import dagster as dg
import pandas as pd

from argassets.platform.resources.storage import duckdb_io_manager, parquet_io_manager

KEYS = ("a", "b")
partitions = dg.StaticPartitionsDefinition(list(KEYS))


@dg.asset(partitions_def=partitions, metadata={"partition_expr": "judge_model"})
def votes(context: dg.AssetExecutionContext) -> pd.DataFrame:
    """Ten rows per partition."""
    return pd.DataFrame({"judge_model": context.partition_key, "vote": range(10)})


@dg.asset
def scores() -> pd.DataFrame:
    """Three scores."""
    return pd.DataFrame({"system": ["x", "y", "z"], "score": [0.5, 0.25, 0.125]})


def write_tables(location: Path, *, parquet: bool = False, only: str | None = None) -> None:
    """Materialise both tables (or ``only`` one) into the warehouse file ``location`` (or Parquet folder)."""
    manager = parquet_io_manager(str(location)) if parquet else duckdb_io_manager(str(location))
    resources = {"io_manager": manager}
    instance = dg.DagsterInstance.ephemeral()
    if only in (None, "votes"):
        for key in KEYS:
            assert dg.materialize([votes], partition_key=key, resources=resources, instance=instance).success
    if only in (None, "scores"):
        assert dg.materialize([scores], resources=resources, instance=instance).success


def disk_state(folder: Path) -> dict[str, tuple[int, str]]:
    """Every file under ``folder``: its modification time (ns) and SHA-256, to prove nothing changed."""
    return {
        str(path): (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
