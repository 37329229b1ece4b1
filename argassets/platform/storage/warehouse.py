"""Read the results at any time, while runs write: every table is also published as Parquet.

A DuckDB file takes one writer *or* readers: a notebook holding ``duckdb.connect(warehouse,
read_only=True)`` makes every run that writes a table fail on the file lock. So each write to the
DuckDB file is published, in the same transaction's connection right after it commits, as Parquet
files in the layout of :class:`~argassets.platform.storage.table_store.ParquetTableStore` (one file per
table, or per partition of a partitioned table, each replaced whole by an atomic rename), in
``<warehouse>.tables/`` beside the DuckDB file (``var/argassets.tables/`` by default). With
``$ARGASSETS_TABLES`` set, the tables are Parquet files already and are read where they are.

:func:`connect` is the one supported way to read: an in-memory DuckDB connection holding one view
per table over those files. It takes no lock on anything a run writes; each query reads every file
as it was last replaced, so a table (or a partition) is seen either before or after a write, never
half-written. ``argassets sql "QUERY"`` runs one query through it; any Parquet or Arrow reader can
read the files directly.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import duckdb

from argassets.platform.operations.remedies import missing
from argassets.platform.paths import resolve_duckdb_path
from argassets.platform.storage.table_store import DATA_FILE, TABLES_ENV_VAR, ParquetTableStore

__all__ = ["PUBLISHED_SUFFIX", "connect", "publish_slice", "published_dir", "tables_location"]

#: The published Parquet tables of ``x.duckdb`` live in ``x.tables/``.
PUBLISHED_SUFFIX = ".tables"


def published_dir(database: str | os.PathLike[str]) -> Path:
    """Where the tables of the DuckDB file ``database`` are published as Parquet."""
    path = Path(database)
    return path.with_name(path.stem + PUBLISHED_SUFFIX)


def tables_location() -> str:
    """The Parquet tables to read: ``$ARGASSETS_TABLES``, else the published tables of ``$ARGASSETS_DUCKDB``."""
    return os.environ.get(TABLES_ENV_VAR) or str(published_dir(resolve_duckdb_path()))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def publish_slice(
    connection: Any, database: str | os.PathLike[str], schema: str, table: str, partitions: tuple[str, list[str]] | None
) -> list[str]:
    """Publish what a write just committed: the partitions ``(column, keys)`` of a table, or the whole table.

    Reads through ``connection`` (the writer's, which holds the file), so the files hold exactly
    the committed rows. Returns the files written.
    """
    store = ParquetTableStore(published_dir(database))
    source = f"{_quoted(schema)}.{_quoted(table)}"
    if partitions is None:
        return [store.write(table, connection.execute(f"SELECT * FROM {source}").df())]
    column, keys = partitions
    return [
        store.write_partition(
            table, column, key, connection.execute(f"SELECT * FROM {source} WHERE {_quoted(column)} = ?", [key]).df()
        )
        for key in keys
    ]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _view_source(folder: Path) -> str | None:
    """The ``read_parquet`` of one table folder: its file, or every partition file; ``None`` if empty."""
    if (folder / DATA_FILE).exists():
        return f"read_parquet({_literal(str(folder / DATA_FILE))})"
    if any(folder.glob(f"*/{DATA_FILE}")):
        pattern = _literal(str(folder / "*" / DATA_FILE))
        return f"read_parquet({pattern}, union_by_name = true, hive_partitioning = false)"
    return None


def connect(location: str | os.PathLike[str] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per stored table (``SHOW TABLES`` lists them).

    ``location`` defaults to :func:`tables_location`. Views read the files at each query, so a
    connection kept open sees every later write, each table whole. Tables written after the
    connection opened get a view in the next connection.
    """
    root = Path(location or tables_location())
    if "://" in str(location or "") or not root.is_dir():
        raise FileNotFoundError(
            missing(f"no published tables in {root}") + f", or set {TABLES_ENV_VAR} to a local folder that holds them"
        )
    connection = duckdb.connect()
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        source = _view_source(folder)
        if source is not None:
            connection.execute(f"CREATE VIEW {_quoted(folder.name)} AS SELECT * FROM {source}")
    return connection
