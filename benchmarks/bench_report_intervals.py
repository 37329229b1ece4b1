"""Benchmark: what the intervals add to Study A's reports, on a finished run's tables.

Runs ``agreement_analysis``, ``cross_model_report``, ``variability_report`` and the ensemble's
report on the tables of a ``run-default`` (the Parquet copies beside its DuckDB file), each once
with the default intervals (2000 resamples over the topics, comparisons included) and once with
``settings=None`` (no intervals), and prints both times and the difference: the seconds the
intervals add to ``run-default``'s Study A reports. Study B's validation assets record their own
``interval_seconds`` in their materialisation metadata.

Usage::

    .venv/bin/python benchmarks/bench_report_intervals.py --tables var/argassets.tables
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import duckdb
import pandas as pd

from argassets.argument_quality.agreement_reports import (
    agreement_analysis,
    best_configuration,
    cross_model_report,
)
from argassets.argument_quality.configurations import model_info
from argassets.argument_quality.ensembles import ensemble_report
from argassets.argument_quality.variability_report import variability_report
from argassets.platform.stats.intervals import DEFAULT_SETTINGS

TABLES = ("aq_bt_scores", "aq_majority_votes", "webis_expert_comparisons", "webis_arguments")


def _read(folder: Path, name: str) -> pd.DataFrame:
    return duckdb.connect().sql(f"SELECT * FROM '{folder / name}/**/*.parquet'").df()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, required=True, help="the Parquet folder of a run (<db>.tables)")
    args = parser.parse_args(argv)
    scores, majority, experts, arguments = (_read(args.tables, name) for name in TABLES)
    info = model_info(majority[["model", "is_baseline", "scope"]].drop_duplicates(), None)
    report = agreement_analysis(scores, majority, experts, arguments, info, settings=None).report
    best = best_configuration(report) or best_configuration(report, baselines=True)
    members = sorted(majority["model"].unique())
    steps = {
        "agreement report": lambda s: agreement_analysis(scores, majority, experts, arguments, info, settings=s),
        "cross-model report": lambda s: cross_model_report(scores, majority, best, info, settings=s),
        "variability report": lambda s: variability_report(majority, info, settings=s),
        "ensemble report": lambda s: ensemble_report(
            majority, experts, arguments, members, "all", info=info, intervals=s
        ),
    }
    print(f"{majority['model'].nunique()} models, {len(report)} report rows; {DEFAULT_SETTINGS.describe()}")
    print(f"{'report':<20} {'with (s)':>9} {'without (s)':>12} {'added (s)':>10}")
    total = 0.0
    for name, step in steps.items():
        started = time.perf_counter()
        step(DEFAULT_SETTINGS)
        with_intervals = time.perf_counter() - started
        started = time.perf_counter()
        step(None)
        without = time.perf_counter() - started
        total += with_intervals - without
        print(f"{name:<20} {with_intervals:>9.1f} {without:>12.1f} {with_intervals - without:>10.1f}")
    print(f"{'total added':<20} {'':>9} {'':>12} {total:>10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
