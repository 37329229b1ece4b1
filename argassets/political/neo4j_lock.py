"""The lease that lets one Neo4j export of the knowledge base run at a time, held in the database.

A lease whose holder died expires after ``lease_s`` and can then be taken over (see
:mod:`argassets.political.neo4j_export` and ``docs/knowledge_base.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from neo4j import Driver

from argassets.political.neo4j_graph import STATE_LABEL, STATE_NAME, Neo4jExportError

#: How long a lease lasts without renewal (each batch renews it).
DEFAULT_LEASE_S = 120.0

#: How long an export waits for another one to finish before it gives up.
DEFAULT_LOCK_WAIT_S = 900.0


class ExportLockedError(Neo4jExportError):
    """Another export holds the lease and did not release it in time."""


class LeaseLostError(Neo4jExportError):
    """This export's lease expired and another export took it: nothing is switched."""


def now_ms() -> int:
    return int(time.time() * 1000)


# Each query first writes the KbExport node (``lock_touched_ms``), which takes its exclusive lock,
# and only then reads the lease: a read before the lock could see a lease as free that another
# transaction is taking at that moment (Neo4j's documented lost-update pattern).
ACQUIRE_QUERY = (
    f"MERGE (k:{STATE_LABEL} {{name: $name}}) "
    f"SET k.lock_touched_ms = $now "
    f"WITH k, (k.lock_holder IS NULL OR k.lock_expires_ms < $now) AS free "
    f"SET k.lock_holder = CASE WHEN free THEN $holder ELSE k.lock_holder END, "
    f"k.lock_expires_ms = CASE WHEN free THEN $now + $lease_ms ELSE k.lock_expires_ms END, "
    f"k.lock_since = CASE WHEN free THEN $now ELSE k.lock_since END "
    f"RETURN k.lock_holder AS holder, k.lock_expires_ms AS expires, k.lock_since AS since, free"
)

RENEW_QUERY = (
    f"MATCH (k:{STATE_LABEL} {{name: $name}}) SET k.lock_touched_ms = $now "
    f"WITH k WHERE k.lock_holder = $holder "
    f"SET k.lock_expires_ms = $now + $lease_ms RETURN count(k) AS n"
)

RELEASE_QUERY = (
    f"MATCH (k:{STATE_LABEL} {{name: $name}}) SET k.lock_touched_ms = $now "
    f"WITH k WHERE k.lock_holder = $holder "
    f"REMOVE k.lock_holder, k.lock_expires_ms, k.lock_since RETURN count(k) AS n"
)


def acquire_lock(
    driver: Driver,
    database: str,
    holder: str,
    lease_s: float = DEFAULT_LEASE_S,
    wait_s: float = DEFAULT_LOCK_WAIT_S,
    poll_s: float = 0.5,
    log: Callable[[str], None] | None = None,
) -> float:
    """Take the export lease (waiting up to ``wait_s`` for another holder); returns the seconds waited.

    The ``MERGE`` on the uniquely constrained ``KbExport`` node write-locks it, so two acquiring
    transactions serialise and exactly one sees the lease free.

    Raises
    ------
    ExportLockedError
        Another export still holds an unexpired lease after ``wait_s`` (names it and since when).
    """
    started = time.monotonic()
    announced = False
    while True:
        records, _, _ = driver.execute_query(
            ACQUIRE_QUERY,
            name=STATE_NAME,
            holder=holder,
            now=now_ms(),
            lease_ms=int(lease_s * 1000),
            database_=database,
        )
        record = records[0]
        if record["holder"] == holder:
            return time.monotonic() - started
        waited = time.monotonic() - started
        if waited >= wait_s:
            since = (
                time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(record["since"] / 1000)) if record["since"] else "?"
            )
            raise ExportLockedError(
                f"another Neo4j export ({record['holder']}, since {since}) holds the lock of the knowledge base; "
                f"waited {waited:.0f} s. It expires {max(0, record['expires'] - now_ms()) / 1000:.0f} s from now "
                "if its holder is gone"
            )
        if log is not None and not announced:
            log(f"neo4j export: waiting for the export {record['holder']} to finish")
            announced = True
        time.sleep(poll_s)


def renew_lock(driver: Driver, database: str, holder: str, lease_s: float = DEFAULT_LEASE_S) -> None:
    """Extend the lease; raises :class:`LeaseLostError` when it is no longer this holder's."""
    records, _, _ = driver.execute_query(
        RENEW_QUERY, name=STATE_NAME, holder=holder, now=now_ms(), lease_ms=int(lease_s * 1000), database_=database
    )
    if not records or records[0]["n"] != 1:
        raise LeaseLostError(f"export {holder} lost its lease of the knowledge base (expired and taken over)")


def release_lock(driver: Driver, database: str, holder: str) -> bool:
    """Give the lease back (a no-op when it is no longer this holder's); True when released."""
    records, _, _ = driver.execute_query(
        RELEASE_QUERY, name=STATE_NAME, holder=holder, now=now_ms(), database_=database
    )
    return bool(records and records[0]["n"] == 1)


def lock_state(driver: Driver, database: str) -> dict[str, object]:
    """The ``KbExport`` node's properties (``live_stamp``, lock fields), or ``{}``."""
    records, _, _ = driver.execute_query(
        f"MATCH (k:{STATE_LABEL} {{name: $name}}) RETURN properties(k) AS p", name=STATE_NAME, database_=database
    )
    return dict(records[0]["p"]) if records else {}
