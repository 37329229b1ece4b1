"""Table storage (defined in the platform: :mod:`argassets.platform.resources.storage`)."""

from argassets.platform.resources.storage import (
    ArgassetsDuckDBIOManager,
    ParquetTableIOManager,
    TableStorageIOManager,
    duckdb_io_manager,
    parquet_io_manager,
    read_stored_table,
    table_io_manager,
)

__all__ = [
    "ArgassetsDuckDBIOManager",
    "ParquetTableIOManager",
    "TableStorageIOManager",
    "duckdb_io_manager",
    "parquet_io_manager",
    "read_stored_table",
    "table_io_manager",
]
