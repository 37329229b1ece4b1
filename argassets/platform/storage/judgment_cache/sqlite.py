"""The SQLite judgment store: one file in WAL mode, shared by the processes of one machine."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from argassets.platform.storage.judgment_cache.codec import (
    ADDED_COLUMNS,
    BLANK_CODES,
    KEY_COLUMNS,
    KEY_NAMES,
    STORED_COLUMNS,
    VALUE_COLUMNS,
    VALUE_NAMES,
    Item,
    Row,
    is_final,
    new_rows,
    typed_row,
)
from argassets.platform.storage.judgment_cache.interface import WAIT_REPORT_S, ClaimOutcome, JudgmentStore
from argassets.platform.storage.judgment_cache.location import default_cache_path


def _sqlite_schema() -> list[str]:
    key = ",\n    ".join(f"{name} {sqlite_type} NOT NULL" for name, sqlite_type, _ in KEY_COLUMNS)
    values = ",\n    ".join(f"{name} {sqlite_type}" for name, sqlite_type, _ in VALUE_COLUMNS)
    primary = ", ".join(KEY_NAMES)
    return [
        f"CREATE TABLE IF NOT EXISTS completions (\n    {key},\n    {values},\n"
        f"    stored_at TEXT NOT NULL,\n    PRIMARY KEY ({primary})\n) WITHOUT ROWID",
        f"CREATE TABLE IF NOT EXISTS claims (\n    {key},\n    owner TEXT NOT NULL,\n"
        f"    expires_at REAL NOT NULL,\n    PRIMARY KEY ({primary})\n) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS claims_by_owner ON claims (owner)",
    ]


def _migrate_sqlite(conn: sqlite3.Connection) -> None:
    """Add the columns of :data:`ADDED_COLUMNS` to an older file, once, whoever opens it first."""

    def present() -> set[str]:
        return {row[1] for row in conn.execute("PRAGMA table_info(completions)")}

    if set(ADDED_COLUMNS) <= present():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        missing = [name for name in ADDED_COLUMNS if name not in present()]
        types = {name: sqlite_type for name, sqlite_type, _ in VALUE_COLUMNS}
        for name in missing:
            conn.execute(f"ALTER TABLE completions ADD COLUMN {name} {types[name]} DEFAULT {ADDED_COLUMNS[name][0]}")
        if "answered" in missing:
            blank = "char(" + ", ".join(map(str, BLANK_CODES)) + ")"
            conn.execute(f"UPDATE completions SET answered = 0 WHERE trim(text, {blank}) = ''")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class SQLiteJudgmentStore(JudgmentStore):
    """Completions in one SQLite file (WAL): several processes of one machine may share it.

    Every store and every claim is one ``BEGIN IMMEDIATE`` transaction, so a process killed mid-run
    leaves only whole batches behind. Lease times are this machine's clock (one machine only).

    Parameters
    ----------
    path
        The SQLite file (created with its folder when missing), or ``":memory:"``.
    timeout_s
        How long a writer waits for another process's transaction.
    """

    def __init__(self, path: str | os.PathLike[str], timeout_s: float = 120.0):
        self.path = Path(path) if str(path) != ":memory:" else Path(":memory:")
        self.location = str(path)
        self.timeout_s = timeout_s
        self.wait_report_s = WAIT_REPORT_S
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            if self.location != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.location, timeout=self.timeout_s, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={int(self.timeout_s * 1000)}")
            for statement in _sqlite_schema():
                conn.execute(statement)
            _migrate_sqlite(conn)
            self._conn = conn
            self._pid = os.getpid()
        return self._conn

    def _begin_immediate(self, conn: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE``, waiting in steps of ``wait_report_s`` for another process's write and
        saying so at each step, up to ``timeout_s``."""
        started = time.monotonic()
        conn.execute(f"PRAGMA busy_timeout={int(min(self.wait_report_s, self.timeout_s) * 1000)}")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    waited = time.monotonic() - started
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise
                    if waited >= self.timeout_s:
                        raise sqlite3.OperationalError(
                            f"the judgment cache {self.location} stayed locked by another process for "
                            f"{waited:.0f} s: a run of another partition holds it, or a program opened it by "
                            "hand (close it, or wait for that run and materialize again)"
                        ) from exc
                    if self.on_wait is not None:
                        self.on_wait(
                            f"waiting for the judgment cache {self.location}: another process holds its write "
                            f"lock ({waited:.0f} s so far, at most {self.timeout_s:.0f} s)"
                        )
        finally:
            conn.execute(f"PRAGMA busy_timeout={int(self.timeout_s * 1000)}")

    @contextmanager
    def _transaction(self, immediate: bool = True) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            if immediate:
                self._begin_immediate(conn)
            else:
                conn.execute("BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._pid = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.location, "timeout_s": self.timeout_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["timeout_s"])  # type: ignore[misc]

    _SELECT = "SELECT prompt_sha256, run, " + ", ".join(VALUE_NAMES) + " FROM completions"

    @staticmethod
    def _row(row: Sequence[Any]) -> tuple[Item, Row]:
        return (row[0], int(row[1])), typed_row(row[2:])

    def lookup(self, model: str, sampling_key: str) -> dict[Item, Row]:
        with self._lock:
            rows = (
                self._connection()
                .execute(self._SELECT + " WHERE model = ? AND sampling_key = ?", (model, sampling_key))
                .fetchall()
            )
        return dict(self._row(row) for row in rows)

    # Batches go through temporary tables, so each statement handles a whole batch (tens of
    # thousands of keys for a baseline) instead of one key at a time.

    @staticmethod
    def _load_wanted(conn: sqlite3.Connection, items: Iterable[Item]) -> None:
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS wanted (prompt_sha256 TEXT NOT NULL, run INTEGER NOT NULL, "
            "PRIMARY KEY (prompt_sha256, run)) WITHOUT ROWID"
        )
        conn.execute("DELETE FROM temp.wanted")
        conn.executemany("INSERT OR IGNORE INTO temp.wanted VALUES (?, ?)", [(sha, int(run)) for sha, run in items])

    _SELECT_WANTED = (
        "SELECT c.prompt_sha256, c.run, "
        + ", ".join(f"c.{name}" for name in VALUE_NAMES)
        + " FROM temp.wanted w JOIN completions c ON c.model = ? AND c.sampling_key = ? "
        "AND c.prompt_sha256 = w.prompt_sha256 AND c.run = w.run"
    )

    def _fetch_wanted(self, conn: sqlite3.Connection, model: str, sampling_key: str) -> dict[Item, Row]:
        return dict(self._row(row) for row in conn.execute(self._SELECT_WANTED, (model, sampling_key)))

    def fetch(self, model: str, sampling_key: str, items: Iterable[Item]) -> dict[Item, Row]:
        with self._transaction(immediate=False) as conn:
            self._load_wanted(conn, items)
            return self._fetch_wanted(conn, model, sampling_key)

    def store(self, model, sampling_key, backend, items, owner=None, again=None) -> set[Item]:
        rows = new_rows(model, sampling_key, backend, items, again)
        if not rows:
            return set()
        columns = STORED_COLUMNS
        names = ", ".join(columns)
        values = [row.values() for row in rows]
        replace = ", ".join(f"{name} = excluded.{name}" for name in (*VALUE_NAMES, "stored_at"))
        with self._transaction() as conn:
            before = conn.total_changes
            # A new key is inserted; an existing one is replaced only while it is the non-answer the
            # caller asked again (its attempts one less than ours), so an answer is never replaced.
            conn.executemany(
                f"INSERT INTO completions ({names}) VALUES ({', '.join('?' for _ in columns)}) "
                f"ON CONFLICT ({', '.join(KEY_NAMES)}) DO UPDATE SET {replace} "
                "WHERE completions.answered = 0 AND completions.attempts = excluded.attempts - 1",
                values,
            )
            if conn.total_changes - before == len(rows):
                written = {row.item for row in rows}
            else:
                # Some keys were stored by another writer first (rare: a lease ran out): ours are
                # the rows now holding exactly what we stored, in this transaction.
                self._load_wanted(conn, (row.item for row in rows))
                held = self._fetch_wanted(conn, model, sampling_key)
                written = {row.item for row in rows if held.get(row.item) == row.value}
            if owner is not None:
                conn.executemany(
                    "DELETE FROM claims WHERE model = ? AND sampling_key = ? AND prompt_sha256 = ? AND run = ? "
                    "AND owner = ?",
                    [(model, sampling_key, row.prompt_sha256, row.run, owner) for row in rows],
                )
        return written

    def claim(self, model, sampling_key, items, owner, lease_s, again=None) -> ClaimOutcome:
        outcome = ClaimOutcome()
        if not items:
            return outcome
        again = again or {}
        with self._transaction() as conn:
            now = time.time()
            self._load_wanted(conn, items)
            outcome.stored = {
                item: row
                for item, row in self._fetch_wanted(conn, model, sampling_key).items()
                if is_final(row, again.get(item, 0))
            }
            conn.executemany("DELETE FROM temp.wanted WHERE prompt_sha256 = ? AND run = ?", list(outcome.stored))
            conn.execute(
                "INSERT INTO claims (model, prompt_sha256, sampling_key, run, owner, expires_at) "
                "SELECT ?, prompt_sha256, ?, run, ?, ? FROM temp.wanted WHERE true "
                "ON CONFLICT DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at "
                "WHERE claims.expires_at < ? OR claims.owner = excluded.owner",
                (model, sampling_key, owner, now + lease_s, now),
            )
            outcome.claimed = {
                (sha, int(run))
                for sha, run in conn.execute(
                    "SELECT w.prompt_sha256, w.run FROM temp.wanted w JOIN claims c ON c.model = ? AND "
                    "c.sampling_key = ? AND c.prompt_sha256 = w.prompt_sha256 AND c.run = w.run WHERE c.owner = ?",
                    (model, sampling_key, owner),
                )
            }
        return outcome

    def renew(self, owner: str, lease_s: float) -> int:
        with self._transaction() as conn:
            return conn.execute(
                "UPDATE claims SET expires_at = ? WHERE owner = ?", (time.time() + lease_s, owner)
            ).rowcount

    def release(self, owner: str) -> int:
        with self._transaction() as conn:
            return conn.execute("DELETE FROM claims WHERE owner = ?", (owner,)).rowcount

    def _count(self, table: str, model: str | None) -> int:
        with self._lock:
            conn = self._connection()
            if model is None:
                return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
            return int(conn.execute(f"SELECT COUNT(*) FROM {table} WHERE model = ?", (model,)).fetchone()[0])

    def claims(self, model: str | None = None) -> int:
        return self._count("claims", model)

    def count(self, model: str | None = None) -> int:
        return self._count("completions", model)


class JudgmentCache(SQLiteJudgmentStore):
    """The embedded judgment cache: a SQLite file (default :func:`default_cache_path`)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, timeout_s: float = 120.0):
        super().__init__(path if path is not None else default_cache_path(), timeout_s=timeout_s)
