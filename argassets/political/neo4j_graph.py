"""The Neo4j holding the political knowledge base: connection, labels, schema, and what it holds now.

Plain functions, no Dagster; the export that writes it is :mod:`argassets.political.neo4j_export`.
"""

from __future__ import annotations

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

#: Property that every node and relationship written by one export carries (its export stamp).
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
