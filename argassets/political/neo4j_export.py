"""Export of the political knowledge base to Neo4j with the official driver.

Plain functions, no Dagster. Readers never see a mixed graph, and one export runs at a time:

1. **Lock.** The export takes a lease held in the database itself (node ``KbExport {name:
   'political_kb'}``: ``lock_holder``, ``lock_expires_ms``), acquired in a write transaction, so
   two exports from any machines serialise on it; the lease is renewed with every batch and
   released at the end. A lease whose holder died (process or server killed) expires after
   ``lease_s`` and can then be taken over.
2. **Stage.** Arguments are written as ``ArgumentStaging`` nodes under a new export stamp
   (``kb_export``), and their relations between those nodes, in ``UNWIND`` batches with ``MERGE``
   on ``(argument_id, kb_export)`` (a retried batch writes nothing twice). The visible graph, the
   ``Argument`` nodes, is untouched meanwhile; the leftovers of an export that died are removed
   first.
3. **Check.** The staged node and per-type relationship counts must equal the tables; otherwise
   the export stops and the visible graph stays the previous one.
4. **Switch** in one transaction, which first checks that the lease is still this export's: the
   previous ``Argument`` nodes become ``ArgumentRetired``, the staged ones ``Argument``, and
   ``KbExport.live_stamp`` records the stamp. Readers see the old graph or the new one.
5. **Prune** the retired nodes in batches (invisible to ``MATCH (:Argument)`` queries), release.

Every query takes its data as parameters; relationship types, the only identifiers spliced into
query text, come from the fixed tuple :data:`RELATIONSHIP_TYPES`.
"""

from __future__ import annotations

import math
import os
import re
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError, ConfigurationError, Neo4jError, ServiceUnavailable

from argassets.platform.secrets import redact

ARGUMENT_LABEL = "Argument"
ARGUMENT_KEY = "argument_id"
RELATIONSHIP_TYPES = ("SUPPORTS", "ATTACKS", "IS_A_REPHRASE_OF", "TRANSITIONS_TO")
#: Statistic columns of ``political_model_stats`` / ``political_ensembles`` exported per system.
STAT_COLUMNS = ("mean", "var", "std", "na_count", "prob_na")
CONSTRAINT_NAME = "argument_id_unique"
STAGING_LABEL = "ArgumentStaging"
RETIRED_LABEL = "ArgumentRetired"
STATE_LABEL = "KbExport"
STATE_NAME = "political_kb"
STAGING_CONSTRAINT_NAME = "argument_staging_key"
STATE_CONSTRAINT_NAME = "kb_export_name_unique"
DEFAULT_BATCH_SIZE = 10000
#: Property that every node and relationship written by one export carries (its export stamp).
EXPORT_STAMP = "kb_export"
#: How long a lease lasts without renewal (each batch renews it).
DEFAULT_LEASE_S = 120.0
#: How long an export waits for another one to finish before it gives up.
DEFAULT_LOCK_WAIT_S = 900.0


class Neo4jExportError(RuntimeError):
    """The export could not run (server unreachable, credentials rejected, bad settings)."""


@dataclass(frozen=True)
class Neo4jSettings:
    """Where to connect. ``password`` is excluded from ``repr`` so it never reaches a log line."""

    uri: str
    user: str
    password: str = field(repr=False)
    database: str = "neo4j"

    def describe(self) -> dict[str, str]:
        """The settings that are safe to show (no password)."""
        return {"uri": redact(self.uri), "user": self.user, "database": self.database}


def connect(settings: Neo4jSettings, timeout_s: float = 10.0) -> Driver:
    """A driver whose connectivity and credentials have been verified.

    Raises
    ------
    Neo4jExportError
        With a message that names the URI, user and database (never the password) and says which
        of: unreachable server, rejected credentials, malformed settings.
    """
    where = f"{redact(settings.uri)} (user {settings.user!r}, database {settings.database!r})"
    try:
        driver = GraphDatabase.driver(
            settings.uri,
            auth=(settings.user, settings.password),
            connection_timeout=timeout_s,
            connection_acquisition_timeout=timeout_s,
            max_transaction_retry_time=timeout_s,
        )
    except (ConfigurationError, ValueError) as exc:
        raise Neo4jExportError(f"invalid Neo4j settings for {where}: {redact(str(exc))}; check NEO4J_URI") from None
    try:
        driver.verify_connectivity()
        driver.execute_query("RETURN 1", database_=settings.database)
    except AuthError:
        driver.close()
        raise Neo4jExportError(
            f"Neo4j at {redact(settings.uri)} rejected the credentials of user {settings.user!r}; check NEO4J_USER and NEO4J_PASSWORD"
        ) from None
    except ServiceUnavailable as exc:
        driver.close()
        raise Neo4jExportError(
            f"cannot reach Neo4j at {where}: {redact(str(exc))}; is the server running? check NEO4J_URI"
        ) from None
    except Neo4jError as exc:
        driver.close()
        raise Neo4jExportError(
            f"Neo4j at {where} refused the session: {exc.code}: {exc.message}; check NEO4J_DATABASE"
        ) from None
    except OSError as exc:
        driver.close()
        raise Neo4jExportError(f"cannot reach Neo4j at {where}: {redact(str(exc))}") from None
    return driver


def ensure_constraints(driver: Driver, database: str) -> None:
    """Unique ``Argument.argument_id`` (the index every reader uses), unique ``(argument_id,
    kb_export)`` of staged nodes (the index every staged MERGE/MATCH uses), unique ``KbExport.name``."""
    for query in (
        f"CREATE CONSTRAINT {CONSTRAINT_NAME} IF NOT EXISTS FOR (a:{ARGUMENT_LABEL}) REQUIRE a.{ARGUMENT_KEY} IS UNIQUE",
        f"CREATE CONSTRAINT {STAGING_CONSTRAINT_NAME} IF NOT EXISTS FOR (a:{STAGING_LABEL}) "
        f"REQUIRE (a.{ARGUMENT_KEY}, a.{EXPORT_STAMP}) IS UNIQUE",
        f"CREATE CONSTRAINT {STATE_CONSTRAINT_NAME} IF NOT EXISTS FOR (k:{STATE_LABEL}) REQUIRE k.name IS UNIQUE",
    ):
        driver.execute_query(query, database_=database)


def system_property_prefix(system: str) -> str:
    """``"GPT-4o Mini"`` -> ``"pred_gpt_4o_mini"``: a property-name-safe prefix per model/ensemble."""
    slug = re.sub(r"[^0-9a-z]+", "_", system.casefold()).strip("_")
    if not slug:
        raise ValueError(f"system name {system!r} has no letters or digits")
    return f"pred_{slug}"


def _clean(value: object) -> object:
    """Neo4j-storable value: NaN/None -> None (the property is then absent), numpy -> Python."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def prediction_properties(stats: Iterable[pd.DataFrame]) -> dict[str, dict[str, object]]:
    """Per argument id, the ``pred_<system>_<stat>`` properties of every stats table given.

    Each table needs ``system``, ``argument_id`` and the columns of :data:`STAT_COLUMNS` that it has.
    Two systems whose names map to one prefix are an error (the properties would overwrite).
    """
    props: dict[str, dict[str, object]] = {}
    prefixes: dict[str, str] = {}
    for table in stats:
        if table is None or len(table) == 0:
            continue
        missing = {"system", "argument_id"} - set(table.columns)
        if missing:
            raise ValueError(f"prediction stats table lacks columns {sorted(missing)}")
        columns = [c for c in STAT_COLUMNS if c in table.columns]
        for system in table["system"].astype(str).unique():
            prefix = system_property_prefix(system)
            if prefixes.setdefault(prefix, system) != system:
                raise ValueError(f"systems {prefixes[prefix]!r} and {system!r} share the property prefix {prefix!r}")
        for record in table[["system", "argument_id", *columns]].itertuples(index=False):
            prefix = system_property_prefix(str(record[0]))
            target = props.setdefault(str(record[1]), {})
            for name, value in zip(columns, record[2:], strict=False):
                target[f"{prefix}_{name}"] = _clean(value)
    return props


def argument_rows(arguments: pd.DataFrame, predictions: Mapping[str, Mapping[str, object]] | None = None) -> list[dict]:
    """``{"id": ..., "props": {...}}`` per argument: every table column plus its prediction stats."""
    predictions = predictions or {}
    columns = list(arguments.columns)
    rows = []
    for values in arguments.itertuples(index=False, name=None):
        props = {c: _clean(v) for c, v in zip(columns, values, strict=False)}
        props.update(predictions.get(str(props[ARGUMENT_KEY]), {}))
        rows.append({"id": str(props[ARGUMENT_KEY]), "props": {k: v for k, v in props.items() if v is not None}})
    return rows


def relation_rows(relations: pd.DataFrame, relationship_type: str) -> list[dict]:
    subset = relations[relations["relation"] == relationship_type]
    return [
        {"s": str(s), "t": str(t), "aif": str(a), "nodeset": str(n)}
        for s, t, a, n in zip(
            subset["source_id"], subset["target_id"], subset["aif_node_id"], subset["nodeset"], strict=False
        )
    ]


def _batches(rows: Sequence[dict], size: int) -> Iterable[Sequence[dict]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


NODE_QUERY = (
    f"UNWIND $rows AS row "
    f"MERGE (a:{STAGING_LABEL} {{{ARGUMENT_KEY}: row.id, {EXPORT_STAMP}: $stamp}}) "
    f"SET a = row.props, a.{EXPORT_STAMP} = $stamp"
)


def relationship_query(relationship_type: str) -> str:
    """The staged-relationship query of one type (between the staged nodes of ``$stamp``)."""
    if relationship_type not in RELATIONSHIP_TYPES:
        raise ValueError(f"unknown relationship type {relationship_type!r}")
    return (
        f"UNWIND $rows AS row "
        f"MATCH (s:{STAGING_LABEL} {{{ARGUMENT_KEY}: row.s, {EXPORT_STAMP}: $stamp}}) "
        f"MATCH (t:{STAGING_LABEL} {{{ARGUMENT_KEY}: row.t, {EXPORT_STAMP}: $stamp}}) "
        f"MERGE (s)-[r:{relationship_type} {{aif_node_id: row.aif}}]->(t) "
        f"SET r.nodeset = row.nodeset, r.{EXPORT_STAMP} = $stamp"
    )


@dataclass
class ExportResult:
    stamp: str = ""
    nodes: int = 0
    relationships: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    leftover_nodes_removed: int = 0
    stale_nodes_removed: int = 0
    stale_relationships_removed: int = 0
    prediction_properties: int = 0
    lock_wait_s: float = 0.0
    seconds: float = 0.0


class ExportHooks:
    """Points where a caller acts during :func:`export_kb`; these do nothing. Crash and race tests
    inject a subclass (an exception raised here leaves the previous graph visible)."""

    def before_batch(self, batches_written: int) -> None:
        """Called before each staging batch is written."""

    def before_switch(self) -> None:
        """Called after the counts check, before the switch."""


NO_HOOKS = ExportHooks()


class ExportLockedError(Neo4jExportError):
    """Another export holds the lease and did not release it in time."""


class LeaseLostError(Neo4jExportError):
    """This export's lease expired and another export took it: nothing is switched."""


class CountsMismatchError(Neo4jExportError):
    """The staged graph's counts differ from the tables: nothing is switched."""


def new_stamp() -> str:
    """A unique export stamp: UTC time, host and a random suffix."""
    return (
        f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    )


def _now_ms() -> int:
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
            now=_now_ms(),
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
                f"waited {waited:.0f} s. It expires {max(0, record['expires'] - _now_ms()) / 1000:.0f} s from now "
                "if its holder is gone"
            )
        if log is not None and not announced:
            log(f"neo4j export: waiting for the export {record['holder']} to finish")
            announced = True
        time.sleep(poll_s)


def renew_lock(driver: Driver, database: str, holder: str, lease_s: float = DEFAULT_LEASE_S) -> None:
    """Extend the lease; raises :class:`LeaseLostError` when it is no longer this holder's."""
    records, _, _ = driver.execute_query(
        RENEW_QUERY, name=STATE_NAME, holder=holder, now=_now_ms(), lease_ms=int(lease_s * 1000), database_=database
    )
    if not records or records[0]["n"] != 1:
        raise LeaseLostError(f"export {holder} lost its lease of the knowledge base (expired and taken over)")


def release_lock(driver: Driver, database: str, holder: str) -> bool:
    """Give the lease back (a no-op when it is no longer this holder's); True when released."""
    records, _, _ = driver.execute_query(
        RELEASE_QUERY, name=STATE_NAME, holder=holder, now=_now_ms(), database_=database
    )
    return bool(records and records[0]["n"] == 1)


def lock_state(driver: Driver, database: str) -> dict[str, object]:
    """The ``KbExport`` node's properties (``live_stamp``, lock fields), or ``{}``."""
    records, _, _ = driver.execute_query(
        f"MATCH (k:{STATE_LABEL} {{name: $name}}) RETURN properties(k) AS p", name=STATE_NAME, database_=database
    )
    return dict(records[0]["p"]) if records else {}


def _delete_in_batches(driver: Driver, database: str, label: str, batch_size: int) -> int:
    if label not in (STAGING_LABEL, RETIRED_LABEL):
        raise ValueError(f"refusing to bulk-delete label {label!r}")
    removed = 0
    while True:
        records, _, _ = driver.execute_query(
            f"MATCH (a:{label}) WITH a LIMIT $limit DETACH DELETE a RETURN count(*) AS n",
            limit=batch_size,
            database_=database,
        )
        n = int(records[0]["n"]) if records else 0
        removed += n
        if n < batch_size:
            return removed


def staged_counts(driver: Driver, database: str, stamp: str) -> dict[str, int]:
    """``{"Argument": n, "SUPPORTS": n, ...}`` of the graph staged under ``stamp``."""
    counts: dict[str, int] = {}
    records, _, _ = driver.execute_query(
        f"MATCH (a:{STAGING_LABEL} {{{EXPORT_STAMP}: $stamp}}) RETURN count(a) AS n", stamp=stamp, database_=database
    )
    counts[ARGUMENT_LABEL] = int(records[0]["n"])
    records, _, _ = driver.execute_query(
        f"MATCH (:{STAGING_LABEL} {{{EXPORT_STAMP}: $stamp}})-[r]->(:{STAGING_LABEL} {{{EXPORT_STAMP}: $stamp}}) "
        f"WHERE type(r) IN $types RETURN type(r) AS type, count(r) AS n",
        stamp=stamp,
        types=list(RELATIONSHIP_TYPES),
        database_=database,
    )
    found = {r["type"]: int(r["n"]) for r in records}
    for relationship_type in RELATIONSHIP_TYPES:
        counts[relationship_type] = found.get(relationship_type, 0)
    return counts


def _switch(tx, holder: str, stamp: str) -> tuple[int, int]:
    owner = tx.run(
        f"MATCH (k:{STATE_LABEL} {{name: $name}}) SET k.lock_touched_ms = $now RETURN k.lock_holder AS holder",
        name=STATE_NAME,
        now=_now_ms(),
    ).single()
    if owner is None or owner["holder"] != holder:
        raise LeaseLostError(f"export {holder} lost its lease before the switch: nothing switched")
    retired = tx.run(
        f"MATCH (a:{ARGUMENT_LABEL}) REMOVE a:{ARGUMENT_LABEL} SET a:{RETIRED_LABEL} RETURN count(a) AS n"
    ).single()["n"]
    promoted = tx.run(
        f"MATCH (a:{STAGING_LABEL} {{{EXPORT_STAMP}: $stamp}}) REMOVE a:{STAGING_LABEL} SET a:{ARGUMENT_LABEL} "
        f"RETURN count(a) AS n",
        stamp=stamp,
    ).single()["n"]
    tx.run(
        f"MATCH (k:{STATE_LABEL} {{name: $name}}) SET k.live_stamp = $stamp, k.switched_ms = $now",
        name=STATE_NAME,
        stamp=stamp,
        now=_now_ms(),
    ).consume()
    return int(retired), int(promoted)


@dataclass
class _Export:
    """One export's fixed context and its result so far: the state its steps share."""

    driver: Driver
    database: str
    stamp: str
    batch_size: int
    lease_s: float
    hooks: ExportHooks
    log: Callable[[str], None]
    result: ExportResult

    def write_batch(self, query: str, rows: Sequence[dict]) -> None:
        """One staging batch in its own write transaction; the lease is renewed after it."""
        self.hooks.before_batch(self.result.batches)
        with self.driver.session(database=self.database) as session:
            session.execute_write(lambda tx: tx.run(query, rows=list(rows), stamp=self.stamp).consume())
        self.result.batches += 1
        renew_lock(self.driver, self.database, self.stamp, self.lease_s)

    def remove_leftovers(self) -> None:
        """Staged nodes of an export that died (we hold the lease), and retired ones not pruned."""
        removed = _delete_in_batches(self.driver, self.database, STAGING_LABEL, self.batch_size)
        removed += _delete_in_batches(self.driver, self.database, RETIRED_LABEL, self.batch_size)
        self.result.leftover_nodes_removed = removed

    def stage(self, node_rows: Sequence[dict], relations: pd.DataFrame) -> None:
        """Write the nodes, then the relationships of each type, under this export's stamp."""
        for batch in _batches(node_rows, self.batch_size):
            self.write_batch(NODE_QUERY, batch)
            self.result.nodes += len(batch)
        self.log(
            f"neo4j export {self.stamp}: {self.result.nodes} {ARGUMENT_LABEL} nodes staged "
            f"in {self.result.batches} batches"
        )
        for relationship_type in RELATIONSHIP_TYPES:
            rows = relation_rows(relations, relationship_type)
            query = relationship_query(relationship_type)
            for batch in _batches(rows, self.batch_size):
                self.write_batch(query, batch)
            self.result.relationships[relationship_type] = len(rows)
            self.log(f"neo4j export {self.stamp}: {len(rows)} {relationship_type} relationships staged")

    def check(self, expected: dict[str, int]) -> None:
        staged = staged_counts(self.driver, self.database, self.stamp)
        if staged != expected:
            raise CountsMismatchError(f"staged graph holds {staged}, the tables {expected}: not switched")

    def switch_and_prune(self) -> None:
        """Make the staged graph the visible one in one transaction, then delete the retired one."""
        self.hooks.before_switch()
        with self.driver.session(database=self.database) as session:
            self.result.stale_nodes_removed, promoted = session.execute_write(_switch, self.stamp, self.stamp)
        self.log(
            f"neo4j export {self.stamp}: switched ({promoted} nodes live, {self.result.stale_nodes_removed} retired)"
        )
        self.result.stale_relationships_removed = _retired_relationships(self.driver, self.database)
        _delete_in_batches(self.driver, self.database, RETIRED_LABEL, self.batch_size)

    def release(self) -> None:
        try:
            release_lock(self.driver, self.database, self.stamp)
        except Exception as exc:  # the server may be gone; the lease then expires by itself
            self.log(
                f"neo4j export {self.stamp}: could not release the lock ({type(exc).__name__}); "
                f"it expires in {self.lease_s:.0f} s"
            )


def _check_tables(arguments: pd.DataFrame, relations: pd.DataFrame) -> None:
    if arguments[ARGUMENT_KEY].duplicated().any():
        dup = arguments.loc[arguments[ARGUMENT_KEY].duplicated(), ARGUMENT_KEY].iloc[0]
        raise ValueError(f"argument id {dup!r} occurs twice: ids must be unique")
    unknown = set(relations["relation"]) - set(RELATIONSHIP_TYPES)
    if unknown:
        raise ValueError(f"unknown relation types {sorted(unknown)}")


def export_kb(
    driver: Driver,
    database: str,
    arguments: pd.DataFrame,
    relations: pd.DataFrame,
    predictions: Mapping[str, Mapping[str, object]] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    log: Callable[[str], None] | None = None,
    stamp: str | None = None,
    lease_s: float = DEFAULT_LEASE_S,
    lock_wait_s: float = DEFAULT_LOCK_WAIT_S,
    hooks: ExportHooks = NO_HOOKS,
) -> ExportResult:
    """Lock, stage, check, switch, prune (see the module docstring).

    Parameters
    ----------
    predictions : mapping argument id -> extra node properties (``pred_<system>_<stat>``), optional.
    stamp : the export stamp (default: :func:`new_stamp`); it also names the lock holder.
    lease_s, lock_wait_s : lease length, and how long to wait for another export's lease.
    hooks : called before each batch and before the switch (:class:`ExportHooks`).

    Returns
    -------
    ExportResult with the rows written per kind, batches, what was removed, seconds.

    Raises
    ------
    ExportLockedError, LeaseLostError, CountsMismatchError, or whatever a hook raises
        In every case the visible graph is the previous complete one.
    """
    log = log or (lambda message: None)
    started = time.perf_counter()
    _check_tables(arguments, relations)
    node_rows = argument_rows(arguments, predictions)
    ensure_constraints(driver, database)
    stamp = stamp or new_stamp()
    export = _Export(driver, database, stamp, batch_size, lease_s, hooks, log, ExportResult(stamp=stamp))
    result = export.result
    result.lock_wait_s = acquire_lock(driver, database, stamp, lease_s=lease_s, wait_s=lock_wait_s, log=log)
    try:
        export.remove_leftovers()
        result.prediction_properties = sum(len(p) for p in (predictions or {}).values())
        export.stage(node_rows, relations)
        export.check(expected_counts(arguments, relations))
        export.switch_and_prune()
    finally:
        export.release()
    result.seconds = time.perf_counter() - started
    log(
        f"neo4j export done in {result.seconds:.1f} s ({result.batches} batches, "
        f"{result.stale_nodes_removed} previous nodes and {result.stale_relationships_removed} previous relationships removed)"
    )
    return result


def _retired_relationships(driver: Driver, database: str) -> int:
    records, _, _ = driver.execute_query(
        f"MATCH (:{RETIRED_LABEL})-[r]->(:{RETIRED_LABEL}) WHERE type(r) IN $types RETURN count(r) AS n",
        types=list(RELATIONSHIP_TYPES),
        database_=database,
    )
    return int(records[0]["n"]) if records else 0


def graph_counts(driver: Driver, database: str) -> dict[str, int]:
    """``{"Argument": n, "SUPPORTS": n, ...}`` as the graph holds them now."""
    counts: dict[str, int] = {}
    records, _, _ = driver.execute_query(f"MATCH (a:{ARGUMENT_LABEL}) RETURN count(a) AS n", database_=database)
    counts[ARGUMENT_LABEL] = int(records[0]["n"])
    records, _, _ = driver.execute_query(
        f"MATCH (:{ARGUMENT_LABEL})-[r]->(:{ARGUMENT_LABEL}) WHERE type(r) IN $types RETURN type(r) AS type, count(r) AS n",
        types=list(RELATIONSHIP_TYPES),
        database_=database,
    )
    found = {r["type"]: int(r["n"]) for r in records}
    for relationship_type in RELATIONSHIP_TYPES:
        counts[relationship_type] = found.get(relationship_type, 0)
    return counts


def expected_counts(arguments: pd.DataFrame, relations: pd.DataFrame) -> dict[str, int]:
    """The counts :func:`graph_counts` must return after exporting these tables."""
    counts = {ARGUMENT_LABEL: int(len(arguments))}
    for relationship_type in RELATIONSHIP_TYPES:
        counts[relationship_type] = int((relations["relation"] == relationship_type).sum())
    return counts


def constraint_names(driver: Driver, database: str) -> list[str]:
    records, _, _ = driver.execute_query("SHOW CONSTRAINTS YIELD name RETURN name", database_=database)
    return sorted(r["name"] for r in records)


def clear_graph(driver: Driver, database: str, batch_size: int = 10000) -> None:
    """Delete every node and relationship and drop every constraint (tests and benchmarks only)."""
    while True:
        records, _, _ = driver.execute_query(
            "MATCH (n) WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS n", limit=batch_size, database_=database
        )
        if not records or records[0]["n"] == 0:
            break
    for name in constraint_names(driver, database):
        # constraint names come from the server itself, never from user input
        driver.execute_query(f"DROP CONSTRAINT `{name.replace('`', '')}` IF EXISTS", database_=database)
