"""Read the results at any time, while runs write: every table is also published as Parquet (docs/operations.md)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import uuid
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from argassets.platform.operations.remedies import missing
from argassets.platform.paths import resolve_duckdb_path
from argassets.platform.storage.table_health import Damage, find_damage
from argassets.platform.storage.table_store import DATA_FILE, TABLES_ENV_VAR, ParquetTableStore

__all__ = [
    "PUBLISHED_SUFFIX",
    "READ_STATEMENTS",
    "QueryResult",
    "ReadOnlyConnection",
    "RefusedQuery",
    "check_read_only",
    "connect",
    "named_tables",
    "publish_slice",
    "published_dir",
    "tables_location",
    "view_source",
]

#: The published Parquet tables of ``x.duckdb`` live in ``x.tables/``.
PUBLISHED_SUFFIX = ".tables"
#: The statement types the read path runs (DuckDB's classification: SHOW, DESCRIBE, SUMMARIZE,
#: FROM-first and VALUES queries are SELECTs).
READ_STATEMENTS = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})


class RefusedQuery(PermissionError):
    """A statement the read-only path does not run (one line, for the terminal)."""


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

    Reads through ``connection`` (the writer's, which holds the store), so the files hold exactly
    the committed rows; ``database`` is the warehouse file whose ``.tables/`` folder they go to.
    Returns the files written.
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


def view_source(folder: Path) -> str | None:
    """The ``read_parquet`` of one table folder: its file, or every partition file; ``None`` if empty."""
    if (folder / DATA_FILE).exists():
        return f"read_parquet({_literal(str(folder / DATA_FILE))})"
    if any(folder.glob(f"*/{DATA_FILE}")):
        pattern = _literal(str(folder / "*" / DATA_FILE))
        return f"read_parquet({pattern}, union_by_name = true, hive_partitioning = false)"
    return None


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def check_read_only(query: str) -> None:
    """Refuse ``query`` unless DuckDB's parser finds exactly one SELECT (or EXPLAIN) statement in it."""
    statements = duckdb.extract_statements(query)
    if len(statements) != 1:
        raise RefusedQuery(f"one statement per call, this holds {len(statements)}: the read path is read-only")
    kind = statements[0].type
    if kind not in READ_STATEMENTS:
        raise RefusedQuery(
            f"{kind.name} statements are refused: the read path runs one SELECT (or EXPLAIN) over the "
            "published tables and cannot attach, copy, create, change or set anything"
        )


def named_tables(query: str) -> set[str]:
    """The table names a SELECT mentions, from DuckDB's parse tree (none for other statements)."""
    with duckdb.connect() as parser:
        serialised = parser.execute("SELECT json_serialize_sql(?)", [query]).fetchall()[0][0]
    tree = json.loads(serialised)
    names: set[str] = set()
    pending: list[Any] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE":
                names.add(str(node.get("table_name")))
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return names


class QueryResult:
    """The rows of one read-only query (no DuckDB relation or cursor is handed out: either can run
    further SQL of any kind).

    ``df``, ``arrow``, ``fetch_record_batch`` and ``show`` run the query each time they are
    called; ``fetchone``, ``fetchmany`` and ``fetchall`` read one streamed execution in turn, as a
    DB-API cursor does.
    """

    def __init__(self, connection: duckdb.DuckDBPyConnection, query: str, params: Any = None):
        self._relation = connection.sql(query, params=params)
        self._pending: Iterator[tuple] | None = None

    @property
    def columns(self) -> list[str]:
        return list(self._relation.columns)

    @property
    def types(self) -> list[str]:
        return [str(t) for t in self._relation.types]

    def df(self) -> Any:
        return self._relation.df()

    def arrow(self) -> Any:
        return self._relation.to_arrow_table()

    def fetch_record_batch(self, rows_per_batch: int = 100_000) -> Any:
        """A pyarrow ``RecordBatchReader``: the result streamed, never held whole."""
        return self._relation.fetch_record_batch(rows_per_batch)

    def show(self, **options: Any) -> None:
        self._relation.show(**options)

    def _rows(self) -> Iterator[tuple]:
        if self._pending is None:
            self._pending = (
                row
                for batch in self._relation.fetch_record_batch(10_000)
                for row in zip(*(column.to_pylist() for column in batch.columns), strict=True)
            )
        return self._pending

    def fetchall(self) -> list[tuple]:
        return list(self._rows())

    def fetchone(self) -> tuple | None:
        return next(self._rows(), None)

    def fetchmany(self, size: int = 1) -> list[tuple]:
        return list(itertools.islice(self._rows(), size))


class ReadOnlyConnection:
    """An in-memory DuckDB connection to the published tables that reads and cannot write.

    ``sql`` (also ``execute``, ``query``) runs one SELECT or EXPLAIN; DuckDB can open no file
    outside the tables folder and its configuration is locked. ``damaged`` lists the tables left
    out because a file of theirs is damaged; ``tables`` the views it holds.
    """

    def __init__(self, connection: duckdb.DuckDBPyConnection, root: Path, damaged: list[Damage], spill: Path):
        self._connection = connection
        self.root = root
        self.damaged = damaged
        self._cleanup = weakref.finalize(self, _close, connection, spill)

    @property
    def tables(self) -> list[str]:
        views = self._connection.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
        return [row[0] for row in views]

    def sql(self, query: str, params: Any = None) -> QueryResult:
        """Run one read-only statement; :class:`RefusedQuery` for anything else."""
        check_read_only(query)
        return QueryResult(self._connection, query, params)

    execute = sql
    query = sql

    def close(self) -> None:
        self._cleanup()

    def __enter__(self) -> ReadOnlyConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close(connection: duckdb.DuckDBPyConnection, spill: Path) -> None:
    connection.close()
    shutil.rmtree(spill, ignore_errors=True)


def _guarded(root: Path) -> tuple[duckdb.DuckDBPyConnection, Path]:
    """An in-memory DuckDB that may open files under ``root`` (and its own spill folder) only."""
    spill = Path(tempfile.gettempdir()) / f"argassets-read-{uuid.uuid4().hex[:12]}"
    connection = duckdb.connect(
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "temp_directory": str(spill),
        }
    )
    connection.execute("SET enable_progress_bar = false")  # it would print into the output (CSV on stdout)
    connection.execute("SET allowed_directories = ?", [[str(root) + os.sep]])
    connection.execute("SET enable_external_access = false")
    connection.execute("SET lock_configuration = true")
    return connection, spill


def connect(location: str | os.PathLike[str] | None = None, *, verify: bool = True) -> ReadOnlyConnection:
    """A read-only connection with one view per stored table (``SHOW TABLES`` lists them).

    ``location`` defaults to :func:`tables_location`. Views read the files at each query, so a
    connection kept open sees every later write, each table whole; tables written after it opened
    get a view in the next connection. ``verify`` checks every file first (its digest, else its
    footer): a damaged table gets no view and is listed in ``damaged``.
    """
    root = Path(location or tables_location())
    if "://" in str(location or "") or not root.is_dir():
        raise FileNotFoundError(
            missing(f"no published tables in {root}") + f", or set {TABLES_ENV_VAR} to a local folder that holds them"
        )
    root = root.resolve()
    connection, spill = _guarded(root)
    damaged: list[Damage] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        found = find_damage(folder, DATA_FILE) if verify else []
        source = None if found else view_source(folder)
        if source is not None:
            try:
                connection.execute(f"CREATE VIEW {_quoted(folder.name)} AS SELECT * FROM {source}")
            except duckdb.Error as exc:
                found = [Damage(folder.name, folder, f"cannot be read ({_one_line(exc)})")]
        damaged += found
    return ReadOnlyConnection(connection, root, damaged, spill)
