"""Benchmark: the paper's knowledge base with its positions, end to end (import, pooling, Neo4j export).

    .venv/bin/python benchmarks/bench_published_kb.py [--no-neo4j]

On the published data (``$ARGASSETS_DATA_DIR`` or ../shared/data), with the functions the assets call,
each against a named alternative timed in the same run (both must give the same tables):

1. **import**: the released prompts, the index of the 23,300 rows, and the 22 published files read and
   keyed by KB argument (``political_predictions`` of the 22 partitions): the column-wise reader and
   the numpy expansion against the line-by-line reader (``json.loads`` per row) and the per-answer
   loop they replaced (kept below as :func:`read_by_line` and :func:`expand_by_row`); then
   ``model_stats``;
2. **E3 counts**: the 22 files read again for the E3 rule (``published_counts``), column-wise against
   line by line, and the score counts of ``model_stats`` (``count_scores``) against ``json.loads`` of
   every array;
3. **pooling**: E1, E2 and E3 (``pool_ensemble``), against the per-argument loop that pooled before
   (kept below as :func:`pool_ensemble_loop`);
4. **export**: the full KB with every model's and ensemble's five statistics into the Maven-fetched
   Neo4j test server (or ``$NEO4J_TEST_URI``), against the same KB exported without positions.

Prints one JSON line and writes it to ``benchmarks/results/published_kb.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argassets.platform.paths import resolve_data_dir  # noqa: E402
from argassets.platform.release_manifest import check_node_ids  # noqa: E402
from argassets.political import aif  # noqa: E402
from argassets.political import episodes as aif_episodes  # noqa: E402
from argassets.political import knowledge_base as kb_graph  # noqa: E402
from argassets.political import neo4j_export as nx  # noqa: E402
from argassets.political import neo4j_graph as ng
from argassets.political.assets.ensembles import ensemble_table, published_counts  # noqa: E402
from argassets.political.ensembles import pool_ensemble  # noqa: E402
from argassets.political.model_stats import (  # noqa: E402
    STATS_COLUMNS,
    count_scores,
    model_stats,
    scores_from_json,
    scores_to_json,
    summarise_scores,
)
from argassets.political.prompts import render_prompts  # noqa: E402
from argassets.political.published import (  # noqa: E402
    PUBLISHED_NODE_IDS,
    PUBLISHED_TSV_COLUMNS,
    parse_rows_by_line,
    published_file_counts,
    published_predictions_file,
    published_tsv_to_predictions,
    read_published_tsv,
)
from argassets.political.published_index import (  # noqa: E402
    RELEASED_PROMPTS,
    argument_published_rows,
    build_published_index,
    read_released_prompts,
)
from argassets.studies import load_registry  # noqa: E402
from benchmarks.neo4j_server import neo4j_server  # noqa: E402


def read_by_line(path: Path) -> pd.DataFrame:
    """The alternative reader: every line split and its score array parsed with ``json.loads`` (the
    previous implementation, still the reader of malformed files for its errors)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if tuple(name.strip() for name in lines[0].split("\t")) != PUBLISHED_TSV_COLUMNS:
        raise ValueError(f"{path}: not a published prediction file")
    frame = parse_rows_by_line(path, lines[1:])
    check_node_ids(frame["node_id"], path, PUBLISHED_NODE_IDS)
    return frame.sort_values("node_id").reset_index(drop=True)


def expand_by_row(
    published: pd.DataFrame, judge_model: str, n_repetitions: int, argument_rows: pd.DataFrame
) -> pd.DataFrame:
    """The alternative expansion: one Python tuple per answer (the previous implementation)."""
    keyed = argument_rows[["argument_id", "published_index"]].merge(
        published, left_on="published_index", right_on="node_id", how="left", sort=False
    )
    columns: dict[str, list] = {k: [] for k in ("argument_id", "published_index", "repetition", "raw_output")}
    columns.update({"score": [], "is_na": [], "is_valid": []})
    for key, node_id, values, na_count in zip(
        keyed["argument_id"].astype(str), keyed["node_id"], keyed["scores"], keyed["na_count"], strict=True
    ):
        answers = [
            (str(v), float(v), False, True) if 0 <= v <= 100 else (str(v), math.nan, False, False) for v in values
        ]
        answers += [("NA", math.nan, True, True)] * int(na_count)
        answers += [("", math.nan, False, False)] * (n_repetitions - len(answers))
        for repetition, (raw, score, na, valid) in enumerate(answers):
            for column, value in zip(columns, (key, int(node_id), repetition, raw, score, na, valid), strict=True):
                columns[column].append(value)
    return pd.DataFrame(
        {
            "judge_model": judge_model,
            **columns,
            "published_index": pd.array(columns["published_index"], dtype="Int64"),
            "repetition": np.asarray(columns["repetition"], dtype="int64"),
            "score": np.asarray(columns["score"], dtype=float),
            "is_na": np.asarray(columns["is_na"], dtype=bool),
            "is_valid": np.asarray(columns["is_valid"], dtype=bool),
        }
    )


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
    entries = [e for e in registry.models if published_predictions_file(e) is not None]
    files = [published.resolve(data) for e in entries if (published := published_predictions_file(e)) is not None]
    frames, import_s = timed(
        lambda: [
            published_tsv_to_predictions(read_published_tsv(path), e.name, 5, argument_rows=carried)
            for e, path in zip(entries, files, strict=True)
        ]
    )
    by_line, import_by_line_s = timed(
        lambda: [expand_by_row(read_by_line(path), e.name, 5, carried) for e, path in zip(entries, files, strict=True)]
    )
    for mine, reference in zip(frames, by_line, strict=True):
        pd.testing.assert_frame_equal(mine, reference[mine.columns], check_exact=True)
    predictions = pd.concat(frames, ignore_index=True)
    stats, stats_s = timed(model_stats, predictions)
    counts, counts_s = timed(published_counts, registry, data, [e.name for e in entries])
    counts_by_line, counts_by_line_s = timed(
        lambda: {e.name: published_file_counts(read_by_line(path), 5) for e, path in zip(entries, files, strict=True)}
    )
    if counts != counts_by_line:
        raise SystemExit("the E3 counts differ between the two readers")
    n_scores, count_s = timed(count_scores, stats["scores"])
    parsed, parse_s = timed(lambda: stats["scores"].map(lambda text: len(scores_from_json(text))).to_numpy())
    if not (n_scores == parsed).all():
        raise SystemExit("count_scores differs from json.loads")
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
        "import_22_files_by_line_s": round(import_by_line_s, 2),
        "import_speedup_vs_by_line": round(import_by_line_s / import_s, 1),
        "e3_counts_22_files_s": round(counts_s, 2),
        "e3_counts_by_line_s": round(counts_by_line_s, 2),
        "score_counts_s": round(count_s, 3),
        "score_counts_json_s": round(parse_s, 2),
        "model_stats_s": round(stats_s, 2),
        "pooling_s": round(pool_s, 2),
        "pooling_loop_s": round(loop_s, 2),
        "pooling_speedup_vs_loop": round(loop_s / pool_s, 1),
    }
    if not args.no_neo4j:
        properties = nx.prediction_properties([stats, ensembles])
        with neo4j_server() as settings:
            driver = ng.connect(settings)
            ng.clear_graph(driver, settings.database)
            warmup = nx.export_kb(driver, settings.database, arguments, relations)  # JVM warm-up, not reported
            plain = nx.export_kb(driver, settings.database, arguments, relations)
            with_positions = nx.export_kb(driver, settings.database, arguments, relations, predictions=properties)
            counts_ok = ng.graph_counts(driver, settings.database) == ng.expected_counts(arguments, relations)
            driver.close()
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
