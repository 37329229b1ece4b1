"""Benchmark: the whole KB analysis (issue 23) over all systems, and its bootstrap against a pandas path.

Prepares (untimed) what the assets read after ``run-default``: the QT30 knowledge base, its Dung
framework, the 22 published models' statistics and E1-E3 pooled from them. Then times:

1. the whole analysis, every system (22 models and 3 ensembles): facets, positions, distance by
   relation, ambiguity by facet, positions per debate, recurring speakers, acceptability. Target:
   under 30 s on the 2-core development machine;
2. the debate bootstrap of the mean |Δ| per relation for E1 (the step every table repeats):
   :func:`grouped_means` (per-debate sums, one matrix product for every replicate) against the
   plain pandas path (per replicate: the pair rows of the drawn debates concatenated, then a
   ``groupby("relation").mean()``), on the same replicate weights. Both must give the same
   replicates; the script prints both times and the ratio.

Usage::

    .venv/bin/python benchmarks/bench_kb_analysis.py [--repeats 3] [--replicates 200]

The data folder is ``$ARGASSETS_DATA_DIR`` or ``../shared/data``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from argassets.platform.paths import resolve_data_dir
from argassets.political import aif, aspic
from argassets.political import episodes as aif_episodes
from argassets.political import knowledge_base as kb_graph
from argassets.political.assets.ensembles import ensemble_table, membership_frame, published_counts
from argassets.political.model_stats import model_stats
from argassets.political.prompts import render_prompts
from argassets.political.published import published_predictions_file, published_tsv_to_predictions, read_published_tsv
from argassets.political.published_index import (
    RELEASED_PROMPTS,
    argument_published_rows,
    build_published_index,
    read_released_prompts,
)
from argassets.political.structure import acceptability, ambiguity, debates, distance, facets, positions
from argassets.political.structure.intervals import cluster_weights, grouped_means
from argassets.studies import load_registry

TARGET_S = 30.0


def _time(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def prepare(root: Any) -> dict[str, pd.DataFrame]:
    """The assets' inputs, built by the same functions as the assets (untimed)."""
    corpus = aif.load_corpus(root / "qt30")
    nodes, edges = kb_graph.corpus_tables(corpus, aif_episodes.assign_episodes(corpus))
    graph = kb_graph.union_graph(nodes, edges)
    arguments = kb_graph.build_arguments(nodes, edges, graph)
    relations, _ = kb_graph.build_relations(arguments, nodes, edges, graph)
    theory = aspic.theory_from_graph(graph.node_type, graph.text, graph.preds, graph.succs)
    built, _ = aspic.build_arguments(theory)
    prompts = render_prompts(arguments)
    rows = argument_published_rows(
        prompts, build_published_index(prompts, read_released_prompts(root / RELEASED_PROMPTS))
    )
    registry = load_registry(None)
    files = {e.name: f for e in registry.models if (f := published_predictions_file(e)) is not None}
    stats = pd.concat(
        [
            model_stats(published_tsv_to_predictions(read_published_tsv(f.resolve(root)), name, 5, argument_rows=rows))
            for name, f in files.items()
        ],
        ignore_index=True,
    )
    pooled, members, _ = ensemble_table(stats, registry, published_counts(registry, root, list(files)))
    return {
        "arguments": arguments,
        "relations": relations,
        "dung": aspic.arguments_table(built),
        "defeats": aspic.defeats_table(aspic.defeats(theory, built)),
        "stats": stats,
        "ensembles": pooled,
        "members": membership_frame(members),
    }


def whole_analysis(t: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Every table of the ``kb_analysis`` group, from the assets' inputs."""
    table = facets.argument_facets(t["arguments"], t["relations"], t["dung"], t["defeats"])
    pos = positions.system_positions(t["stats"], t["ensembles"], t["members"])
    dist, robust = distance.relation_distances(pos, t["relations"], table)
    return {
        "facets": table,
        "positions": pos,
        "distance": dist,
        "robustness": robust,
        "ambiguity": ambiguity.ambiguity_by_facet(pos, table),
        "debates": debates.debate_positions(pos, table),
        "speakers": debates.recurring_speakers(pos, table),
        "acceptability": acceptability.acceptability_differences(pos, table),
    }


def e1_pairs(out: dict[str, pd.DataFrame], relations: pd.DataFrame) -> pd.DataFrame:
    """E1's political pairs: relation, debate (of the source) and |Δ|."""
    e1 = out["positions"][out["positions"]["system"] == "E1"]
    position = e1.set_index("argument_id")["position"].where(e1.set_index("argument_id")["prob_na"] < 0.5)
    debate = out["facets"].set_index("argument_id")["episode"]
    frame = pd.DataFrame(
        {
            "relation": relations["relation"].to_numpy(),
            "debate": relations["source_id"].map(debate).to_numpy(),
            "abs_diff": (relations["target_id"].map(position) - relations["source_id"].map(position)).abs().to_numpy(),
        }
    )
    return frame.dropna(subset=["abs_diff"]).reset_index(drop=True)


def pandas_replicates(pairs: pd.DataFrame, weights: np.ndarray, labels: list[str]) -> np.ndarray:
    """Row path: per replicate, the rows of each drawn debate repeated as often as drawn, then groupby."""
    debates_sorted = sorted(pairs["debate"].unique())
    by_debate = {d: rows for d, rows in pairs.groupby("debate")}
    out = np.empty((len(weights), len(labels)))
    for b, counts in enumerate(weights):
        drawn = [
            by_debate[d] for d, c in zip(debates_sorted, counts, strict=True) for _ in range(int(c)) if d in by_debate
        ]
        means = pd.concat(drawn).groupby("relation")["abs_diff"].mean()
        out[b] = means.reindex(labels).to_numpy()
    return out


def vectorised_replicates(pairs: pd.DataFrame, weights: np.ndarray, labels: list[str]) -> np.ndarray:
    groups = pairs["relation"].map({r: i for i, r in enumerate(labels)}).to_numpy()
    clusters = pd.factorize(pairs["debate"], sort=True)[0]
    return grouped_means(pairs["abs_diff"].to_numpy(), groups, len(labels), clusters, weights).replicates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--replicates", type=int, default=200)
    args = parser.parse_args(argv)
    root = resolve_data_dir()
    if root is None:
        print("no data folder: set ARGASSETS_DATA_DIR", file=sys.stderr)
        return 2
    start = time.perf_counter()
    inputs = prepare(root)
    print(f"prepared the inputs in {time.perf_counter() - start:.1f} s (untimed)")
    seconds, out = _time(lambda: whole_analysis(inputs), args.repeats)
    systems = out["positions"]["system"].nunique()
    verdict = "within" if seconds < TARGET_S else "OVER"
    print(
        f"whole analysis, {systems} systems: {seconds:.2f} s (median of {args.repeats}; {verdict} the {TARGET_S:.0f} s target)"
    )
    pairs = e1_pairs(out, inputs["relations"])
    labels = sorted(pairs["relation"].unique())
    weights = cluster_weights(pairs["debate"].nunique(), args.replicates)
    fast_s, fast = _time(lambda: vectorised_replicates(pairs, weights, labels), args.repeats)
    slow_s, slow = _time(lambda: pandas_replicates(pairs, weights, labels), 1)
    if not np.allclose(fast, slow, equal_nan=True):
        print("the two bootstrap paths disagree", file=sys.stderr)
        return 1
    print(
        f"E1 debate bootstrap, {args.replicates} replicates, {len(pairs)} pairs: grouped_means {fast_s * 1000:.1f} ms, "
        f"pandas concat+groupby {slow_s * 1000:.1f} ms, ratio {slow_s / fast_s:.0f}x (same replicates)"
    )
    return 0 if seconds < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
