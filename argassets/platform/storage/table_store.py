"""Tables as Parquet files on any fsspec location, one file per partition, read through DuckDB (docs/operations.md)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import quote, unquote

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from argassets.platform.storage.table_health import record_digest

__all__ = ["TABLES_ENV_VAR", "ParquetTableStore", "partition_dirname"]

#: Environment variable selecting Parquet table storage (a folder or an fsspec URL); unset: DuckDB.
TABLES_ENV_VAR = "ARGASSETS_TABLES"
DATA_FILE = "data.parquet"


def partition_dirname(column: str, key: str) -> str:
    """``<column>=<key>`` with the key percent-encoded (every byte but ``[A-Za-z0-9_.~-]``)."""
    encoded = quote(key, safe="")
    if encoded in ("", ".", ".."):
        encoded = encoded.replace(".", "%2E") or "%00empty"
    return f"{column}={encoded}"


def _key_of(dirname: str) -> str:
    value = dirname.split("=", 1)[1]
    return "" if value == "%00empty" else unquote(value)


class ParquetTableStore:
    """Tables under ``root`` (a local folder, or any fsspec URL).

    Parameters
    ----------
    root
        ``/data/tables``, ``file:///data/tables``, ``s3://bucket/argassets/tables``, ...
    storage_options
        Passed to fsspec for remote locations (credentials usually come from the environment).
    """

    def __init__(self, root: str | os.PathLike[str], storage_options: dict | None = None):
        import fsspec
        from fsspec.implementations.local import LocalFileSystem

        text = str(root)
        self.fs, path = fsspec.core.url_to_fs(text, **(storage_options or {}))
        self.local = isinstance(self.fs, LocalFileSystem)
        self.root = str(Path(path).resolve()) if self.local else path.rstrip("/")
        self.location = self.root if self.local else text

    # -- paths ---------------------------------------------------------------------------------

    def _join(self, *parts: str) -> str:
        return "/".join([self.root.rstrip("/"), *parts])

    def table_dir(self, table: str) -> str:
        if not table or "/" in table or table in (".", ".."):
            raise ValueError(f"not a table name: {table!r}")
        return self._join(table)

    def file_of(self, table: str, partition: tuple[str, str] | None = None) -> str:
        """The file of a table, or of one partition ``(column, key)`` of it."""
        if partition is None:
            return self._join(table, DATA_FILE)
        column, key = partition
        return self._join(table, partition_dirname(column, key), DATA_FILE)

    # -- writing -------------------------------------------------------------------------------

    def _write(self, frame: pd.DataFrame, target: str) -> None:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        folder = target.rsplit("/", 1)[0]
        if self.local:
            os.makedirs(folder, exist_ok=True)
            temporary = f"{folder}/.{uuid.uuid4().hex}.tmp"
            try:
                pq.write_table(table, temporary, write_page_checksum=True)
                with open(temporary, "rb+") as handle:
                    os.fsync(handle.fileno())
                record_digest(temporary)  # moves with the file: readers find damage by it
                os.replace(temporary, target)
            finally:
                if os.path.exists(temporary):
                    os.unlink(temporary)
        else:
            self.fs.makedirs(folder, exist_ok=True)
            with self.fs.open(target, "wb") as handle:  # one PUT: visible whole or not at all
                pq.write_table(table, handle, write_page_checksum=True)

    def write(self, table: str, frame: pd.DataFrame) -> str:
        """Replace an unpartitioned table; returns its file."""
        target = self.file_of(table)
        self.table_dir(table)
        self._write(frame, target)
        return target

    def write_partition(self, table: str, column: str, key: str, frame: pd.DataFrame) -> str:
        """Replace one partition of a table; ``frame`` must hold only rows of that key in ``column``."""
        if column not in frame.columns:
            raise ValueError(f"table {table}: partition column '{column}' is missing from the rows")
        values = set(frame[column].dropna().unique().tolist())
        if values - {key}:
            raise ValueError(f"table {table}: rows of partition {key!r} carry other keys: {sorted(values - {key})[:5]}")
        self.table_dir(table)
        target = self.file_of(table, (column, key))
        self._write(frame, target)
        return target

    # -- reading -------------------------------------------------------------------------------

    def exists(self, table: str, partition: tuple[str, str] | None = None) -> bool:
        return bool(self.fs.exists(self.file_of(table, partition)))

    def partitions(self, table: str, column: str) -> list[str]:
        """The keys of every stored partition of a table."""
        folder = self.table_dir(table)
        if not self.fs.exists(folder):
            return []
        keys = []
        for entry in self.fs.ls(folder, detail=False):
            name = str(entry).rstrip("/").rsplit("/", 1)[-1]
            if name.startswith(f"{column}=") and self.fs.exists(f"{str(entry).rstrip('/')}/{DATA_FILE}"):
                keys.append(_key_of(name))
        return sorted(keys)

    def _read(self, files: Sequence[str]) -> pd.DataFrame:
        with duckdb.connect() as con:
            if self.local:
                return con.execute("SELECT * FROM read_parquet(?, union_by_name = true)", [list(files)]).df()
            tables = []
            for path in files:
                with self.fs.open(path, "rb") as handle:
                    tables.append(pq.read_table(handle))
            arrow = pa.concat_tables(tables, promote_options="default")
            return con.from_arrow(arrow).df()

    def read(self, table: str) -> pd.DataFrame:
        """An unpartitioned table (a clear error naming it when it was never written)."""
        target = self.file_of(table)
        if not self.fs.exists(target):
            raise FileNotFoundError(f"table '{table}' is not materialised in {self.location} (no {target})")
        return self._read([target])

    def read_partitions(self, table: str, column: str, keys: Iterable[str] | None = None) -> pd.DataFrame | None:
        """Rows of the given partitions (default: all stored) that exist; ``None`` when the table
        has no partition at all.

        A partition never written contributes no rows, as with the DuckDB IO manager's
        ``WHERE <column> IN (...)``. Each file is read whole, as it was last replaced.
        """
        stored = self.partitions(table, column)
        wanted = stored if keys is None else [key for key in keys if key in set(stored)]
        files = [self.file_of(table, (column, key)) for key in wanted]
        if not files:
            if not stored:
                return None
            # Partitions exist, none of those asked for: no rows, with the table's columns.
            return self._read([self.file_of(table, (column, stored[0]))]).iloc[0:0]
        return self._read(files)
