"""Session fixtures of the knowledge-base tests: the parsed QT30 corpus and a real Neo4j 5 server.

The server is started once per test session with ``scripts/neo4j-test-server`` (Neo4j fetched from
Maven Central, cached) and stopped at the end. To use a server of your own instead, set
``NEO4J_TEST_URI``, ``NEO4J_TEST_USER``, ``NEO4J_TEST_PASSWORD`` and ``NEO4J_TEST_DATABASE``; the
tests wipe that database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest

from argassets.political import aif
from argassets.political import episodes as aif_episodes
from argassets.political import knowledge_base as kb_graph

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "neo4j-test-server"


@dataclass(frozen=True)
class Neo4jTestServer:
    uri: str
    user: str
    password: str = field(repr=False)
    database: str

    def env(self) -> dict[str, str]:
        return {
            "NEO4J_URI": self.uri,
            "NEO4J_USER": self.user,
            "NEO4J_PASSWORD": self.password,
            "NEO4J_DATABASE": self.database,
        }


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory):
    """A running Neo4j 5 (auth on): ``$NEO4J_TEST_URI`` if set, else one started for this session."""
    if os.environ.get("NEO4J_TEST_URI"):
        yield Neo4jTestServer(
            uri=os.environ["NEO4J_TEST_URI"],
            user=os.environ.get("NEO4J_TEST_USER", "neo4j"),
            password=os.environ.get("NEO4J_TEST_PASSWORD", ""),
            database=os.environ.get("NEO4J_TEST_DATABASE", "neo4j"),
        )
        return
    state = tmp_path_factory.mktemp("neo4j-test-server")
    started = subprocess.run(
        [sys.executable, str(SCRIPT), "start", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if started.returncode != 0:
        pytest.fail(f"could not start the Neo4j test server:\n{started.stdout}\n{started.stderr}")
    info = json.loads((state / "connection.json").read_text())
    try:
        yield Neo4jTestServer(info["uri"], info["user"], info["password"], info["database"])
    finally:
        subprocess.run(
            [sys.executable, str(SCRIPT), "stop", "--state-dir", str(state)], capture_output=True, timeout=120
        )


@pytest.fixture()
def neo4j_driver(neo4j_server: Neo4jTestServer):
    """A driver on an emptied database (nodes, relationships and constraints removed)."""
    from argassets.political import neo4j_graph as ng

    driver = ng.connect(
        ng.Neo4jSettings(neo4j_server.uri, neo4j_server.user, neo4j_server.password, neo4j_server.database)
    )
    ng.clear_graph(driver, neo4j_server.database)
    try:
        yield driver
    finally:
        driver.close()


@dataclass(frozen=True)
class KnowledgeBase:
    corpus: aif.Corpus
    episodes: pd.DataFrame
    nodes: pd.DataFrame
    edges: pd.DataFrame
    graph: kb_graph.UnionGraph
    arguments: pd.DataFrame
    relations: pd.DataFrame
    report: kb_graph.RelationReport


@pytest.fixture(scope="session")
def qt30_kb(shared_data_dir: Path) -> KnowledgeBase:
    """The published QT30 corpus parsed once per session, with its KB tables."""
    corpus = aif.load_corpus(shared_data_dir / "qt30")
    episodes = aif_episodes.assign_episodes(corpus)
    nodes, edges = kb_graph.corpus_tables(corpus, episodes)
    graph = kb_graph.union_graph(nodes, edges)
    arguments = kb_graph.build_arguments(nodes, edges, graph)
    relations, report = kb_graph.build_relations(arguments, nodes, edges, graph)
    return KnowledgeBase(corpus, episodes, nodes, edges, graph, arguments, relations, report)
