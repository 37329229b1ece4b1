"""Export of the political knowledge base to Neo4j with the official driver.

Plain functions, no Dagster. The export is a *sync*: unique constraints first, then arguments
(label ``Argument``) and relations written in ``UNWIND`` batches with ``MERGE`` (so a second export
changes nothing, and an export that died half-way is completed by the next one), then whatever the
graph holds beyond the current tables (arguments or relations of an older KB) is removed. Every
query takes its data as parameters; relationship types, the only identifiers spliced into query
text, come from the fixed tuple :data:`RELATIONSHIP_TYPES`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError, ConfigurationError, Neo4jError, ServiceUnavailable

ARGUMENT_LABEL = "Argument"
ARGUMENT_KEY = "argument_id"
RELATIONSHIP_TYPES = ("SUPPORTS", "ATTACKS", "IS_A_REPHRASE_OF", "TRANSITIONS_TO")
#: Statistic columns of ``political_model_stats`` / ``political_ensembles`` exported per system.
STAT_COLUMNS = ("mean", "var", "std", "na_count", "prob_na")
CONSTRAINT_NAME = "argument_id_unique"
DEFAULT_BATCH_SIZE = 10000
#: Property that every node and relationship written by one export carries (its run stamp);
#: what lacks the current stamp afterwards is stale and removed.
EXPORT_STAMP = "kb_export"


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
        return {"uri": self.uri, "user": self.user, "database": self.database}


def connect(settings: Neo4jSettings, timeout_s: float = 10.0) -> Driver:
    """A driver whose connectivity and credentials have been verified.

    Raises
    ------
    Neo4jExportError
        With a message that names the URI, user and database (never the password) and says which
        of: unreachable server, rejected credentials, malformed settings.
    """
    where = f"{settings.uri} (user {settings.user!r}, database {settings.database!r})"
    try:
        driver = GraphDatabase.driver(
            settings.uri,
            auth=(settings.user, settings.password),
            connection_timeout=timeout_s,
            connection_acquisition_timeout=timeout_s,
            max_transaction_retry_time=timeout_s,
        )
    except (ConfigurationError, ValueError) as exc:
        raise Neo4jExportError(f"invalid Neo4j settings for {where}: {exc}; check NEO4J_URI") from None
    try:
        driver.verify_connectivity()
        driver.execute_query("RETURN 1", database_=settings.database)
    except AuthError:
        driver.close()
        raise Neo4jExportError(
            f"Neo4j at {settings.uri} rejected the credentials of user {settings.user!r}; check NEO4J_USER and NEO4J_PASSWORD"
        ) from None
    except ServiceUnavailable as exc:
        driver.close()
        raise Neo4jExportError(
            f"cannot reach Neo4j at {where}: {exc}; is the server running? check NEO4J_URI"
        ) from None
    except Neo4jError as exc:
        driver.close()
        raise Neo4jExportError(
            f"Neo4j at {where} refused the session: {exc.code}: {exc.message}; check NEO4J_DATABASE"
        ) from None
    except OSError as exc:
        driver.close()
        raise Neo4jExportError(f"cannot reach Neo4j at {where}: {exc}") from None
    return driver


def ensure_constraints(driver: Driver, database: str) -> None:
    """The unique constraint on ``Argument.argument_id`` (also the index every MERGE/MATCH uses)."""
    driver.execute_query(
        f"CREATE CONSTRAINT {CONSTRAINT_NAME} IF NOT EXISTS "
        f"FOR (a:{ARGUMENT_LABEL}) REQUIRE a.{ARGUMENT_KEY} IS UNIQUE",
        database_=database,
    )


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
    f"MERGE (a:{ARGUMENT_LABEL} {{{ARGUMENT_KEY}: row.id}}) "
    f"SET a = row.props, a.{EXPORT_STAMP} = $stamp"
)


def relationship_query(relationship_type: str) -> str:
    if relationship_type not in RELATIONSHIP_TYPES:
        raise ValueError(f"unknown relationship type {relationship_type!r}")
    return (
        f"UNWIND $rows AS row "
        f"MATCH (s:{ARGUMENT_LABEL} {{{ARGUMENT_KEY}: row.s}}) "
        f"MATCH (t:{ARGUMENT_LABEL} {{{ARGUMENT_KEY}: row.t}}) "
        f"MERGE (s)-[r:{relationship_type} {{aif_node_id: row.aif}}]->(t) "
        f"SET r.nodeset = row.nodeset, r.{EXPORT_STAMP} = $stamp"
    )


@dataclass
class ExportResult:
    nodes: int = 0
    relationships: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    stale_nodes_removed: int = 0
    stale_relationships_removed: int = 0
    prediction_properties: int = 0
    seconds: float = 0.0


class InjectedFailure(RuntimeError):
    """Raised by :func:`export_kb` when ``fail_after_batches`` is reached (crash tests)."""


def export_kb(
    driver: Driver,
    database: str,
    arguments: pd.DataFrame,
    relations: pd.DataFrame,
    predictions: Mapping[str, Mapping[str, object]] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    log: Callable[[str], None] | None = None,
    fail_after_batches: int | None = None,
    stamp: str | None = None,
) -> ExportResult:
    """Write the KB: constraint, node batches, relationship batches (per type), then prune stale.

    Parameters
    ----------
    predictions : mapping argument id -> extra node properties (``pred_<system>_<stat>``), optional.
    fail_after_batches : for tests only: raise :class:`InjectedFailure` after that many batches.
    stamp : the run stamp written to every node and relationship (default: time-based, unique).

    Returns
    -------
    ExportResult with the number of rows written per kind, batches and seconds.
    """
    log = log or (lambda message: None)
    started = time.perf_counter()
    result = ExportResult()
    if arguments[ARGUMENT_KEY].duplicated().any():
        dup = arguments.loc[arguments[ARGUMENT_KEY].duplicated(), ARGUMENT_KEY].iloc[0]
        raise ValueError(f"argument id {dup!r} occurs twice: ids must be unique")
    unknown = set(relations["relation"]) - set(RELATIONSHIP_TYPES)
    if unknown:
        raise ValueError(f"unknown relation types {sorted(unknown)}")
    ensure_constraints(driver, database)

    stamp = stamp or time.strftime("%Y-%m-%dT%H:%M:%S") + f"-{time.perf_counter_ns() % 1_000_000:06d}"

    def run_batch(query: str, rows: Sequence[dict]) -> None:
        if fail_after_batches is not None and result.batches >= fail_after_batches:
            raise InjectedFailure(f"injected failure after {result.batches} batches")
        with driver.session(database=database) as session:
            session.execute_write(lambda tx: tx.run(query, rows=list(rows), stamp=stamp).consume())
        result.batches += 1

    node_rows = argument_rows(arguments, predictions)
    result.prediction_properties = sum(len(p) for p in (predictions or {}).values())
    for batch in _batches(node_rows, batch_size):
        run_batch(NODE_QUERY, batch)
        result.nodes += len(batch)
    log(f"neo4j export: {result.nodes} {ARGUMENT_LABEL} nodes in {result.batches} batches")
    for relationship_type in RELATIONSHIP_TYPES:
        rows = relation_rows(relations, relationship_type)
        query = relationship_query(relationship_type)
        for batch in _batches(rows, batch_size):
            run_batch(query, batch)
        result.relationships[relationship_type] = len(rows)
        log(f"neo4j export: {len(rows)} {relationship_type} relationships")
    result.stale_relationships_removed, result.stale_nodes_removed = prune_stale(driver, database, stamp)
    result.seconds = time.perf_counter() - started
    log(
        f"neo4j export done in {result.seconds:.1f} s ({result.batches} batches, "
        f"{result.stale_nodes_removed} stale nodes and {result.stale_relationships_removed} stale relationships removed)"
    )
    return result


def prune_stale(driver: Driver, database: str, stamp: str, batch_size: int = DEFAULT_BATCH_SIZE) -> tuple[int, int]:
    """Delete KB relationships and Argument nodes that the export with ``stamp`` did not write."""
    removed = [0, 0]
    queries = [
        f"MATCH (:{ARGUMENT_LABEL})-[r]->(:{ARGUMENT_LABEL}) WHERE type(r) IN $types "
        f"AND (r.{EXPORT_STAMP} IS NULL OR r.{EXPORT_STAMP} <> $stamp) "
        f"WITH r LIMIT $limit DELETE r RETURN count(*) AS n",
        f"MATCH (a:{ARGUMENT_LABEL}) WHERE a.{EXPORT_STAMP} IS NULL OR a.{EXPORT_STAMP} <> $stamp "
        f"WITH a LIMIT $limit DETACH DELETE a RETURN count(*) AS n",
    ]
    for slot, query in enumerate(queries):
        while True:
            records, _, _ = driver.execute_query(
                query, types=list(RELATIONSHIP_TYPES), stamp=stamp, limit=batch_size, database_=database
            )
            n = int(records[0]["n"]) if records else 0
            removed[slot] += n
            if n < batch_size:
                break
    return removed[0], removed[1]


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
