"""Neo4j connection resource, configured from environment variables at run time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg
from neo4j import Driver
from pydantic import Field

from argassets.political.neo4j_graph import Neo4jSettings, connect


class Neo4jResource(dg.ConfigurableResource):
    """Where the knowledge base is exported: ``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``,
    ``NEO4J_DATABASE`` (read when a run starts; the password is never logged or shown)."""

    uri: str = Field(description="Bolt URI, e.g. bolt://localhost:7687 or neo4j+s://host:7687")
    user: str = Field(description="Neo4j user name")
    password: str = Field(description="Neo4j password (from NEO4J_PASSWORD; hidden in the UI)")
    database: str = Field(default="neo4j", description="Database name (community edition: neo4j)")
    timeout_s: float = Field(default=10.0, description="Connection and acquisition timeout in seconds")

    def settings(self) -> Neo4jSettings:
        return Neo4jSettings(uri=self.uri, user=self.user, password=self.password, database=self.database)

    @contextmanager
    def driver(self) -> Iterator[Driver]:
        """A verified driver (clear error when the server is unreachable or rejects the user)."""
        driver = connect(self.settings(), timeout_s=self.timeout_s)
        try:
            yield driver
        finally:
            driver.close()


def neo4j_resources() -> dict[str, Any]:
    """Resources that the Neo4j export needs, keyed by resource name."""
    return {
        "neo4j": Neo4jResource(
            uri=dg.EnvVar("NEO4J_URI"),
            user=dg.EnvVar("NEO4J_USER"),
            password=dg.EnvVar("NEO4J_PASSWORD"),
            database=dg.EnvVar("NEO4J_DATABASE"),
        )
    }
