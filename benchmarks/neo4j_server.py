"""The Neo4j server a benchmark exports into: ``$NEO4J_TEST_URI`` and friends when set, else the
Maven-fetched test server of ``scripts/neo4j-test-server``, started here and stopped afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from argassets.political import neo4j_graph as ng

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "neo4j-test-server"


@contextmanager
def neo4j_server() -> Iterator[ng.Neo4jSettings]:
    if os.environ.get("NEO4J_TEST_URI"):
        yield ng.Neo4jSettings(
            os.environ["NEO4J_TEST_URI"],
            os.environ.get("NEO4J_TEST_USER", "neo4j"),
            os.environ.get("NEO4J_TEST_PASSWORD", ""),
            os.environ.get("NEO4J_TEST_DATABASE", "neo4j"),
        )
        return
    state = Path(tempfile.mkdtemp(prefix="neo4j-bench-"))
    subprocess.run(
        [sys.executable, str(SCRIPT), "start", "--state-dir", str(state)], check=True, stdout=subprocess.DEVNULL
    )
    try:
        info = json.loads((state / "connection.json").read_text())
        yield ng.Neo4jSettings(info["uri"], info["user"], info["password"], info["database"])
    finally:
        subprocess.run([sys.executable, str(SCRIPT), "stop", "--state-dir", str(state)], stdout=subprocess.DEVNULL)
