"""Benchmark: export of the full QT30 knowledge base into a real Neo4j 5 (target < 20 s on 2 cores).

    .venv/bin/python benchmarks/bench_neo4j_export.py [--repeat 3]

Builds the KB from ``$ARGASSETS_DATA_DIR/qt30`` (or ../shared/data/qt30), starts the Maven-fetched
test server with ``scripts/neo4j-test-server`` (or uses ``$NEO4J_TEST_URI`` and friends), then times
``export_kb`` into an empty database (cold) and again into the filled one (idempotent re-export).
Prints one JSON line with the figures and writes it to ``benchmarks/results/neo4j_export.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argassets.platform.paths import resolve_data_dir
from argassets.political import aif
from argassets.political import knowledge_base as kb_graph
from argassets.political import neo4j_export as nx
from argassets.political import neo4j_graph as ng
from benchmarks.neo4j_server import neo4j_server


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=nx.DEFAULT_BATCH_SIZE)
    args = parser.parse_args()
    data = resolve_data_dir()
    if data is None:
        raise SystemExit("no data folder: set ARGASSETS_DATA_DIR")
    started = time.perf_counter()
    corpus = aif.load_corpus(data / "qt30")
    nodes, edges = kb_graph.corpus_tables(corpus)
    graph = kb_graph.union_graph(nodes, edges)
    arguments = kb_graph.build_arguments(nodes, edges, graph)
    relations, _ = kb_graph.build_relations(arguments, nodes, edges, graph)
    build_s = time.perf_counter() - started

    with neo4j_server() as settings:
        driver = ng.connect(settings)
        cold, warm = [], []
        for _ in range(args.repeat):
            ng.clear_graph(driver, settings.database)
            cold.append(
                nx.export_kb(driver, settings.database, arguments, relations, batch_size=args.batch_size).seconds
            )
            warm.append(
                nx.export_kb(driver, settings.database, arguments, relations, batch_size=args.batch_size).seconds
            )
        counts = ng.graph_counts(driver, settings.database)
        driver.close()
    result = {
        "arguments": len(arguments),
        "relations": len(relations),
        "kb_build_s": round(build_s, 2),
        "export_cold_s": [round(s, 2) for s in cold],
        "export_rerun_s": [round(s, 2) for s in warm],
        "best_cold_s": round(min(cold), 2),
        "target_s": 20,
        "counts_ok": counts == ng.expected_counts(arguments, relations),
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "neo4j_export.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result))
    return 0 if result["counts_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
