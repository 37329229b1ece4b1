"""The warehouse file is for readers: runs write a store of their own and never open it.

DuckDB locks a database file for one writer *or* readers, so a notebook, the DuckDB CLI or DBeaver
holding ``var/argassets.duckdb`` open (``read_only=True`` or not) would make every run that writes
fail. So the file readers know (``$ARGASSETS_DUCKDB``) is a small DuckDB database holding one view
per table over the published Parquet copies (``<warehouse>.tables/``), and the runs' tables live
in a store beside it (:func:`store_path`, ``var/.argassets.store.duckdb``) that nobody else opens.

- A view reads the Parquet files at each query, so a reader holding the file sees every later
  write of the tables it knows on its next query; a table that did not exist when it opened the
  file appears when it reconnects.
- When the set of tables changes, the file is rebuilt under a temporary name and renamed over the
  old one (:func:`refresh_reader_file`): a reader holding the old file keeps it (an open file
  outlives its name) and no lock is ever asked of it.
- An older warehouse that is itself a store (tables, not views) is copied into the store once,
  on the first connection of a run (:func:`ensure_store`); a reader holding it meanwhile keeps
  reading it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from argassets.platform.storage.warehouse import published_dir, view_source

__all__ = [
    "READER_STORAGE_VERSION",
    "STORE_WAIT_S",
    "copy_warehouse",
    "ensure_store",
    "open_store",
    "refresh_reader_file",
    "store_path",
]

#: The oldest DuckDB that can open the reader file (DBeaver and notebooks lag behind).
READER_STORAGE_VERSION = "v1.0.0"
#: How long a run waits for another process to let go of the store before it fails.
STORE_WAIT_S = 600.0
#: Seconds between two "still waiting" messages.
_WAIT_REPORT_S = 60.0
#: Seconds a run waits before it says so: the platform's own runs hold the store for one write at
#: a time, and run-default's parallel runs said "waiting (0 s so far)" 25 times for such waits.
_FIRST_REPORT_S = 2.0
#: The longest pause between two tries for the store: a run goes on within 0.5 s of the store
#: being let go (with 2 s, each of run-default's waits behind another run's write lasted up to 2 s more).
_RETRY_MAX_S = 0.5


def store_path(warehouse: str | os.PathLike[str]) -> Path:
    """The runs' own DuckDB file beside ``warehouse``: ``var/argassets.duckdb`` -> ``var/.argassets.store.duckdb``."""
    path = Path(warehouse)
    return path.with_name(f".{path.stem}.store{path.suffix}")


@contextmanager
def _exclusive(store: Path) -> Iterator[None]:
    """One process at a time moves an old warehouse into the store."""
    store.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{store}.lock", "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _copy_holding_tables(warehouse: Path, copy: Path) -> bool:
    """Copy ``warehouse`` (and its WAL) to ``copy``, fold the WAL in; whether it holds any table."""
    shutil.copyfile(warehouse, copy)
    wal = Path(f"{warehouse}.wal")
    if wal.exists():
        shutil.copyfile(wal, f"{copy}.wal")
    with duckdb.connect(str(copy)) as connection:
        connection.execute("CHECKPOINT")
        found = connection.execute("SELECT count(*) FROM duckdb_tables() WHERE NOT internal").fetchone()
    return bool(found and found[0])


def ensure_store(warehouse: str | os.PathLike[str]) -> bool:
    """Make the runs' store exist when ``warehouse`` is an older store; whether tables were moved.

    The old file is copied (a reader holding it keeps reading it), its WAL replayed in the copy,
    and the copy renamed into place; the warehouse file becomes the reader file at the next write.
    """
    warehouse = Path(warehouse)
    store = store_path(warehouse)
    if store.exists() or not warehouse.exists():
        return False
    with _exclusive(store):
        if store.exists():
            return False
        Path(f"{store}.wal").unlink(missing_ok=True)  # a WAL without its file is from no store
        copy = store.with_name(f"{store.name}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            holds_tables = _copy_holding_tables(warehouse, copy)
            if holds_tables:
                os.replace(copy, store)
        finally:
            copy.unlink(missing_ok=True)
            Path(f"{copy}.wal").unlink(missing_ok=True)
    return holds_tables


def _fingerprint(views: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(views, sort_keys=True).encode()).hexdigest()


def _write_views(target: Path, views: dict[str, str]) -> dict[str, str]:
    """A new DuckDB file at ``target`` with the views that bind; returns those written."""
    written = {}
    with duckdb.connect(str(target), config={"storage_compatibility_version": READER_STORAGE_VERSION}) as connection:
        for name, source in views.items():
            quoted = '"' + name.replace('"', '""') + '"'
            try:
                connection.execute(f"CREATE VIEW {quoted} AS SELECT * FROM {source}")
            except duckdb.Error:
                continue  # a damaged table: left out until its next write (a new fingerprint) rebuilds the file
            written[name] = source
        connection.execute("CHECKPOINT")
    with open(target, "rb+") as handle:
        os.fsync(handle.fileno())
    return written


def refresh_reader_file(warehouse: str | os.PathLike[str]) -> list[str]:
    """Rebuild the reader file when its views no longer match the published tables; the tables left out.

    Called by the writer holding the store, so writers never rebuild it at the same time. Cheap
    when nothing changed (a listing of the tables folder and one small file read).
    """
    warehouse = Path(warehouse)
    tables = published_dir(warehouse)
    folders = sorted(p for p in tables.iterdir() if p.is_dir()) if tables.is_dir() else []
    views = {folder.name: source for folder in folders if (source := view_source(folder)) is not None}
    marker = Path(f"{store_path(warehouse)}.views")
    wanted = _fingerprint(views)
    if warehouse.exists() and marker.exists() and marker.read_text() == wanted:
        return []
    temporary = warehouse.with_name(f".{warehouse.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        written = _write_views(temporary, views)
        # A WAL beside the name belongs to the file it replaces (an older store, moved by
        # ensure_store): replayed onto the views it would corrupt them.
        Path(f"{warehouse}.wal").unlink(missing_ok=True)
        os.replace(temporary, warehouse)
    finally:
        temporary.unlink(missing_ok=True)
        Path(f"{temporary}.wal").unlink(missing_ok=True)
    marker.write_text(_fingerprint(written))
    return sorted(set(views) - set(written))


def copy_warehouse(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Copy a warehouse while no run writes it: the runs' store, the published tables, and a
    reader file of its own (the source's views name the source's folder)."""
    shutil.copyfile(store_path(source), store_path(target))
    shutil.copytree(published_dir(source), published_dir(target), dirs_exist_ok=True)
    refresh_reader_file(target)


def open_store(
    warehouse: str | os.PathLike[str],
    *,
    read_only: bool = False,
    config: dict | None = None,
    on_wait: Callable[[str], None] | None = None,
    wait_s: float = STORE_WAIT_S,
) -> duckdb.DuckDBPyConnection:
    """A connection to the runs' store of ``warehouse``, waiting (and saying so) while another
    process holds it.

    Only runs open the store, one write at a time; a wait longer than ``wait_s`` fails naming the
    process DuckDB reports as the holder.
    """
    store = store_path(warehouse)
    started = time.monotonic()
    reported = _FIRST_REPORT_S - _WAIT_REPORT_S
    delay = 0.1
    while True:
        try:
            return duckdb.connect(str(store), read_only=read_only, config=config or {})
        except (duckdb.IOException, RuntimeError) as exc:
            held = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            waited = time.monotonic() - started
            if "lock" not in held.lower() or waited > wait_s:
                raise
            if on_wait is not None and waited - reported >= _WAIT_REPORT_S:
                reported = waited
                on_wait(
                    f"waiting for the table store {store} ({waited:.0f} s so far, at most {wait_s:.0f} s): "
                    f"another process holds it: {held}. Runs hold it for one write at a time; a program "
                    "that opened it by hand blocks every run until it closes it (readers open "
                    f"{Path(warehouse).name} or use argassets sql instead)"
                )
            time.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX_S)
