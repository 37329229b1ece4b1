"""Export of the political knowledge base to Neo4j with the official driver.

Plain functions, no Dagster. Readers never see a mixed graph, and one export runs at a time (the
lease is :mod:`argassets.political.neo4j_lock`, the connection and counts :mod:`argassets.political.neo4j_graph`):

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
from neo4j import Driver

from argassets.political.neo4j_graph import (
    ARGUMENT_KEY,
    ARGUMENT_LABEL,
    EXPORT_STAMP,
    RELATIONSHIP_TYPES,
    RETIRED_LABEL,
    STAGING_LABEL,
    STAT_COLUMNS,
    STATE_LABEL,
    STATE_NAME,
    Neo4jExportError,
    ensure_constraints,
    expected_counts,
)
from argassets.political.neo4j_lock import (
    DEFAULT_LEASE_S,
    DEFAULT_LOCK_WAIT_S,
    LeaseLostError,
    acquire_lock,
    now_ms,
    release_lock,
    renew_lock,
)

DEFAULT_BATCH_SIZE = 10000


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


class CountsMismatchError(Neo4jExportError):
    """The staged graph's counts differ from the tables: nothing is switched."""


def new_stamp() -> str:
    """A unique export stamp: UTC time, host and a random suffix."""
    return (
        f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    )


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
        now=now_ms(),
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
        now=now_ms(),
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
