"""Table storage (defined in the platform: :mod:`argassets.platform.resources.storage`)."""

from argassets.platform.resources.storage import (
    ArgassetsDuckDBIOManager,
    ParquetTableIOManager,
    TableStorageIOManager,
    TransactionalDuckDbClient,
    duckdb_io_manager,
    parquet_io_manager,
    read_stored_table,
    table_io_manager,
    wal_of,
)

__all__ = [
    "ArgassetsDuckDBIOManager",
    "ParquetTableIOManager",
    "TableStorageIOManager",
    "TransactionalDuckDbClient",
    "duckdb_io_manager",
    "parquet_io_manager",
    "read_stored_table",
    "table_io_manager",
    "wal_of",
]
