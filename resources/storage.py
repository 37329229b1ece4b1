"""DuckDB storage for every table asset."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from dagster_duckdb_pandas import DuckDBPandasIOManager

from argassets.platform.paths import DEFAULT_DUCKDB_PATH, DUCKDB_ENV_VAR


class ArgassetsDuckDBIOManager(DuckDBPandasIOManager):
    """The dagster-duckdb pandas IO manager, creating the database's folder before a run writes."""

    def create_io_manager(self, context):  # noqa: ANN001, ANN201 (dagster's signature)
        Path(self.database).parent.mkdir(parents=True, exist_ok=True)
        return super().create_io_manager(context)


def duckdb_io_manager(database: str | None = None) -> DuckDBPandasIOManager:
    """The IO manager writing pandas tables (one partition at a time) into one DuckDB file.

    Without an explicit path the file is ``$ARGASSETS_DUCKDB``, read when a run starts (so a run
    with its own environment writes where it says, even in a process that loaded the code location
    earlier). Its default, ``var/argassets.duckdb``, is exported once at load time so that the
    variable always resolves.
    """
    if database:
        return ArgassetsDuckDBIOManager(database=database, schema="main")
    os.environ.setdefault(DUCKDB_ENV_VAR, str(DEFAULT_DUCKDB_PATH))
    return ArgassetsDuckDBIOManager(database=dg.EnvVar(DUCKDB_ENV_VAR), schema="main")
