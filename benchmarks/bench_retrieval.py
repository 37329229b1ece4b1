"""Benchmark: retrieval over the full QT30 KB, one run, ratios against the alternatives measured here.

    .venv/bin/python benchmarks/bench_retrieval.py [--queries 100] [--embeddings FILE.parquet] [--dtype-sample 500]

- embedding throughput of all-MiniLM-L6-v2 on this machine (every argument; target <= 3 min), in the
  dtype the platform picks here (bfloat16 only with native bfloat16 in the CPU flags);
- on a sample of texts: float32 against bfloat16 throughput, and recall@10 of bfloat16 neighbours
  against float32's (the dtype choice is measured, not assumed);
- export time into Neo4j without and with the embeddings and their indexes;
- vector top-10 latency (p50, p95) in Neo4j through the native vector index, against the release's
  full scan (cosine over every node in Cypher) and against exact numpy search in memory
  (targets: index p95 <= 50 ms and >= 10x faster than the full scan);
- recall@10 of the index against exact search (target >= 0.95), raw (the index's own top 10) and
  through the store (50 candidates rescored exactly, with the store's checks: what a user gets).

Queries are KB arguments' own embeddings (drawn with seed 0). ``--embeddings`` reuses a Parquet
file of a previous run (written on the first one beside the results) to skip the embedding step.
Prints one JSON line and writes ``benchmarks/results/retrieval.json``, with the machine's load
average at start and end (a shared machine slows every figure).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argassets.platform.paths import resolve_data_dir
from argassets.political import aif
from argassets.political import knowledge_base as kb_graph
from argassets.political import neo4j_export as nx
from argassets.political import neo4j_graph as ng
from argassets.political.retrieval import neo4j_store
from argassets.political.retrieval.embedded_store import cosine
from argassets.political.retrieval.embeddings import argument_text, embed_arguments
from argassets.political.retrieval.model import EmbeddingModel, load_embedding_model, native_bf16
from argassets.political.retrieval.query import RetrievalQuery
from benchmarks.neo4j_server import neo4j_server

RESULTS = ROOT / "benchmarks" / "results"
K = 10
FULL_SCAN = (
    "MATCH (a:Argument) WHERE a.embedding IS NOT NULL "
    "WITH a, vector.similarity.cosine(a.embedding, $vector) AS score "
    "RETURN a.argument_id AS argument_id ORDER BY score DESC LIMIT $k"
)
INDEX_QUERY = (
    "CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score RETURN node.argument_id AS argument_id"
)


def _percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2), "p95_ms": round(float(np.percentile(ms, 95)), 2)}


def _timed(run, vectors: np.ndarray) -> tuple[list[float], list[list[str]]]:
    seconds, found = [], []
    for vector in vectors:
        started = time.perf_counter()
        found.append(run(vector))
        seconds.append(time.perf_counter() - started)
    return seconds, found


def kb_arguments() -> tuple[pd.DataFrame, pd.DataFrame]:
    data = resolve_data_dir()
    if data is None:
        raise SystemExit("no data folder: set ARGASSETS_DATA_DIR")
    corpus = aif.load_corpus(data / "qt30")
    nodes, edges = kb_graph.corpus_tables(corpus)
    graph = kb_graph.union_graph(nodes, edges)
    arguments = kb_graph.build_arguments(nodes, edges, graph)
    relations, _ = kb_graph.build_relations(arguments, nodes, edges, graph)
    return arguments, relations


def embeddings_for(arguments: pd.DataFrame, cached: Path | None) -> tuple[pd.DataFrame, dict]:
    if cached is not None and cached.exists():
        return pd.read_parquet(cached), {"embedding": "reused from " + str(cached)}
    model = load_embedding_model()
    table, run = embed_arguments(arguments, model, log=lambda line: print(line, file=sys.stderr))  # noqa: T201
    RESULTS.mkdir(parents=True, exist_ok=True)
    table.to_parquet(RESULTS / "retrieval_embeddings.parquet")
    return table, {
        "embedding_dtype": model.dtype,
        "embedded_texts": run.embedded,
        "embedding_seconds": round(run.seconds, 1),
        "texts_per_second": round(run.texts_per_second, 1),
    }


def dtype_comparison(arguments: pd.DataFrame, size: int) -> dict:
    """float32 against bfloat16 on ``size`` texts drawn with seed 1: texts/s and recall@10."""
    texts = [argument_text(p, lo) for p, lo in zip(arguments["proposition"], arguments["locution"], strict=True)]
    sample = list(np.random.default_rng(1).choice(sorted(set(texts)), size=min(size, len(set(texts))), replace=False))
    folder = load_embedding_model().folder
    figures, vectors = {}, {}
    for dtype in ("float32", "bfloat16"):
        model = EmbeddingModel(folder, dtype=dtype)
        model.encode(sample[:8])  # load the weights outside the timing
        started = time.perf_counter()
        vectors[dtype] = model.encode(sample)
        figures[f"{dtype}_texts_per_second"] = round(len(sample) / (time.perf_counter() - started), 1)

    def top(matrix: np.ndarray) -> list[set[int]]:
        sims = matrix @ matrix.T
        np.fill_diagonal(sims, -np.inf)
        return [set(np.argpartition(-row, K)[:K]) for row in sims]

    pairs = zip(top(vectors["float32"]), top(vectors["bfloat16"]), strict=True)
    figures["bfloat16_recall_at_10_vs_float32"] = round(float(np.mean([len(a & b) / K for a, b in pairs])), 4)
    figures["bfloat16_min_cosine_to_float32"] = round(float((vectors["float32"] * vectors["bfloat16"]).sum(1).min()), 4)
    return {"dtype_sample": len(sample), "cpu_native_bf16": native_bf16(), **figures}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--embeddings", type=Path)
    parser.add_argument(
        "--dtype-sample", type=int, default=500, help="texts of the float32/bfloat16 comparison (0: none)"
    )
    args = parser.parse_args()
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    arguments, relations = kb_arguments()
    dtype_figures = dtype_comparison(arguments, args.dtype_sample) if args.dtype_sample else {}
    table, embedding_figures = embeddings_for(arguments, args.embeddings)
    ids = table["argument_id"].astype(str).to_numpy()
    matrix = np.asarray(table["embedding"].tolist(), dtype=np.float32)
    rng = np.random.default_rng(0)
    vectors = matrix[rng.choice(len(matrix), size=min(args.queries, len(matrix)), replace=False)]

    def exact(vector: np.ndarray) -> list[str]:
        sims = cosine(matrix, vector)
        top = np.argpartition(-sims, K)[:K]
        return list(ids[top[np.argsort(-sims[top])]])

    numpy_s, truth = _timed(exact, vectors)
    with neo4j_server() as settings:
        driver = ng.connect(settings)
        database = settings.database
        ng.clear_graph(driver, database)
        neo4j_store.drop_retrieval_indexes(driver, database)
        plain = nx.export_kb(driver, database, arguments, relations).seconds
        started = time.perf_counter()
        nx.export_kb(driver, database, arguments, relations)
        neo4j_store.write_embeddings(driver, database, table)
        neo4j_store.ensure_retrieval_indexes(driver, database, int(table["dimensions"].iloc[0]))
        with_embeddings = time.perf_counter() - started

        def query(cypher: str):
            def run(vector: np.ndarray) -> list[str]:
                records, _, _ = driver.execute_query(
                    cypher, vector=vector.tolist(), k=K, index=neo4j_store.VECTOR_INDEX, database_=database
                )
                return [r["argument_id"] for r in records]

            return run

        store = neo4j_store.Neo4jStore(driver, database)

        def through_store(vector: np.ndarray) -> list[str]:
            return [r.argument_id for r in store.search(RetrievalQuery("q", "vector", k=K), vector)]

        _timed(query(INDEX_QUERY), vectors[:10])  # warm-up: page cache and query plans
        index_s, index_found = _timed(query(INDEX_QUERY), vectors)
        store_s, store_found = _timed(through_store, vectors)
        scan_s, scan_found = _timed(query(FULL_SCAN), vectors)
        driver.close()
    recall = float(np.mean([len(set(f) & set(t)) / K for f, t in zip(index_found, truth, strict=True)]))
    store_recall = float(np.mean([len(set(f) & set(t)) / K for f, t in zip(store_found, truth, strict=True)]))
    scan_recall = float(np.mean([len(set(f) & set(t)) / K for f, t in zip(scan_found, truth, strict=True)]))
    index, scan, numpy_p = _percentiles(index_s), _percentiles(scan_s), _percentiles(numpy_s)
    result = {
        "cpus": os.cpu_count(),
        "load_average_at_start": load_at_start,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "arguments": len(arguments),
        "queries": len(vectors),
        **embedding_figures,
        **dtype_figures,
        "export_seconds_without_embeddings": round(plain, 2),
        "export_seconds_with_embeddings_and_indexes": round(with_embeddings, 2),
        "index_top10": index,
        "store_vector_top10": _percentiles(store_s),
        "full_scan_top10": scan,
        "numpy_exact_top10": numpy_p,
        "index_speedup_vs_full_scan_p50": round(scan["p50_ms"] / index["p50_ms"], 1),
        "index_speedup_vs_full_scan_p95": round(scan["p95_ms"] / index["p95_ms"], 1),
        "index_vs_numpy_p50": round(index["p50_ms"] / numpy_p["p50_ms"], 2),
        "recall_at_10_index": round(recall, 4),
        "recall_at_10_store": round(store_recall, 4),
        "recall_at_10_full_scan": round(scan_recall, 4),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "retrieval.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
