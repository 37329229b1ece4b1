"""DuckDB storage for every table asset."""

from __future__ import annotations

from dagster_duckdb_pandas import DuckDBPandasIOManager

from argassets.lib.paths import resolve_duckdb_path


def duckdb_io_manager(database: str | None = None) -> DuckDBPandasIOManager:
    """The IO manager writing pandas tables (one partition at a time) into one DuckDB file.

    The database path is resolved when the code location loads (``$ARGASSETS_DUCKDB``, default
    ``var/argassets.duckdb``): the dagster-duckdb IO manager needs a concrete path in its config, and
    a path is no secret, so showing it in the UI is wanted.
    """
    return DuckDBPandasIOManager(database=str(resolve_duckdb_path(database)), schema="main")
