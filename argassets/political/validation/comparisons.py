"""Which Study B systems are distinguishable: each against the top one and against the baselines.

On each facet (a pointwise partition, a pairwise subset) and metric, the *top* is the system with
the highest figure among the candidates (the platform's models and ensembles; the human-study
files' copies of the same predictions only when the registry imports none); every other system
is compared with it by the paired difference on the same debate resamples, and every system with
each baseline. p-values are adjusted within each family (role, reference, facet, metric). The
*best set* of a facet and metric is the top and every candidate not significantly worse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.platform.stats.intervals import BootstrapSettings
from argassets.platform.stats.paired import best_set
from argassets.platform.stats.tables import interval_frame, verdicts
from argassets.political.validation.intervals import UNIT, run_bootstrap

__all__ = [
    "CANDIDATE_KINDS",
    "COMPARISON_COLUMNS",
    "Planned",
    "ValidationUncertainty",
    "best_set_flags",
    "comparison_frame",
    "plan_comparisons",
    "validation_uncertainty",
]

#: Kinds that may be the top: what the platform measured (models, ensembles).
CANDIDATE_KINDS = ("model", "ensemble")
#: Fallback candidates when the registry imports none: the human-study files' predictions.
FILE_KINDS = ("published", "published-ensemble")
BASELINE_KIND = "baseline"

COMPARISON_COLUMNS = [
    "task",
    "facet",
    "metric",
    "system",
    "kind",
    "role",
    "reference",
    "rank",
    "value",
    "reference_value",
    "difference",
    "difference_low",
    "difference_high",
    "p_value",
    "p_adjusted",
    "adjustment",
    "level",
    "verdict",
    "in_best_set",
    "interval_method",
    "interval_seed",
]


@dataclass(frozen=True)
class Planned:
    """One comparison: report rows ``row`` against ``reference_row`` (indices of the report) on ``metric``."""

    row: int
    reference_row: int
    metric: str
    role: str
    rank: int


def _candidates(report: pd.DataFrame, facet_column: str, facet: str, metric: str) -> pd.DataFrame:
    rows = report[(report[facet_column] == facet) & np.isfinite(report[metric].astype(float))]
    chosen = rows[rows["kind"].isin(CANDIDATE_KINDS)]
    if chosen.empty:
        chosen = rows[rows["kind"].isin(FILE_KINDS)]
    return chosen.sort_values([metric, "system"], ascending=[False, True], kind="stable")


def plan_comparisons(report: pd.DataFrame, facet_column: str, metrics: Sequence[str]) -> list[Planned]:
    """Per facet and metric: every candidate against the top, every system against each baseline."""
    planned = []
    for facet in dict.fromkeys(report[facet_column]):
        for metric in metrics:
            ranked = _candidates(report, facet_column, facet, metric)
            if ranked.empty:
                continue
            top = int(ranked.index[0])
            for rank, row in enumerate(ranked.index[1:], start=2):
                planned.append(Planned(int(row), top, metric, "top", rank))
            rows = report[(report[facet_column] == facet) & np.isfinite(report[metric].astype(float))]
            rank_of = {int(r): k for k, r in enumerate(ranked.index, start=1)}
            for baseline in rows.index[rows["kind"] == BASELINE_KIND]:
                for row in rows.index[~rows["kind"].isin((BASELINE_KIND, "human"))]:
                    planned.append(Planned(int(row), int(baseline), metric, "baseline", rank_of.get(int(row), 0)))
    return planned


def comparison_frame(
    report: pd.DataFrame,
    task: str,
    facet_column: str,
    planned: Sequence[Planned],
    differences: pd.DataFrame,
    settings: BootstrapSettings,
) -> pd.DataFrame:
    """The comparisons as rows (:data:`COMPARISON_COLUMNS`); ``differences`` from ``paired_bootstrap``, in ``planned`` order."""
    if not planned:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in COMPARISON_COLUMNS})
    rows = report.loc[[p.row for p in planned]].reset_index(drop=True)
    references = report.loc[[p.reference_row for p in planned]].reset_index(drop=True)
    frame = pd.DataFrame(
        {
            "task": task,
            "facet": rows[facet_column],
            "metric": [p.metric for p in planned],
            "system": rows["system"],
            "kind": rows["kind"],
            "role": [p.role for p in planned],
            "reference": references["system"],
            "rank": [p.rank for p in planned],
            "value": [float(report.at[p.row, p.metric]) for p in planned],
            "reference_value": [float(report.at[p.reference_row, p.metric]) for p in planned],
        }
    )
    for column in ("difference", "difference_low", "difference_high", "p_value", "p_adjusted", "adjustment"):
        frame[column] = differences[column].to_numpy()
    frame["level"] = settings.level
    frame["verdict"] = verdicts(
        frame["difference"].to_numpy(), frame["p_adjusted"].to_numpy(), settings.level, [False] * len(frame)
    )
    frame["in_best_set"] = _in_best_set(frame, settings.level)
    frame["interval_method"] = differences["interval_method"].to_numpy()
    frame["interval_seed"] = settings.seed
    return frame[COMPARISON_COLUMNS]


def _in_best_set(frame: pd.DataFrame, level: float) -> np.ndarray:
    """Per comparison row: whether its system is in the best set of its facet and metric (``top`` rows only)."""
    out = np.zeros(len(frame), dtype=bool)
    against = frame[frame["role"] == "top"]
    for _, group in against.groupby(["facet", "metric"], sort=False):
        top = str(group["reference"].iloc[0])
        differences = group.rename(columns={"system": "configuration"})
        members = best_set(list(group["system"]), differences, top, level)
        out[group.index.to_numpy()] = members
    return out


def best_set_flags(report: pd.DataFrame, comparisons: pd.DataFrame, facet_column: str, metric: str) -> np.ndarray:
    """Per report row: the top of its facet on ``metric`` or a candidate in its best set."""
    rows = comparisons[(comparisons["role"] == "top") & (comparisons["metric"] == metric)]
    members = set(zip(rows.loc[rows["in_best_set"], "facet"], rows.loc[rows["in_best_set"], "system"], strict=True))
    for facet in dict.fromkeys(report[facet_column]):
        ranked = _candidates(report, facet_column, facet, metric)
        if len(ranked):
            members.add((facet, str(ranked["system"].iloc[0])))
    return np.array(
        [(f, s) in members for f, s in zip(report[facet_column], report["system"], strict=True)], dtype=bool
    )


#: Ranges the interval bounds are clipped to (the small-cluster widening can pass 1).
RANGES = {
    **dict.fromkeys(("macro_f1", "micro_f1", "precision", "recall", "balanced_accuracy"), (0.0, 1.0)),
    "d_footrule": (0.0, 1.0),
    "d_tau": (0.0, 1.0),
    "alpha_nominal": (-np.inf, 1.0),
    "alpha_ordinal": (-np.inf, 1.0),
}


@dataclass(frozen=True)
class ValidationUncertainty:
    """A validation report with its interval columns and ``best_set``, and its comparisons."""

    report: pd.DataFrame
    comparisons: pd.DataFrame


#: Reference rankings fixed by construction (every argument equal; the humans' order reversed).
FIXED_BOUNDS = frozenset({"baseline:all-equal", "baseline:worst"})


def _bounds_without_intervals(report: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """The bounds' rows say why they have no interval: they are not estimates, and a resample's
    duplicated debates move their figure off the value they have by construction."""
    bound = report["system"].isin(FIXED_BOUNDS).to_numpy()
    if bound.any():
        for metric in metrics:
            report.loc[bound, [f"{metric}_low", f"{metric}_high"]] = np.nan
        report.loc[bound, "interval_method"] = "none: a bound fixed by construction"
    return report


def validation_uncertainty(
    report: pd.DataFrame,
    parts: object,
    outputs: list[tuple[int, str]],
    n_clusters: int,
    *,
    task: str,
    facet_column: str,
    metrics: Sequence[str],
    compared: Sequence[str],
    headline: str,
    settings: BootstrapSettings,
    adjustment: str = "holm",
) -> ValidationUncertainty:
    """Intervals of every figure, comparisons on the ``compared`` metrics, and ``best_set`` on ``headline``."""
    report = report.reset_index(drop=True)
    planned = plan_comparisons(report, facet_column, compared)
    pairs = [
        (
            (p.row, p.metric),
            (p.reference_row, p.metric),
            (p.role, str(report.at[p.reference_row, "system"]), str(report.at[p.row, facet_column]), p.metric),
        )
        for p in planned
    ]
    what = f"{task} validation"
    boot = run_bootstrap(parts, outputs, pairs, n_clusters, settings, what=what, adjustment=adjustment)  # type: ignore[arg-type]
    index = {((row,), metric): k for k, (row, metric) in enumerate(outputs)}
    rows = [(i,) for i in report.index]
    frame = interval_frame(rows, ["_row"], metrics, boot.levels, index, unit=UNIT, ranges=RANGES)
    out = _bounds_without_intervals(pd.concat([report, frame.drop(columns="_row")], axis=1), metrics)
    comparisons = comparison_frame(report, task, facet_column, planned, boot.differences, settings)
    out["best_set"] = best_set_flags(out, comparisons, facet_column, headline)
    return ValidationUncertainty(out, comparisons)
