"""Benchmark: how many comparisons a design needs to reach the full-data ranking, and how long the
design simulation takes.

1. Replay (docs/study_design.md). On a complete set of labels (the Webis experts' 13,952
   comparisons per dimension; the ``longer-wins`` baseline's verdicts on the same pairs), each
   design reveals labels round by round: ``random`` and ``adaptive``
   (:func:`argassets.platform.design.adaptive.plan_round`). Printed per partition and dimension:
   the comparisons (and share of the pool) revealed when Spearman's rho with the full-data BT
   strengths first reached the target (0.95), median and [min, max] over seeds; where two stopping
   rules would have stopped each design and the rho with the full data there (predicted agreement
   >= 0.95; rank stability >= 0.99 against the estimate with 25% fewer pairs); the target of issue 33 (adaptive <= 35% on every dimension); and two
   reference lines: the Webis authors' claim ("up to 93% cost savings", read as 7% of all
   within-topic pairs) and a first-order ceiling of any design, the Pearson correlation the best
   choice of pairs could reach (omitting the pairs with the least leverage on the full-data
   estimate; Bradley-Terry linearised at the full-data strengths).
2. Timing. The pairwise design simulation for 100 items (the political paper's 934-pair design,
   1..10 judgments per pair, 100 replications), with the platform's batched BT engine and with
   ``choix`` per matrix (the named alternative), in the same run.

Usage::

    .venv/bin/python benchmarks/bench_design_replay.py [--seeds 3] [--round-size 0.025]
        [--partitions experts,longer-wins] [--dimensions logic,rhetoric,dialectic]
        [--labels-from PATH/argassets.tables --model NAME --strategy zero]

``--labels-from`` replays a complete partition read from a run-default's Parquet tables
(``aq_majority_votes``) instead of computing the ``longer-wins`` verdicts with the platform's
baseline judge. The data folder is ``$ARGASSETS_DATA_DIR`` or ``../shared/data``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from argassets.argument_quality.corpus import find_corpus_files, load_corpus
from argassets.argument_quality.study_design import argument_key
from argassets.platform.design.adaptive import AdaptiveSettings, ComparisonGraph
from argassets.platform.design.information import fisher_information
from argassets.platform.design.pairs import strata_pairs
from argassets.platform.design.replay import comparisons_to_target, full_strengths, replay_design
from argassets.platform.design.simulation import AnnotatorPool, simulate_pairwise
from argassets.platform.judging.engines.baselines import LongerWinsJudge
from argassets.platform.judging.interface import ChatRequest
from argassets.platform.pairwise.labels import encode_labels
from argassets.platform.pairwise.matrices import count_matrices
from argassets.platform.paths import resolve_data_dir

TARGET_SHARE = 0.35
#: "With up to 93% cost savings" (Gienapp et al., ACL 2020): 7% of an exhaustive design.
WEBIS_CLAIMED_SHARE_OF_EXHAUSTIVE = 0.07
STABILITY = 0.99


def cpu_description() -> str:
    model = platform.processor() or platform.machine()
    flags = ""
    try:
        info = Path("/proc/cpuinfo").read_text()
        model = next(line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name"))
        flags = "AVX-512" if "avx512f" in info else "AVX2" if "avx2" in info else "no AVX2"
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{model} ({flags}), {os.cpu_count()} cores, load average {load}"


def candidates_of(comparisons: pd.DataFrame) -> pd.DataFrame:
    keys = ("topic_id", "discussion_id_{}", "argument_id_{}")
    side = {s: [argument_key(*k) for k in zip(*(comparisons[c.format(s)] for c in keys), strict=True)] for s in "ab"}
    return pd.DataFrame(
        {
            "pair_id": comparisons["comparison_id"],
            "group": comparisons["topic_id"],
            "item_a": side["a"],
            "item_b": side["b"],
        }
    )


def longer_wins_labels(comparisons: pd.DataFrame, arguments: pd.DataFrame) -> pd.Series:
    """The platform's ``longer-wins`` baseline judge on every comparison (A, B or Tie)."""
    text = {
        (t, d, a): x
        for t, d, a, x in arguments[["topic_id", "discussion_id", "argument_id", "text"]].itertuples(index=False)
    }
    judge = LongerWinsJudge()
    answers = []
    for row in comparisons.itertuples(index=False):
        context = {
            "text_a": text[(row.topic_id, row.discussion_id_a, row.argument_id_a)],
            "text_b": text[(row.topic_id, row.discussion_id_b, row.argument_id_b)],
        }
        answers.append(judge.answer(ChatRequest(row.comparison_id, "", "", ("A", "B", "Tie"), context=context)))
    return pd.Series(answers, index=comparisons.index)


def tables_labels(folder: Path, model: str, strategy: str) -> pd.DataFrame:
    votes = pd.read_parquet(folder / "aq_majority_votes")
    picked = votes[(votes["model"] == model) & (votes["strategy"] == strategy)]
    if picked.empty:
        raise SystemExit(f"{folder}/aq_majority_votes has no rows of model {model!r}, strategy {strategy!r}")
    return picked[["comparison_id", "majority_label"]]


def leverage_ceiling(
    candidates: pd.DataFrame, labels: pd.DataFrame, settings: AdaptiveSettings, full: pd.DataFrame, share: float
) -> float:
    """First-order ceiling of Pearson's r with the full-data strengths for any design of ``share``.

    Linearised at the full-data strengths, the part of the full estimate that the omitted labels
    decide has variance ``sum_k v_k ||I^+ x_k||^2`` over the omitted pairs k (``v_k = p(1-p)``,
    ``I`` the full Fisher information); keeping the pairs with the largest terms is the best a
    design could do, and ``r <= sqrt(1 - omitted / var(theta))``.
    """
    graph = ComparisonGraph.build(candidates)
    codes = encode_labels(labels.set_index("pair_id").loc[candidates["pair_id"], "label"])
    counts = count_matrices(
        graph.width, graph.group, graph.n_groups, graph.item_a, graph.item_b, codes, settings.bt.ties
    )
    theta = np.zeros((graph.n_groups, graph.width))
    theta[graph.items["gcode"], graph.items["index"]] = full["strength"].to_numpy()
    info = fisher_information(theta, counts)
    terms = np.zeros(len(candidates))
    for g in range(graph.n_groups):
        k = np.flatnonzero(graph.group == g)
        inverse = np.linalg.pinv(info[g], hermitian=True)
        x = inverse[:, graph.item_a[k]] - inverse[:, graph.item_b[k]]
        p = 1.0 / (1.0 + np.exp(theta[g, graph.item_b[k]] - theta[g, graph.item_a[k]]))
        terms[k] = p * (1 - p) * (x * x).sum(axis=0)
    kept = int(round(share * len(terms)))
    omitted = np.sort(terms)[::-1][kept:].sum()
    variance = full.groupby("group")["strength"].apply(lambda s: ((s - s.mean()) ** 2).sum()).sum()
    return float(np.sqrt(max(0.0, 1.0 - omitted / variance)))


def _first(trajectory: pd.DataFrame, column: str, threshold: float) -> tuple[float, float]:
    """(share, rho with the full data) of the first round where ``column`` reached ``threshold``."""
    fired = trajectory[trajectory[column] >= threshold]
    return (float(fired["share"].iloc[0]), float(fired["spearman"].iloc[0])) if len(fired) else (np.nan, np.nan)


def _median(values: list[tuple[float, float]]) -> tuple[float, float, int]:
    """Median (share, rho) of the seeds where a rule fired, and how many did not fire."""
    fired = [v for v in values if not np.isnan(v[0])]
    share, rho = np.median(fired, axis=0) if fired else (np.nan, np.nan)
    return float(share), float(rho), len(values) - len(fired)


def replay_row(name: str, dimension: str, candidates, labels, settings, seeds, target, beyond) -> dict:
    full = full_strengths(candidates, labels, settings)
    row: dict = {"partition": name, "dimension": dimension, "pool": len(candidates)}
    for design in ("random", "adaptive"):
        needed, agreement, stable = [], [], []
        for seed in range(seeds):
            run = dataclasses.replace(settings, seed=seed)
            trajectory = replay_design(candidates, labels, design, run, target, full, beyond)
            needed.append(comparisons_to_target(trajectory, target) or np.nan)
            agreement.append(_first(trajectory, "predicted_agreement", target))
            stable.append(_first(trajectory, "stability", STABILITY))
        shares = np.array(needed, dtype=float) / len(candidates)
        row[design] = (np.nanmedian(shares), np.nanmin(shares), np.nanmax(shares), int(np.isnan(shares).sum()))
        row[f"{design}_agreement_stop"] = _median(agreement)
        row[f"{design}_stable_stop"] = _median(stable)
    row["ceiling_35"] = leverage_ceiling(candidates, labels, settings, full, TARGET_SHARE)
    return row


def exhaustive_pairs(candidates: pd.DataFrame) -> int:
    items = pd.concat(
        [
            candidates[["group", "item_a"]].set_axis(["g", "i"], axis=1),
            candidates[["group", "item_b"]].set_axis(["g", "i"], axis=1),
        ]
    )
    return int(sum(n * (n - 1) // 2 for n in items.drop_duplicates().groupby("g").size()))


def _stop_cell(stop: tuple[float, float, int]) -> str:
    share, rho, missed = stop
    text = "none" if np.isnan(share) else f"{share:5.1%} (rho {rho:.3f})"
    return text + (f" +{missed} none" if missed and not np.isnan(share) else "")


def print_replay(rows: list[dict], target: float, beyond: float) -> bool:
    print(
        f"\ncomparisons to reach Spearman >= {target} with the full-data BT strengths: median share [min, max] over seeds"
    )
    print(
        f"{'partition':<12} {'dimension':<10} {'pool':>6} {'random':>22} {'adaptive':>22} {'ratio':>6} {'ceiling@35%':>11}"
    )
    met = True
    for r in rows:
        cells = []
        for design in ("random", "adaptive"):
            med, low, high, never = r[design]
            cells.append(f"{med:6.1%} [{low:5.1%}, {high:5.1%}]" + (f" {never} never" if never else ""))
        ratio = r["adaptive"][0] / r["random"][0]
        print(
            f"{r['partition']:<12} {r['dimension']:<10} {r['pool']:>6} {cells[0]:>22} {cells[1]:>22} {ratio:>6.2f} {r['ceiling_35']:>11.3f}"
        )
        met &= bool(r["adaptive"][2] <= TARGET_SHARE)
    print(
        f"\nwhere each stopping rule would have stopped (median share and the rho with the full data there; "
        f"'none': not within {beyond:.0%} of the pool after the target)"
    )
    print(
        f"{'partition':<12} {'dimension':<10} {'design':<9} {'predicted agreement >= ' + str(target):>28} {'rank stable >= ' + str(STABILITY) + ' (lag 25%)':>30}"
    )
    for r in rows:
        for design in ("random", "adaptive"):
            agreement, stable = _stop_cell(r[f"{design}_agreement_stop"]), _stop_cell(r[f"{design}_stable_stop"])
            print(f"{r['partition']:<12} {r['dimension']:<10} {design:<9} {agreement:>28} {stable:>30}")
    return met


def time_simulation(replications: int) -> None:
    bins = [1] * 13 + [2] * 13 + [3] * 13 + [4] * 14 + [5] * 14 + [6] * 14 + [7] * 14 + [8] * 5
    pairs = strata_pairs(list(range(100)), bins, 44, 22, seed=0)
    index = np.c_[pairs["item_1"].to_numpy(), pairs["item_2"].to_numpy()]
    pool = AnnotatorPool(strength_sd=0.66, tie_share=0.26)
    print(f"\ndesign simulation, 100 items, {len(index)} pairs, 1..10 judgments per pair, {replications} replications")
    seconds = {}
    for engine in ("batched", "choix"):
        start = time.perf_counter()
        simulate_pairwise(index, 100, pool, range(1, 11), replications, seed=0, engine=engine)  # type: ignore[arg-type]
        seconds[engine] = time.perf_counter() - start
        print(f"  BT engine {engine:<8} {seconds[engine]:7.1f} s")
    print(f"  ratio choix / batched: {seconds['choix'] / seconds['batched']:.1f}x; target: under 30 s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-round", type=float, default=0.05)
    parser.add_argument("--round-size", type=float, default=0.025)
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument(
        "--beyond",
        type=float,
        default=0.1,
        help="share of the pool replayed after the target, to see the stopping rules",
    )
    parser.add_argument("--partitions", default="experts,longer-wins")
    parser.add_argument("--dimensions", default="logic,rhetoric,dialectic")
    parser.add_argument("--labels-from", type=Path, default=None, help="a run-default's Parquet tables folder")
    parser.add_argument("--model", default="longer-wins")
    parser.add_argument("--strategy", default="zero")
    parser.add_argument("--replications", type=int, default=100, help="of the timed design simulation")
    args = parser.parse_args(argv)
    root = resolve_data_dir()
    if root is None:
        print("no data folder: set ARGASSETS_DATA_DIR", file=sys.stderr)
        return 2
    print(f"CPU: {cpu_description()}")
    started = time.perf_counter()
    arguments, comparisons = load_corpus(find_corpus_files(root / "webis-argquality20"))
    settings = AdaptiveSettings(first_round=args.first_round, round_size=args.round_size)
    rows = []
    for dimension in args.dimensions.split(","):
        part = comparisons[comparisons["dimension"] == dimension].reset_index(drop=True)
        candidates = candidates_of(part)
        for name in args.partitions.split(","):
            if name == "experts":
                labels = part["label"]
            elif args.labels_from is not None:
                votes = tables_labels(args.labels_from, args.model, args.strategy).set_index("comparison_id")
                labels = part["comparison_id"].map(votes["majority_label"])
                name = f"{args.model}/{args.strategy}"
            elif any(r["partition"] == name for r in rows):
                continue  # the baseline ignores the dimension, and every dimension has the same pairs
            else:
                labels = longer_wins_labels(part, arguments)
            frame = pd.DataFrame({"pair_id": candidates["pair_id"], "label": labels.to_numpy()})
            shown = "any" if name == "longer-wins" and args.labels_from is None else dimension
            rows.append(replay_row(name, shown, candidates, frame, settings, args.seeds, args.target, args.beyond))
            print(f"  {name} / {dimension} replayed ({time.perf_counter() - started:.0f} s)", flush=True)
    met = print_replay(rows, args.target, args.beyond)
    pool, exhaustive = len(candidates), exhaustive_pairs(candidates)
    print(
        f"\nreference (Webis authors): their design judged {pool} of the {exhaustive} within-topic pairs "
        f"({pool / exhaustive:.1%}); 'up to 93% cost savings' read as 7% of all pairs = "
        f"{WEBIS_CLAIMED_SHARE_OF_EXHAUSTIVE * exhaustive:.0f} comparisons = "
        f"{WEBIS_CLAIMED_SHARE_OF_EXHAUSTIVE * exhaustive / pool:.1%} of this pool"
    )
    print(
        f"target (issue 33): adaptive reaches rho >= {args.target} with <= {TARGET_SHARE:.0%} on every row: {'MET' if met else 'NOT MET'}"
    )
    print(f"replay took {time.perf_counter() - started:.0f} s; {args.seeds} seeds per design")
    time_simulation(args.replications)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
