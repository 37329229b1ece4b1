"""Adaptive judging against judging every pair, in the same run, on Study A's real comparisons.

The judge is the deterministic ``longer-wins`` baseline (no model needed); the adaptive partition is
judged by the platform's own round loop (``judge_in_rounds`` with Study A's ``adaptive_pairs``),
the alternative judges every pair of the same cells. Per cell: the stop reason, the share judged,
and Spearman's rho between the BT strengths of the judged pairs and those of every pair.

    python benchmarks/bench_adaptive_judging.py                       # zero-shot, rank stability 0.95
    python benchmarks/bench_adaptive_judging.py --threshold 0.99 --strategy few

``--tables`` is a folder of a run-default's Parquet copies (``aq_prompts``,
``webis_expert_comparisons``, ``webis_arguments``), by default the baseline run's.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas as pd
from scipy import stats

from argassets.argument_quality.judgments import adaptive_pairs, build_requests, judgment_table
from argassets.platform.design.adaptive import round_scores
from argassets.platform.judging.adaptive_rounds import AdaptiveOutcome, check_pairs, judge_in_rounds
from argassets.platform.judging.engines.baselines import LongerWinsJudge
from argassets.platform.judging.interface import CachedCompletion, ChatRequest, SamplingParams
from argassets.platform.registry.adaptive import AdaptiveJudging
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.study import RequestSet

DEFAULT_TABLES = Path("/work/baseline/argassets.tables")
SAMPLING = SamplingParams(temperature=1.0, top_p=1.0, seed=0, max_tokens=16)


class Judging:
    """Study A's requests of one strategy, judged by longer-wins (one run), as the judging step sees them."""

    def __init__(self, tables: Path, strategy: str):
        prompts = pd.read_parquet(tables / "aq_prompts")
        comparisons = pd.read_parquet(tables / "webis_expert_comparisons")
        arguments = pd.read_parquet(tables / "webis_arguments")
        prompts = prompts[prompts["strategy"] == strategy].reset_index(drop=True)
        requests, items = build_requests(prompts, comparisons, arguments)
        self.asked = RequestSet(requests, items=items)
        inputs = {"webis_expert_comparisons": comparisons}
        self.pairs = check_pairs(adaptive_pairs(self.asked, inputs), requests, "benchmark")
        self.judge = LongerWinsJudge()
        self.sent = 0

    def send(self, requests: list[ChatRequest]) -> list[CachedCompletion]:
        self.sent += len(requests)
        answers = self.judge.complete(requests, SAMPLING, [0])
        return [
            CachedCompletion(r.key, c.run, "longer-wins", "", "", c.text, None, 0.0, "", "", "longer-wins", False)
            for r, runs in zip(requests, answers, strict=True)
            for c in runs
        ]

    def labels(self, completions: list[CachedCompletion]) -> pd.DataFrame:
        verdicts = judgment_table(self.asked, completions, "longer-wins")["label"].sort_index().tolist()
        keys = pd.DataFrame({"key": [c.key for c in completions], "label": verdicts})
        return keys.join(self.pairs.set_index("key")[["cell", "pair_id"]], on="key")


def compare(judging: Judging, outcome: AdaptiveOutcome, everything: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: the stop, the share judged and the rho with the strengths of every pair."""
    adaptive = judging.labels(outcome.completions)
    rows = []
    for cell in outcome.cells:
        candidates = judging.pairs[judging.pairs["cell"] == cell.cell].drop(columns=["key", "cell"])
        strengths = [
            round_scores(candidates, labels[labels["cell"] == cell.cell][["pair_id", "label"]].assign(round=0))
            for labels in (adaptive, everything)
        ]
        rho = float(stats.spearmanr(strengths[0]["strength"], strengths[1]["strength"])[0])
        rows.append(
            {
                "cell": cell.cell,
                "stop": cell.reason,
                "rounds": cell.rounds,
                "judged": f"{cell.judged_pairs} / {cell.candidate_pairs}",
                "share": f"{cell.share_judged:.1%}",
                "stability": round(cell.stability, 3),
                "rho_to_every_pair": round(rho, 3),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, default=DEFAULT_TABLES)
    parser.add_argument("--strategy", default="zero", choices=["zero", "few", "cot"])
    parser.add_argument("--stop", default="rank_stability")
    parser.add_argument("--threshold", type=float, default=0.95)
    parser.add_argument("--max-share", type=float, default=0.5)
    parser.add_argument("--first-round", type=float, default=0.05)
    parser.add_argument("--round-size", type=float, default=0.025)
    args = parser.parse_args()
    option = AdaptiveJudging(
        stop=args.stop,
        threshold=args.threshold,
        max_share=args.max_share,
        first_round=args.first_round,
        round_size=args.round_size,
    )
    judging = Judging(args.tables, args.strategy)
    started = time.perf_counter()
    everything = judging.labels(judging.send(judging.asked.requests))
    every_s, every_sent = time.perf_counter() - started, judging.sent
    judging.sent = 0
    started = time.perf_counter()
    outcome = judge_in_rounds(
        judging.asked.requests,
        judging.pairs,
        option.settings(),
        judging.send,
        lambda completions: judging.labels(completions)["label"].tolist(),
    )
    adaptive_s = time.perf_counter() - started
    print(f"{option.describe()}; strategy {args.strategy}; load {os.getloadavg()[0]:.1f}")
    print(markdown_table(compare(judging, outcome, everything)))
    print(
        f"\nrequests sent: adaptive {judging.sent}, every pair {every_sent} "
        f"(ratio {judging.sent / every_sent:.2f}); wall time (judge + planning): adaptive {adaptive_s:.1f} s, "
        f"every pair {every_s:.1f} s"
    )


if __name__ == "__main__":
    main()
