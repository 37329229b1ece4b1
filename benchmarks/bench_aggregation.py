"""Benchmark: Study A aggregation and every report for 108 configurations at the real corpus's size.

Synthetic judgments (:mod:`argassets.argument_quality.synthetic`) of every expert comparison of the real
corpus by 12 models x 3 strategies x 3 dimensions x 3 runs (4,520,448 rows; one model is also
judged in the swapped order, +376,704 rows, so the position-bias report has work to do) go
through the library functions the assets call, timed one by one:

majority vote, expert BT, BT of every configuration (no bootstrap), agreement report,
best-configuration / cross-model report, variability report, ensemble (majority of the member
majorities + pooled BT), position-bias report, plots (best configuration + heat map), Markdown
rendering of every report.

The target is < 30 s wall time for all of these on 2 cores. The bootstrap of ``aq_bt_scores`` is
measured separately (``--bootstrap N``, default 200 replicates, over all 108 configurations, or
``--bootstrap-configs K`` of them and extrapolated).

Usage::

    .venv/bin/python benchmarks/bench_aggregation.py [--bootstrap 200] [--bootstrap-configs 108]

Needs the published data (``$ARGASSETS_DATA_DIR`` or ``../shared/data``). Prints a Markdown table
and writes ``benchmarks/results/bench_aggregation.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd

from argassets.argument_quality import (
    agreement_reports,
    bt_scores,
    ensembles,
    plots,
    position_bias,
    report_checks,
    variability_report,
)
from argassets.argument_quality import configurations as aq_configurations
from argassets.argument_quality.corpus import load_corpus, locate_corpus
from argassets.argument_quality.synthetic import SyntheticJudge, synthetic_judgments
from argassets.argument_quality.voting import majority_votes
from argassets.platform.paths import resolve_data_dir
from argassets.platform.reporting import presentation

N_MODELS = 12


class Timer:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def __call__(self, name: str, fn, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn(*args, **kwargs)
        self.rows.append({"step": name, "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu})
        return value


def judges() -> list[SyntheticJudge]:
    return [
        SyntheticJudge(
            f"model-{i:02d}",
            noise=0.3 + 0.15 * i,
            tie_band=0.2 + 0.02 * i,
            invalid_rate=0.005 * (i % 3),
            first_bias=0.5 if i == 0 else 0.0,
            swapped=i == 0,
            probabilities=i % 2 == 0,  # half the models report label probabilities: expected figures too
        )
        for i in range(N_MODELS)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", type=int, default=200, help="replicates (0: skip the bootstrap)")
    parser.add_argument("--bootstrap-configs", type=int, default=108, help="configurations bootstrapped")
    args = parser.parse_args()

    data = resolve_data_dir()
    if data is None:
        raise SystemExit("no published data: set ARGASSETS_DATA_DIR")
    arguments, experts = load_corpus(locate_corpus(data))
    started = time.perf_counter()
    judgments = synthetic_judgments(experts, arguments, judges(), seed=1)
    # As loaded from DuckDB: plain object columns.
    judgments = judgments.astype({c: object for c in ("judge_model", "strategy", "dimension", "order", "scope")})
    generated = time.perf_counter() - started
    print(f"synthetic judgments: {len(judgments):,} rows in {generated:.1f} s", flush=True)

    t = Timer()
    total_wall, total_cpu = time.perf_counter(), time.process_time()
    majority = t("majority votes", majority_votes, judgments)
    expert = t("expert BT", bt_scores.expert_bt_scores, experts, arguments)
    scores = t("BT, 108 configurations", bt_scores.llm_bt_scores, majority, experts, arguments)
    info = aq_configurations.model_info(judgments.drop_duplicates("judge_model"), None)
    agreement = t("agreement report", agreement_reports.agreement_report, scores, majority, experts, arguments, info)
    best = agreement_reports.best_configuration(agreement)
    cross = t("cross-model report", agreement_reports.cross_model_report, scores, majority, best, info)
    variability = t("variability report", variability_report.variability_report, majority, info)
    members = sorted(majority["model"].unique())
    ensemble, _, _ = t(
        "ensemble (12 members)", ensembles.ensemble_report, majority, experts, arguments, members, "all", info=info
    )
    bias = t("position-bias report", position_bias.position_bias_report, judgments, info)
    t(
        "plots (best + heat map)",
        lambda: (plots.plot_scores_vs_experts(scores, *best), plots.plot_agreement_heatmap(agreement)),
    )
    t(
        "Markdown tables",
        lambda: [presentation.markdown_table(r, max_rows=500) for r in (agreement, cross, variability, ensemble, bias)],
    )
    total = {"step": "**total**", "wall_s": time.perf_counter() - total_wall, "cpu_s": time.process_time() - total_cpu}
    rows = [*t.rows, total]
    configurations = len(majority[["model", "strategy", "dimension"]].drop_duplicates())
    assert configurations == 108, configurations
    assert len(agreement) == 108 + 36 and report_checks.metric_range_violations(agreement).empty
    assert len(expert) == 3 * 1269

    boot = None
    if args.bootstrap:
        keep = majority[["model", "strategy", "dimension"]].drop_duplicates().head(args.bootstrap_configs)
        subset = majority.merge(keep, on=["model", "strategy", "dimension"])
        wall, cpu = time.perf_counter(), time.process_time()
        boot_scores = bt_scores.llm_bt_scores(subset, experts, arguments, n_bootstrap=args.bootstrap, seed=1)
        boot_wall, boot_cpu = time.perf_counter() - wall, time.process_time() - cpu
        scale = 108 / len(keep)
        boot = {
            "replicates": args.bootstrap,
            "configurations": len(keep),
            "wall_s": boot_wall,
            "cpu_s": boot_cpu,
            "wall_s_108_configurations": boot_wall * scale,
            "mean_ci_width": float((boot_scores["ci_high"] - boot_scores["ci_low"]).mean()),
        }

    lines = ["| step | wall s | CPU s |", "|---|---:|---:|"]
    lines += [f"| {r['step']} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} |" for r in rows]
    print(f"\n{configurations} configurations x 13,952 comparisons x 3 runs ({len(judgments):,} judgment rows)\n")
    print("\n".join(lines))
    if boot:
        print(
            f"\nbootstrap: {boot['replicates']} replicates x {boot['configurations']} configurations: "
            f"{boot['wall_s']:.1f} s wall, {boot['cpu_s']:.1f} s CPU "
            f"(108 configurations: {boot['wall_s_108_configurations']:.0f} s); mean 95% interval width "
            f"{boot['mean_ci_width']:.3f} z"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"peak RSS: {peak:.0f} MiB; load average at the end: {os.getloadavg()[0]:.1f}")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_aggregation.json").write_text(
        json.dumps(
            {
                "judgment_rows": len(judgments),
                "configurations": configurations,
                "steps": rows,
                "bootstrap": boot,
                "peak_rss_mib": peak,
                "load_average": os.getloadavg()[0],
                "cpus": os.cpu_count(),
            },
            indent=2,
        )
    )
    pd.set_option("display.width", 200)


if __name__ == "__main__":
    main()
