"""Where judgments are kept: SQLite on one machine, PostgreSQL when many machines share the cache.

The cache holds one row per key ``(model, prompt_sha256, sampling_key, run)`` (:data:`KEY_COLUMNS`,
the one place that defines it for both backends) and, beside it, *claims*: which writer is
currently asking the judge for which key, until when. A writer claims keys before sending them,
sends only what it claimed, and stores each finished batch in one transaction that also drops its
claims, so that:

- two runs of the same partition never send the same key twice (the second waits for the first,
  and takes over a claim only when its lease ran out, i.e. the first writer died);
- the first answer stored for a key wins; a later store of the same key changes nothing, and
  :meth:`JudgmentStore.store` says which keys it really wrote, so a caller can return what the
  cache holds rather than what it sent;
- a *non-answer* (:func:`argassets.platform.judging.interface.is_non_answer`; column ``answered`` false) is
  kept with its ``attempts``. A caller may ask it again: it claims and stores the key *as the
  non-answer it saw* (``again``: key -> attempts seen), so the store replaces only that very
  non-answer, never an answer, and counts one more attempt; whoever comes second finds the key
  changed and takes what is there. How many attempts to allow is the caller's policy
  (:data:`argassets.platform.judging.incremental.MAX_ATTEMPTS`);
- a writer killed mid-batch (SIGKILL, lost node) loses only that batch: its claims expire after
  ``lease_s`` seconds unless a live writer renews them (:meth:`JudgmentStore.renew`).

Backends
--------
:class:`SQLiteJudgmentStore` (the embedded default) is one SQLite file in WAL mode: several
processes on one machine may share it; it is not safe on a network file system.
:class:`PostgresJudgmentStore` is selected when ``$ARGASSETS_CACHE`` is a ``postgresql://`` URL:
any number of processes on any number of machines. :func:`open_judgment_cache` picks one from a
location; :class:`JudgmentCache` is the SQLite one at a path. Nothing here imports Dagster.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from argassets.platform.judging.interface import Completion, is_non_answer, utc_now
from argassets.platform.secrets import redact, redact_url, split_credentials

__all__ = [
    "CACHE_ENV_VAR",
    "CachedRow",
    "ClaimOutcome",
    "ITEM_COLUMNS",
    "JudgmentCache",
    "JudgmentStore",
    "KEY_COLUMNS",
    "PostgresJudgmentStore",
    "SCOPE_COLUMNS",
    "SQLiteJudgmentStore",
    "VALUE_COLUMNS",
    "default_cache_location",
    "default_cache_path",
    "is_postgres_url",
    "new_owner_id",
    "open_judgment_cache",
    "redact_location",
]

#: Environment variable naming the judgment cache: a SQLite file, or a ``postgresql://`` URL.
CACHE_ENV_VAR = "ARGASSETS_CACHE"

#: The cache key: ``(name, SQLite type, PostgreSQL type)``. A lookup is per *scope* (the columns of
#: :data:`SCOPE_COLUMNS`); within a scope an *item* is :data:`ITEM_COLUMNS`. Change the key here.
KEY_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("model", "TEXT", "TEXT"),
    ("prompt_sha256", "TEXT", "TEXT"),
    ("sampling_key", "TEXT", "TEXT"),
    ("run", "INTEGER", "INTEGER"),
)
SCOPE_COLUMNS: tuple[str, ...] = ("model", "sampling_key")
ITEM_COLUMNS: tuple[str, ...] = ("prompt_sha256", "run")
#: What is stored for a key, in the order of :meth:`JudgmentStore.lookup`'s dictionaries.
VALUE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("text", "TEXT NOT NULL", "TEXT NOT NULL"),
    ("seed", "INTEGER", "BIGINT"),
    ("latency_s", "REAL NOT NULL", "DOUBLE PRECISION NOT NULL"),
    ("requested_at", "TEXT NOT NULL", "TEXT NOT NULL"),
    ("completed_at", "TEXT NOT NULL", "TEXT NOT NULL"),
    ("backend", "TEXT NOT NULL", "TEXT NOT NULL"),
    ("answered", "INTEGER NOT NULL", "BOOLEAN NOT NULL"),
    ("attempts", "INTEGER NOT NULL", "INTEGER NOT NULL"),
    ("label_probs", "TEXT", "TEXT"),
)
#: Columns added after the first release, with the value existing rows get: ``(SQLite, PostgreSQL)``.
#: ``answered`` is then set from the stored text (empty means non-answer; whether the backend
#: flagged a row was not kept, so :func:`is_non_answer` can judge only that); others are answers.
#: ``label_probs`` (JSON of label -> raw probability) is NULL for rows stored before it existed.
_ADDED_COLUMNS: dict[str, tuple[str, str]] = {
    "answered": ("1", "TRUE"),
    "attempts": ("1", "1"),
    "label_probs": ("NULL", "NULL"),
}
_VALUE_NAMES = tuple(name for name, _, _ in VALUE_COLUMNS)
_KEY_NAMES = tuple(name for name, _, _ in KEY_COLUMNS)
assert set(SCOPE_COLUMNS) | set(ITEM_COLUMNS) == set(_KEY_NAMES)
#: The columns of a stored row, in the order of ``_NewRow.values``.
STORED_COLUMNS: tuple[str, ...] = (*_KEY_NAMES, *_VALUE_NAMES, "stored_at")


class CachedRow(TypedDict):
    """A stored completion, by value column (see :data:`VALUE_COLUMNS`)."""

    text: str
    seed: int | None
    latency_s: float
    requested_at: str
    completed_at: str
    backend: str
    answered: bool
    attempts: int
    label_probs: str | None


assert tuple(CachedRow.__annotations__) == _VALUE_NAMES
Row = CachedRow
#: ``(prompt_sha256, run)``.
Item = tuple[str, int]
#: Keys asked again, each with the attempts of the non-answer the caller saw.
Again = Mapping[Item, int]


#: Recent encodings and decodings of label probabilities: a baseline's few distributions repeat on
#: every one of its hundreds of thousands of rows, and JSON each time cost a quarter of its judging.
_ENCODED: dict[tuple[tuple[str, str], ...], str] = {}
_DECODED: dict[str, dict[str, float]] = {}
_MEMO_SIZE = 4096


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[key] = value


def encode_label_probs(label_probs: Mapping[str, float] | None) -> str | None:
    """The stored form of :attr:`Completion.label_probs`: canonical JSON, or ``None``."""
    if label_probs is None:
        return None
    # Keyed by each value's repr, what JSON writes: equal keys give the very same text (even -0.0, nan).
    key = tuple((str(k), repr(float(v))) for k, v in label_probs.items())
    encoded = _ENCODED.get(key)
    if encoded is None:
        encoded = json.dumps({str(k): float(v) for k, v in label_probs.items()}, sort_keys=True, separators=(",", ":"))
        _remember(_ENCODED, key, encoded)
    return encoded


def decode_label_probs(stored: str | None) -> dict[str, float] | None:
    """:attr:`Completion.label_probs` from its stored form (a fresh dictionary every call)."""
    if stored is None:
        return None
    decoded = _DECODED.get(stored)
    if decoded is None:
        decoded = {str(k): float(v) for k, v in json.loads(stored).items()}
        _remember(_DECODED, stored, decoded)
    return dict(decoded)


def _settled(row: Row, seen: int) -> bool:
    """Whether a stored row is final for a caller: anything but the very non-answer it asks again."""
    return bool(row["answered"]) or int(row["attempts"]) != seen


def _typed(values: Sequence[Any]) -> Row:
    text, seed, latency_s, requested_at, completed_at, backend, answered, attempts, label_probs = values
    return CachedRow(
        text=text,
        seed=seed,
        latency_s=latency_s,
        requested_at=requested_at,
        completed_at=completed_at,
        backend=backend,
        answered=bool(answered),
        attempts=int(attempts),
        label_probs=label_probs,
    )


def new_owner_id() -> str:
    """A claim owner: host, process and a random part (one per judging call)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def is_postgres_url(location: str | os.PathLike[str] | None) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def redact_location(location: str) -> str:
    """A location fit for logs and metadata: a URL's password replaced by ``***``."""
    return redact_url(location)


@dataclass
class ClaimOutcome:
    """What :meth:`JudgmentStore.claim` found for the keys asked for.

    ``claimed``: now held by the caller (send them); ``stored``: in the cache and final for the
    caller (use them); the rest are held by a live writer (wait, then ask again).
    """

    claimed: set[Item] = field(default_factory=set)
    stored: dict[Item, Row] = field(default_factory=dict)


class JudgmentStore:
    """The interface of both backends (see the module docstring for the semantics)."""

    location: str

    def lookup(self, model: str, sampling_key: str) -> dict[Item, Row]:
        """Every stored completion of one scope, by ``(prompt_sha256, run)``."""
        raise NotImplementedError

    def store(
        self,
        model: str,
        sampling_key: str,
        backend: str,
        items: Iterable[tuple[str, Completion]],
        owner: str | None = None,
        again: Again | None = None,
    ) -> set[Item]:
        """Store ``(prompt_sha256, completion)`` pairs and drop ``owner``'s claims on them, in one
        transaction. Returns the items really written.

        An item already stored is left as it is, except an item of ``again`` whose stored row is
        still the non-answer with the attempts given there: that one is replaced and its attempts
        grow by one. A completion is stored as a non-answer when :func:`is_non_answer` says so.
        """
        raise NotImplementedError

    def fetch(self, model: str, sampling_key: str, items: Iterable[Item]) -> dict[Item, Row]:
        """The stored rows of some items of a scope (absent items are left out)."""
        raise NotImplementedError

    def claim(
        self,
        model: str,
        sampling_key: str,
        items: Sequence[Item],
        owner: str,
        lease_s: float,
        again: Again | None = None,
    ) -> ClaimOutcome:
        """Claim the items for ``owner`` for ``lease_s`` seconds, in one transaction.

        An item is claimed when nobody holds it, when ``owner`` already does, or when its holder's
        lease ran out. Items already stored are returned in :attr:`ClaimOutcome.stored` instead,
        except an item of ``again`` still stored as the non-answer seen (same attempts): that one
        is claimed like a missing item, to be asked again.
        """
        raise NotImplementedError

    def renew(self, owner: str, lease_s: float) -> int:
        """Extend every claim of ``owner`` to ``lease_s`` seconds from now; returns how many."""
        raise NotImplementedError

    def release(self, owner: str) -> int:
        """Drop every claim of ``owner`` (it stopped without storing them); returns how many."""
        raise NotImplementedError

    def claims(self, model: str | None = None) -> int:
        """Number of claims held (of one model, or all), expired or not."""
        raise NotImplementedError

    def count(self, model: str | None = None) -> int:
        """Number of stored completions (of one model, or all)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- shared behaviour ---------------------------------------------------------------------

    @contextmanager
    def lease(self, owner: str, lease_s: float) -> Iterator[None]:
        """Keep ``owner``'s claims alive while the block runs, and drop what is left at the end.

        A daemon thread renews the claims every ``lease_s / 3`` seconds; when the process dies the
        renewals stop and the claims expire, so other writers take the work over.
        """
        stop = threading.Event()

        def heartbeat() -> None:
            while not stop.wait(lease_s / 3.0):
                try:
                    self.renew(owner, lease_s)
                except Exception:  # noqa: BLE001 - a failed renewal is retried at the next beat
                    continue

        thread = threading.Thread(target=heartbeat, name=f"judgment-cache-lease-{owner}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self.release(owner)

    def __enter__(self) -> JudgmentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class _NewRow:
    """A completion about to be stored: its key, its value and when it was stored."""

    model: str
    prompt_sha256: str
    sampling_key: str
    run: int
    value: CachedRow
    stored_at: str

    @property
    def item(self) -> Item:
        return (self.prompt_sha256, self.run)

    def column(self, name: str) -> Any:
        """The value of one column of the ``completions`` table."""
        if name in _VALUE_NAMES:
            return cast(Mapping[str, Any], self.value)[name]
        return getattr(self, name)

    def values(self) -> tuple[Any, ...]:
        """Every column of the ``completions`` table: :data:`STORED_COLUMNS`, in that order."""
        value = cast(Mapping[str, Any], self.value)
        return (
            self.model,
            self.prompt_sha256,
            self.sampling_key,
            self.run,
            *(value[name] for name in _VALUE_NAMES),
            self.stored_at,
        )


def _rows(
    model: str, sampling_key: str, backend: str, items: Iterable[tuple[str, Completion]], again: Again | None
) -> list[_NewRow]:
    again = again or {}
    stored_at = utc_now()
    seen: set[Item] = set()
    rows = []
    for sha, c in items:
        item = (sha, int(c.run))
        if item in seen:
            continue
        seen.add(item)
        value = CachedRow(
            text=c.text,
            seed=None if c.seed is None else int(c.seed),
            latency_s=float(c.latency_s),
            requested_at=c.requested_at,
            completed_at=c.completed_at,
            backend=backend,
            answered=not is_non_answer(c.text, c.answered),
            attempts=again.get(item, 0) + 1,
            label_probs=encode_label_probs(c.label_probs),
        )
        rows.append(_NewRow(model, sha, sampling_key, int(c.run), value, stored_at))
    # One order for every writer: concurrent transactions lock rows in the same sequence.
    rows.sort(key=lambda row: row.item)
    return rows


# --- SQLite --------------------------------------------------------------------------------------


def _sqlite_schema() -> list[str]:
    key = ",\n    ".join(f"{name} {sqlite_type} NOT NULL" for name, sqlite_type, _ in KEY_COLUMNS)
    values = ",\n    ".join(f"{name} {sqlite_type}" for name, sqlite_type, _ in VALUE_COLUMNS)
    primary = ", ".join(_KEY_NAMES)
    return [
        f"CREATE TABLE IF NOT EXISTS completions (\n    {key},\n    {values},\n"
        f"    stored_at TEXT NOT NULL,\n    PRIMARY KEY ({primary})\n) WITHOUT ROWID",
        f"CREATE TABLE IF NOT EXISTS claims (\n    {key},\n    owner TEXT NOT NULL,\n"
        f"    expires_at REAL NOT NULL,\n    PRIMARY KEY ({primary})\n) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS claims_by_owner ON claims (owner)",
    ]


#: Whitespace as ``str.strip`` sees it in ASCII: text made only of these is empty.
_BLANK_CODES = (32, 9, 10, 11, 12, 13)


def _migrate_sqlite(conn: sqlite3.Connection) -> None:
    """Add the columns of :data:`_ADDED_COLUMNS` to an older file, once, whoever opens it first."""

    def present() -> set[str]:
        return {row[1] for row in conn.execute("PRAGMA table_info(completions)")}

    if set(_ADDED_COLUMNS) <= present():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        missing = [name for name in _ADDED_COLUMNS if name not in present()]
        types = {name: sqlite_type for name, sqlite_type, _ in VALUE_COLUMNS}
        for name in missing:
            conn.execute(f"ALTER TABLE completions ADD COLUMN {name} {types[name]} DEFAULT {_ADDED_COLUMNS[name][0]}")
        if "answered" in missing:
            blank = "char(" + ", ".join(map(str, _BLANK_CODES)) + ")"
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

    @contextmanager
    def _transaction(self, immediate: bool = True) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
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

    _SELECT = "SELECT prompt_sha256, run, " + ", ".join(_VALUE_NAMES) + " FROM completions"

    @staticmethod
    def _row(row: Sequence[Any]) -> tuple[Item, Row]:
        return (row[0], int(row[1])), _typed(row[2:])

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
        + ", ".join(f"c.{name}" for name in _VALUE_NAMES)
        + " FROM temp.wanted w JOIN completions c ON c.model = ? AND c.sampling_key = ? "
        "AND c.prompt_sha256 = w.prompt_sha256 AND c.run = w.run"
    )

    def _fetch_wanted(self, conn: sqlite3.Connection, model: str, sampling_key: str) -> dict[Item, Row]:
        return dict(self._row(row) for row in conn.execute(self._SELECT_WANTED, (model, sampling_key)))

    def fetch(self, model: str, sampling_key: str, items: Iterable[Item]) -> dict[Item, Row]:
        with self._transaction(immediate=False) as conn:
            self._load_wanted(conn, items)
            return self._fetch_wanted(conn, model, sampling_key)

    def store(self, model, sampling_key, backend, items, owner=None, again=None) -> set[Item]:  # noqa: ANN001
        rows = _rows(model, sampling_key, backend, items, again)
        if not rows:
            return set()
        columns = STORED_COLUMNS
        names = ", ".join(columns)
        values = [row.values() for row in rows]
        replace = ", ".join(f"{name} = excluded.{name}" for name in (*_VALUE_NAMES, "stored_at"))
        with self._transaction() as conn:
            before = conn.total_changes
            # A new key is inserted; an existing one is replaced only while it is the non-answer the
            # caller asked again (its attempts one less than ours), so an answer is never replaced.
            conn.executemany(
                f"INSERT INTO completions ({names}) VALUES ({', '.join('?' for _ in columns)}) "
                f"ON CONFLICT ({', '.join(_KEY_NAMES)}) DO UPDATE SET {replace} "
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

    def claim(self, model, sampling_key, items, owner, lease_s, again=None) -> ClaimOutcome:  # noqa: ANN001
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
                if _settled(row, again.get(item, 0))
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


# --- PostgreSQL ----------------------------------------------------------------------------------

#: Any constant: serialises the first ``CREATE TABLE`` of concurrent writers.
_PG_SCHEMA_LOCK = 0x6172676173736574


def _postgres_schema() -> list[str]:
    key = ",\n    ".join(f"{name} {pg_type} NOT NULL" for name, _, pg_type in KEY_COLUMNS)
    values = ",\n    ".join(f"{name} {pg_type}" for name, _, pg_type in VALUE_COLUMNS)
    primary = ", ".join(_KEY_NAMES)
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
    """Add the columns of :data:`_ADDED_COLUMNS` to an older schema (under the schema lock)."""
    cur.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = 'completions'"
    )
    present = {row[0] for row in cur.fetchall()}
    missing = [name for name in _ADDED_COLUMNS if name not in present]
    types = {name: pg_type for name, _, pg_type in VALUE_COLUMNS}
    for name in missing:
        cur.execute(f"ALTER TABLE completions ADD COLUMN {name} {types[name]} DEFAULT {_ADDED_COLUMNS[name][1]}")
    if "answered" in missing:
        blank = " || ".join(f"chr({code})" for code in _BLANK_CODES)
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

    _SELECT = "SELECT prompt_sha256, run, " + ", ".join(_VALUE_NAMES) + " FROM completions"

    @staticmethod
    def _row(row: Sequence[Any]) -> tuple[Item, Row]:
        return (row[0], int(row[1])), _typed(row[2:])

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

    def store(self, model, sampling_key, backend, items, owner=None, again=None) -> set[Item]:  # noqa: ANN001
        rows = _rows(model, sampling_key, backend, items, again)
        if not rows:
            return set()
        typed = [(name, pg_type) for name, _, pg_type in KEY_COLUMNS + VALUE_COLUMNS] + [("stored_at", "TEXT")]
        names = [name for name, _ in typed]
        arrays = [[row.column(name) for row in rows] for name in names]
        unnest = ", ".join(f"%s::{_pg_array_type(pg_type)}" for _, pg_type in typed)
        replace = ", ".join(f"{name} = EXCLUDED.{name}" for name in (*_VALUE_NAMES, "stored_at"))
        # As in SQLite: only the non-answer the caller asked again is replaced, never an answer.
        insert = (
            f"INSERT INTO completions ({', '.join(names)}) "
            f"SELECT * FROM unnest({unnest}) AS new_rows({', '.join(names)}) ORDER BY prompt_sha256, run "
            f"ON CONFLICT ({', '.join(_KEY_NAMES)}) DO UPDATE SET {replace} "
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

    def claim(self, model, sampling_key, items, owner, lease_s, again=None) -> ClaimOutcome:  # noqa: ANN001
        wanted = sorted({(sha, int(run)) for sha, run in items})
        if not wanted:
            return ClaimOutcome()
        seen = again or {}

        def settled(held: dict[Item, Row]) -> dict[Item, Row]:
            return {item: row for item, row in held.items() if _settled(row, seen.get(item, 0))}

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


def default_cache_location() -> str:
    """``$ARGASSETS_CACHE`` (a SQLite file or a ``postgresql://`` URL), else
    ``judgment_cache.sqlite`` next to the DuckDB file."""
    from_env = os.environ.get(CACHE_ENV_VAR)
    if from_env:
        return from_env
    from argassets.platform.paths import resolve_duckdb_path

    return str(resolve_duckdb_path().parent / "judgment_cache.sqlite")


def default_cache_path() -> Path:
    """The SQLite judgment cache file (:func:`default_cache_location` when it is not a URL)."""
    location = default_cache_location()
    if is_postgres_url(location):
        raise ValueError(f"{CACHE_ENV_VAR} is a PostgreSQL URL, not a file: {redact_location(location)}")
    return Path(location)


class JudgmentCache(SQLiteJudgmentStore):
    """The embedded judgment cache: a SQLite file (default :func:`default_cache_path`)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, timeout_s: float = 120.0):
        super().__init__(path if path is not None else default_cache_path(), timeout_s=timeout_s)


def open_judgment_cache(location: str | os.PathLike[str], timeout_s: float = 120.0) -> JudgmentStore:
    """The cache at ``location``: PostgreSQL for a ``postgresql://`` URL, else a SQLite file."""
    if is_postgres_url(location):
        return PostgresJudgmentStore(str(location))
    return SQLiteJudgmentStore(location, timeout_s=timeout_s)
