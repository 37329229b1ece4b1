"""Benchmark: the paper's knowledge base with its positions, end to end (import, pooling, Neo4j export).

    .venv/bin/python benchmarks/bench_published_kb.py [--repeat 1] [--no-neo4j]

On the published data (``$ARGASSETS_DATA_DIR`` or ../shared/data), with the functions the assets call:

1. **import**: the released prompts, the index of the 23,300 rows, and the 22 published files read and
   keyed by KB argument (``political_predictions`` of the 22 partitions), then ``model_stats``;
2. **pooling**: E1, E2 and E3 (``pool_ensemble``), against the named alternative, the per-argument loop
   that pooled before (kept below as :func:`pool_ensemble_loop`); both must give the same table;
3. **export**: the full KB with every model's and ensemble's five statistics into the Maven-fetched
   Neo4j test server (or ``$NEO4J_TEST_URI``), against the same KB exported without positions.

Prints one JSON line and writes it to ``benchmarks/results/published_kb.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argassets.platform.paths import resolve_data_dir  # noqa: E402
from argassets.platform.registry import load_registry  # noqa: E402
from argassets.political import aif  # noqa: E402
from argassets.political import episodes as aif_episodes  # noqa: E402
from argassets.political import knowledge_base as kb_graph  # noqa: E402
from argassets.political import neo4j_export as nx  # noqa: E402
from argassets.political.assets.ensembles import ensemble_table, published_counts  # noqa: E402
from argassets.political.ensembles import pool_ensemble  # noqa: E402
from argassets.political.model_stats import (  # noqa: E402
    STATS_COLUMNS,
    model_stats,
    scores_from_json,
    scores_to_json,
    summarise_scores,
)
from argassets.political.prompts import render_prompts  # noqa: E402
from argassets.political.published import published_tsv_to_predictions, read_published_tsv  # noqa: E402
from argassets.political.published_index import (  # noqa: E402
    RELEASED_PROMPTS,
    argument_published_rows,
    build_published_index,
    read_released_prompts,
)

SCRIPT = ROOT / "scripts" / "neo4j-test-server"


def pool_ensemble_loop(stats: pd.DataFrame, members: list[str], name: str) -> pd.DataFrame:
    """The alternative: one pandas group and one JSON parse per argument (the previous implementation)."""
    columns = STATS_COLUMNS + ["n_members"]
    subset = stats[stats["system"].isin(members)]
    order = {member: position for position, member in enumerate(members)}
    subset = subset.assign(_order=subset["system"].map(order)).sort_values(["argument_id", "_order"], kind="stable")
    rows = []
    for argument_id, group in subset.groupby("argument_id", sort=True):
        scores: list[float] = []
        for text in group["scores"]:
            scores.extend(scores_from_json(text))
        na, invalid, n = (
            int(group["na_count"].sum()),
            int(group["invalid_count"].sum()),
            int(group["n_repetitions"].sum()),
        )
        mean, var, std = summarise_scores(scores)
        rows.append(
            (
                name,
                argument_id,
                scores_to_json(scores),
                mean,
                var,
                std,
                na,
                invalid,
                n,
                na / n if n else math.nan,
                len(group),
            )
        )
    return pd.DataFrame(rows, columns=columns)


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-neo4j", action="store_true", help="skip the export")
    args = parser.parse_args()
    data = resolve_data_dir()
    if data is None:
        raise SystemExit("no data folder: set ARGASSETS_DATA_DIR")
    corpus = aif.load_corpus(data / "qt30")
    nodes, edges = kb_graph.corpus_tables(corpus, aif_episodes.assign_episodes(corpus))
    graph = kb_graph.union_graph(nodes, edges)
    arguments = kb_graph.build_arguments(nodes, edges, graph)
    relations, _ = kb_graph.build_relations(arguments, nodes, edges, graph)
    prompts = render_prompts(arguments)

    started = time.perf_counter()
    index = build_published_index(prompts, read_released_prompts(data / RELEASED_PROMPTS))
    carried = argument_published_rows(prompts, index)
    index_s = time.perf_counter() - started
    registry = load_registry(ROOT / "data" / "models.toml")
    entries = [e for e in registry.models if e.backend == "import" and e.format == "published_tsv"]
    started = time.perf_counter()
    predictions = pd.concat(
        [
            published_tsv_to_predictions(read_published_tsv(e.import_file(data)), e.name, 5, argument_rows=carried)
            for e in entries
        ],
        ignore_index=True,
    )
    import_s = time.perf_counter() - started
    stats, stats_s = timed(model_stats, predictions)
    counts = published_counts(registry, data, [e.name for e in entries])
    (ensembles, _, listed), pool_s = timed(ensemble_table, stats, registry, counts)
    loop_s = 0.0
    for name, members in listed.items():
        reference, seconds = timed(pool_ensemble_loop, stats, members, name)
        loop_s += seconds
        mine = pool_ensemble(stats, members, name).set_index("argument_id")
        reference = reference.set_index("argument_id")
        same = (mine["scores"] == reference["scores"]).all() and (
            (mine["mean"] - reference["mean"]).abs().fillna(0) < 1e-9
        ).all()
        if not same:
            raise SystemExit(f"{name}: the two poolings differ")
    result: dict[str, object] = {
        "kb_arguments": len(arguments),
        "released_rows": len(index),
        "arguments_with_positions": len(carried),
        "models": len(entries),
        "prediction_rows": len(predictions),
        "index_s": round(index_s, 2),
        "import_22_files_s": round(import_s, 2),
        "model_stats_s": round(stats_s, 2),
        "pooling_s": round(pool_s, 2),
        "pooling_loop_s": round(loop_s, 2),
        "pooling_speedup_vs_loop": round(loop_s / pool_s, 1),
    }
    if not args.no_neo4j:
        properties = nx.prediction_properties([stats, ensembles])
        state = None
        if os.environ.get("NEO4J_TEST_URI"):
            settings = nx.Neo4jSettings(
                os.environ["NEO4J_TEST_URI"],
                os.environ.get("NEO4J_TEST_USER", "neo4j"),
                os.environ.get("NEO4J_TEST_PASSWORD", ""),
                os.environ.get("NEO4J_TEST_DATABASE", "neo4j"),
            )
        else:
            state = Path(tempfile.mkdtemp(prefix="neo4j-bench-"))
            subprocess.run(
                [sys.executable, str(SCRIPT), "start", "--state-dir", str(state)], check=True, stdout=subprocess.DEVNULL
            )
            info = json.loads((state / "connection.json").read_text())
            settings = nx.Neo4jSettings(info["uri"], info["user"], info["password"], info["database"])
        try:
            driver = nx.connect(settings)
            nx.clear_graph(driver, settings.database)
            warmup = nx.export_kb(driver, settings.database, arguments, relations)  # JVM warm-up, not reported
            plain = nx.export_kb(driver, settings.database, arguments, relations)
            with_positions = nx.export_kb(driver, settings.database, arguments, relations, predictions=properties)
            counts_ok = nx.graph_counts(driver, settings.database) == nx.expected_counts(arguments, relations)
            driver.close()
        finally:
            if state is not None:
                subprocess.run(
                    [sys.executable, str(SCRIPT), "stop", "--state-dir", str(state)], stdout=subprocess.DEVNULL
                )
        result.update(
            {
                "position_properties": with_positions.prediction_properties,
                "export_warmup_s": round(warmup.seconds, 2),
                "export_without_positions_s": round(plain.seconds, 2),
                "export_with_positions_s": round(with_positions.seconds, 2),
                "export_ratio_with_vs_without": round(with_positions.seconds / plain.seconds, 2),
                "counts_ok": counts_ok,
            }
        )
    result.update({"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)})
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "published_kb.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result))
    return 0 if result.get("counts_ok", True) else 1


if __name__ == "__main__":
    sys.exit(main())
