"""Study B's Neo4j resource (defined with its study: :mod:`argassets.political.resources`)."""

from argassets.political.resources import Neo4jResource, neo4j_resources

__all__ = ["Neo4jResource", "neo4j_resources"]
