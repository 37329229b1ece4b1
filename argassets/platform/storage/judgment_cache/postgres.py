"""The PostgreSQL judgment store: any number of writers on any number of machines."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

from argassets.platform.secrets import redact, split_credentials
from argassets.platform.storage.judgment_cache.codec import (
    ADDED_COLUMNS,
    BLANK_CODES,
    KEY_COLUMNS,
    KEY_NAMES,
    VALUE_COLUMNS,
    VALUE_NAMES,
    Item,
    Row,
    is_final,
    new_rows,
    typed_row,
)
from argassets.platform.storage.judgment_cache.interface import ClaimOutcome, JudgmentStore
from argassets.platform.storage.judgment_cache.location import is_postgres_url, redact_location

#: Any constant: serialises the first ``CREATE TABLE`` of concurrent writers.
_PG_SCHEMA_LOCK = 0x6172676173736574


def _postgres_schema() -> list[str]:
    key = ",\n    ".join(f"{name} {pg_type} NOT NULL" for name, _, pg_type in KEY_COLUMNS)
    values = ",\n    ".join(f"{name} {pg_type}" for name, _, pg_type in VALUE_COLUMNS)
    primary = ", ".join(KEY_NAMES)
    return [
        f"CREATE TABLE IF NOT EXISTS completions (\n    {key},\n    {values},\n"
        f"    stored_at TEXT NOT NULL,\n    PRIMARY KEY ({primary})\n)",
        f"CREATE TABLE IF NOT EXISTS claims (\n    {key},\n    owner TEXT NOT NULL,\n"
        f"    expires_at TIMESTAMPTZ NOT NULL,\n    PRIMARY KEY ({primary})\n)",
        "CREATE INDEX IF NOT EXISTS claims_by_owner ON claims (owner)",
    ]


_PG_ARRAY_TYPES = {
    "TEXT": "text[]",
    "INTEGER": "integer[]",
    "BIGINT": "bigint[]",
    "DOUBLE PRECISION": "float8[]",
    "BOOLEAN": "boolean[]",
}


def _pg_array_type(pg_type: str) -> str:
    return _PG_ARRAY_TYPES[pg_type.replace(" NOT NULL", "")]


def _migrate_postgres(cur: Any) -> None:
    """Add the columns of :data:`ADDED_COLUMNS` to an older schema (under the schema lock)."""
    cur.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = 'completions'"
    )
    present = {row[0] for row in cur.fetchall()}
    missing = [name for name in ADDED_COLUMNS if name not in present]
    types = {name: pg_type for name, _, pg_type in VALUE_COLUMNS}
    for name in missing:
        cur.execute(f"ALTER TABLE completions ADD COLUMN {name} {types[name]} DEFAULT {ADDED_COLUMNS[name][1]}")
    if "answered" in missing:
        blank = " || ".join(f"chr({code})" for code in BLANK_CODES)
        cur.execute(f"UPDATE completions SET answered = FALSE WHERE btrim(text, {blank}) = ''")


class PostgresJudgmentStore(JudgmentStore):
    """Completions in PostgreSQL: any number of writers on any number of machines.

    Each store and each claim is one transaction of one statement batch; rows are written in one
    order (prompt hash, run) by every writer, and a transaction that still meets a deadlock or a
    serialisation failure is retried. Lease times are the server's clock, so machines need not
    agree on the time.

    Parameters
    ----------
    url
        ``postgresql://user:password@host:port/database`` (libpq syntax; ``?sslmode=...`` etc.).
    retries
        Attempts of a transaction that fails with a deadlock, serialisation failure or a dropped
        connection.
    """

    def __init__(self, url: str, retries: int = 5, connect_timeout_s: float = 30.0):
        if not is_postgres_url(url):
            raise ValueError(f"not a postgresql:// URL: {redact_location(url)}")
        self.url = url
        self.location = redact_location(url)
        self.retries = retries
        self.connect_timeout_s = connect_timeout_s
        self._lock = threading.RLock()
        self._conn: Any = None
        self._pid: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"url": self.url, "retries": self.retries, "connect_timeout_s": self.connect_timeout_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["url"], state["retries"], state["connect_timeout_s"])  # type: ignore[misc]

    def _connection(self) -> Any:
        import psycopg

        if self._conn is None or self._pid != os.getpid() or self._conn.closed:
            # libpq never sees the password inside a URL (it may hold '@', '/', '#' unescaped).
            url, credentials = split_credentials(self.url)
            user, password = credentials or (None, None)
            try:
                conn = psycopg.connect(
                    url,
                    autocommit=False,
                    connect_timeout=int(self.connect_timeout_s),
                    application_name="argassets-judgment-cache",
                    user=user,
                    password=password,
                )
            except psycopg.OperationalError as exc:
                raise ConnectionError(f"judgment cache {self.location}: cannot connect: {redact(str(exc))}") from None
            with conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_SCHEMA_LOCK,))
                for statement in _postgres_schema():
                    cur.execute(statement)
                _migrate_postgres(cur)
            conn.commit()
            self._conn = conn
            self._pid = os.getpid()
        return self._conn

    def _run(self, work: Any) -> Any:
        """Run ``work(cursor)`` in one transaction; retry deadlocks and lost connections."""
        import psycopg
        from psycopg import errors

        retryable = (errors.DeadlockDetected, errors.SerializationFailure, psycopg.OperationalError)
        with self._lock:
            for attempt in range(self.retries + 1):
                conn = self._connection()
                try:
                    with conn.cursor() as cur:
                        result = work(cur)
                    conn.commit()
                    return result
                except retryable:
                    try:
                        conn.rollback()
                    except psycopg.Error:
                        self._conn = None
                    if conn.closed:
                        self._conn = None
                    if attempt == self.retries:
                        raise
                    time.sleep(min(2.0, 0.05 * 2**attempt))
                except BaseException:
                    if not conn.closed:
                        conn.rollback()
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._pid = None

    _SELECT = "SELECT prompt_sha256, run, " + ", ".join(VALUE_NAMES) + " FROM completions"

    @staticmethod
    def _row(row: Sequence[Any]) -> tuple[Item, Row]:
        return (row[0], int(row[1])), typed_row(row[2:])

    def lookup(self, model: str, sampling_key: str) -> dict[Item, Row]:
        def work(cur: Any) -> list[Any]:
            cur.execute(self._SELECT + " WHERE model = %s AND sampling_key = %s", (model, sampling_key))
            return cur.fetchall()

        return dict(self._row(row) for row in self._run(work))

    def _fetch(self, cur: Any, model: str, sampling_key: str, items: Sequence[Item]) -> dict[Item, Row]:
        if not items:
            return {}
        cur.execute(
            self._SELECT + " JOIN unnest(%s::text[], %s::integer[]) AS wanted(w_sha, w_run) "
            "ON prompt_sha256 = w_sha AND run = w_run WHERE model = %s AND sampling_key = %s",
            ([sha for sha, _ in items], [int(run) for _, run in items], model, sampling_key),
        )
        return dict(self._row(row) for row in cur.fetchall())

    def fetch(self, model: str, sampling_key: str, items: Iterable[Item]) -> dict[Item, Row]:
        wanted = sorted({(sha, int(run)) for sha, run in items})
        return self._run(lambda cur: self._fetch(cur, model, sampling_key, wanted))

    def store(self, model, sampling_key, backend, items, owner=None, again=None) -> set[Item]:
        rows = new_rows(model, sampling_key, backend, items, again)
        if not rows:
            return set()
        typed = [(name, pg_type) for name, _, pg_type in KEY_COLUMNS + VALUE_COLUMNS] + [("stored_at", "TEXT")]
        names = [name for name, _ in typed]
        arrays = [[row.column(name) for row in rows] for name in names]
        unnest = ", ".join(f"%s::{_pg_array_type(pg_type)}" for _, pg_type in typed)
        replace = ", ".join(f"{name} = EXCLUDED.{name}" for name in (*VALUE_NAMES, "stored_at"))
        # As in SQLite: only the non-answer the caller asked again is replaced, never an answer.
        insert = (
            f"INSERT INTO completions ({', '.join(names)}) "
            f"SELECT * FROM unnest({unnest}) AS new_rows({', '.join(names)}) ORDER BY prompt_sha256, run "
            f"ON CONFLICT ({', '.join(KEY_NAMES)}) DO UPDATE SET {replace} "
            "WHERE NOT completions.answered AND completions.attempts = EXCLUDED.attempts - 1 "
            "RETURNING prompt_sha256, run"
        )

        def work(cur: Any) -> set[Item]:
            cur.execute(insert, arrays)
            written = {(sha, int(run)) for sha, run in cur.fetchall()}
            if owner is not None:
                cur.execute(
                    "DELETE FROM claims USING unnest(%s::text[], %s::integer[]) AS done(d_sha, d_run) "
                    "WHERE model = %s AND sampling_key = %s AND prompt_sha256 = d_sha AND run = d_run "
                    "AND owner = %s",
                    ([row.prompt_sha256 for row in rows], [row.run for row in rows], model, sampling_key, owner),
                )
            return written

        return self._run(work)

    def claim(self, model, sampling_key, items, owner, lease_s, again=None) -> ClaimOutcome:
        wanted = sorted({(sha, int(run)) for sha, run in items})
        if not wanted:
            return ClaimOutcome()
        seen = again or {}

        def settled(held: dict[Item, Row]) -> dict[Item, Row]:
            return {item: row for item, row in held.items() if is_final(row, seen.get(item, 0))}

        def work(cur: Any) -> ClaimOutcome:
            # A claim lost in a server crash costs nothing (it expires, or is taken again): no fsync.
            cur.execute("SET LOCAL synchronous_commit = off")
            cur.execute(
                "INSERT INTO claims (model, prompt_sha256, sampling_key, run, owner, expires_at) "
                "SELECT %s, w_sha, %s, w_run, %s, clock_timestamp() + make_interval(secs => %s) "
                "FROM unnest(%s::text[], %s::integer[]) AS wanted(w_sha, w_run) ORDER BY w_sha, w_run "
                "ON CONFLICT (model, prompt_sha256, sampling_key, run) DO UPDATE "
                "SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at "
                "WHERE claims.expires_at < clock_timestamp() OR claims.owner = EXCLUDED.owner "
                "RETURNING prompt_sha256, run",
                (model, sampling_key, owner, float(lease_s), [s for s, _ in wanted], [r for _, r in wanted]),
            )
            claimed = sorted((sha, int(run)) for sha, run in cur.fetchall())
            # Items stored since the caller looked (their claim was already dropped): not to send.
            stored = settled(self._fetch(cur, model, sampling_key, claimed))
            if stored:
                cur.execute(
                    "DELETE FROM claims USING unnest(%s::text[], %s::integer[]) AS done(d_sha, d_run) "
                    "WHERE model = %s AND sampling_key = %s AND prompt_sha256 = d_sha AND run = d_run "
                    "AND owner = %s",
                    ([s for s, _ in stored], [r for _, r in stored], model, sampling_key, owner),
                )
            unclaimed = [item for item in wanted if item not in set(claimed)]
            stored.update(settled(self._fetch(cur, model, sampling_key, unclaimed)))
            return ClaimOutcome(claimed=set(claimed) - set(stored), stored=stored)

        return self._run(work)

    def renew(self, owner: str, lease_s: float) -> int:
        def work(cur: Any) -> int:
            cur.execute("SET LOCAL synchronous_commit = off")
            cur.execute(
                "UPDATE claims SET expires_at = clock_timestamp() + make_interval(secs => %s) WHERE owner = %s",
                (float(lease_s), owner),
            )
            return int(cur.rowcount)

        return self._run(work)

    def release(self, owner: str) -> int:
        def work(cur: Any) -> int:
            cur.execute("DELETE FROM claims WHERE owner = %s", (owner,))
            return int(cur.rowcount)

        return self._run(work)

    def _count(self, table: str, model: str | None) -> int:
        def work(cur: Any) -> int:
            if model is None:
                cur.execute(f"SELECT COUNT(*) FROM {table}")
            else:
                cur.execute(f"SELECT COUNT(*) FROM {table} WHERE model = %s", (model,))
            return int(cur.fetchone()[0])

        return self._run(work)

    def claims(self, model: str | None = None) -> int:
        return self._count("claims", model)

    def count(self, model: str | None = None) -> int:
        return self._count("completions", model)
