"""A process that rewrites two partitions of one table for ever, through the platform's IO manager.

``python -m tests.platform.partition_writer <duckdb|parquet> <location> <rows>`` writes partitions
``alpha`` and ``beta`` (``rows`` rows each, every row carrying the write's ``version``), prints
``ready`` once both exist, then replaces them again and again with a new version each time, until
it is killed. ``tests/platform/test_atomic_partition_writes.py`` kills it at many instants and
checks that each partition still holds ``rows`` rows of one version.
"""

from __future__ import annotations

import itertools
import sys

import dagster as dg
import numpy as np
import pandas as pd

from argassets.platform.resources.storage import duckdb_io_manager, parquet_io_manager

KEYS = ("alpha", "beta")
TABLE = "kill_target"
PARTITION_COLUMN = "judge_model"


def rows_of(key: str, version: int, rows: int) -> pd.DataFrame:
    """One partition's rows: ``rows`` rows of ``key``, all of ``version``."""
    ids = np.arange(rows)
    return pd.DataFrame(
        {
            PARTITION_COLUMN: key,
            "version": version,
            "item": ids,
            "text": pd.Series(ids).astype(str).radd("argument text number "),
        }
    )


def write(manager: dg.IOManager, resource_config: dict, key: str, frame: pd.DataFrame) -> None:
    with dg.build_output_context(
        asset_key=dg.AssetKey(TABLE),
        partition_key=key,
        asset_partitions_def=dg.StaticPartitionsDefinition(list(KEYS)),
        definition_metadata={"partition_expr": PARTITION_COLUMN},
        resource_config=resource_config,
    ) as context:
        manager.handle_output(context, frame)


def main(storage: str, location: str, rows: int) -> None:
    factory = duckdb_io_manager(location) if storage == "duckdb" else parquet_io_manager(location)
    resource_config = {"database": location, "connection_config": {}, "schema": "main"}
    manager = factory.create_io_manager(dg.build_init_resource_context())
    for version in itertools.count():
        for key in KEYS:
            write(manager, resource_config, key, rows_of(key, version, rows))
        if version == 0:
            print("ready", flush=True)  # noqa: T201


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
