"""The judgment cache: completions stored by (model, prompt hash, sampling key, run), resume-safe.

SQLite in WAL mode, so several processes on one machine may write at once, and a process killed
mid-run loses at most the batch in flight.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from argassets.platform.judging import Completion, is_non_answer, utc_now

#: Environment variable naming the judgment cache file.
CACHE_ENV_VAR = "ARGASSETS_CACHE"


def default_cache_path() -> Path:
    """``$ARGASSETS_CACHE``, else ``judgment_cache.sqlite`` next to the DuckDB file."""
    from_env = os.environ.get(CACHE_ENV_VAR)
    if from_env:
        return Path(from_env)
    from argassets.platform.paths import resolve_duckdb_path

    return resolve_duckdb_path().parent / "judgment_cache.sqlite"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    model TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    sampling_key TEXT NOT NULL,
    run INTEGER NOT NULL,
    text TEXT NOT NULL,
    seed INTEGER,
    latency_s REAL NOT NULL,
    requested_at TEXT NOT NULL,
    completed_at TEXT NOT NULL,
    backend TEXT NOT NULL,
    stored_at TEXT NOT NULL,
    answered INTEGER NOT NULL DEFAULT 1,
    attempts INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (model, prompt_sha256, sampling_key, run)
) WITHOUT ROWID
"""
#: Columns added after the first release of the cache; an older file gets them on first use.
_ADDED_COLUMNS = {
    "answered": "INTEGER NOT NULL DEFAULT 1",
    "attempts": "INTEGER NOT NULL DEFAULT 1",
}


class JudgmentCache:
    """Completions on disk, keyed by ``(model, prompt_sha256, sampling_key, run)``.

    SQLite in WAL mode: readers never block the writer, several processes (partitions running at
    once) can share one file, and every :meth:`put_many` is one transaction, so a process killed
    mid-run leaves only whole batches behind. The first answer stored for a key wins; storing it
    again is a no-op, so nothing is ever duplicated. A non-answer (``answered = 0``: the backend got
    an empty or unparsable body, or no choices) is kept only until the next attempt for its key,
    which replaces it and counts ``attempts``.

    Parameters
    ----------
    path
        The SQLite file (created with its folder when missing); default :func:`default_cache_path`.
    timeout_s
        How long a writer waits for another process's transaction.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, timeout_s: float = 120.0):
        self.path = Path(path) if path is not None else default_cache_path()
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), timeout=self.timeout_s, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={int(self.timeout_s * 1000)}")
            conn.execute(_SCHEMA)
            present = {row[1] for row in conn.execute("PRAGMA table_info(completions)")}
            for column, definition in _ADDED_COLUMNS.items():
                if column not in present:
                    try:
                        conn.execute(f"ALTER TABLE completions ADD COLUMN {column} {definition}")
                    except sqlite3.OperationalError as exc:  # another process added it first
                        if "duplicate column" not in str(exc):
                            raise
            self._conn = conn
            self._pid = os.getpid()
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._pid = None

    def __enter__(self) -> JudgmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "timeout_s": self.timeout_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A cache travels to worker processes as its location; each opens its own connection.
        type(self).__init__(self, state["path"], state["timeout_s"])

    def lookup(self, model: str, sampling_key: str) -> dict[tuple[str, int], dict[str, Any]]:
        """Every stored completion of one model and sampling key, by ``(prompt_sha256, run)``."""
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    "SELECT prompt_sha256, run, text, seed, latency_s, requested_at, completed_at, "
                    "backend, answered, attempts FROM completions WHERE model = ? AND sampling_key = ?",
                    (model, sampling_key),
                )
                .fetchall()
            )
        return {
            (row[0], int(row[1])): {
                "text": row[2],
                "seed": row[3],
                "latency_s": row[4],
                "requested_at": row[5],
                "completed_at": row[6],
                "backend": row[7],
                "answered": bool(row[8]),
                "attempts": int(row[9]),
            }
            for row in rows
        }

    def put_many(
        self,
        model: str,
        sampling_key: str,
        backend: str,
        items: Iterable[tuple[str, Completion]],
    ) -> int:
        """Store ``(prompt_sha256, completion)`` pairs in one transaction; returns rows written.

        A key that holds an answer is never overwritten. A key that holds a non-answer is replaced
        by the new completion (answer or not), and its ``attempts`` grow by one.
        """
        stored_at = utc_now()
        rows = [
            (
                model,
                sha,
                sampling_key,
                int(c.run),
                c.text,
                c.seed,
                float(c.latency_s),
                c.requested_at,
                c.completed_at,
                backend,
                stored_at,
                0 if is_non_answer(c.text, c.answered) else 1,
            )
            for sha, c in items
        ]
        if not rows:
            return 0
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                before = conn.total_changes
                conn.executemany(
                    "INSERT INTO completions (model, prompt_sha256, sampling_key, run, text, "
                    "seed, latency_s, requested_at, completed_at, backend, stored_at, answered, attempts) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1) "
                    "ON CONFLICT (model, prompt_sha256, sampling_key, run) DO UPDATE SET "
                    "text = excluded.text, seed = excluded.seed, latency_s = excluded.latency_s, "
                    "requested_at = excluded.requested_at, completed_at = excluded.completed_at, "
                    "backend = excluded.backend, stored_at = excluded.stored_at, "
                    "answered = excluded.answered, attempts = completions.attempts + 1 "
                    "WHERE completions.answered = 0",
                    rows,
                )
                written = conn.total_changes - before
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return written

    def count(self, model: str | None = None) -> int:
        """Number of stored completions (of one model, or all)."""
        with self._lock:
            conn = self._connection()
            if model is None:
                return int(conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
            return int(conn.execute("SELECT COUNT(*) FROM completions WHERE model = ?", (model,)).fetchone()[0])
