"""Neo4j connection resource (filled in by the knowledge-base work)."""

from __future__ import annotations

from typing import Any


def neo4j_resources() -> dict[str, Any]:
    """Resources that the Neo4j export needs, keyed by resource name."""
    return {}
