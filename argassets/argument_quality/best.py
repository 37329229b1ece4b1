"""The best configuration of Study A's agreement report: the headline metric and its candidates."""

from __future__ import annotations

import pandas as pd

from argassets.argument_quality.bt_scores import MEAN_DIMENSION
from argassets.argument_quality.scope import DIMENSIONS

__all__ = ["HEADLINE_METRIC", "best_candidates", "best_configuration"]

#: The metric that ranks configurations ("best", the results page's headline): Cohen's kappa of
#: the configuration's majority labels against the expert labels, on its ``mean`` row.
HEADLINE_METRIC = "cohen_kappa"


def best_candidates(
    report: pd.DataFrame, metric: str = HEADLINE_METRIC, *, baselines: bool = False
) -> list[tuple[str, str]]:
    """The (model, strategy) that may be "best", ranked by ``metric`` on their ``mean`` row.

    Candidates are the non-baseline configurations (a word-counting or random baseline is never
    "best"; ``baselines=True`` lets them in, for a reference when nothing else was judged) with a
    defined ``metric``, preferring those with full scope covering all three dimensions. Ties are
    broken by model and strategy name. Published rows (``kind = "published"``) are never candidates.
    """
    if "kind" in report.columns:
        report = report[report["kind"] != "published"]
    means = report[report["dimension"] == MEAN_DIMENSION].copy()
    if not baselines and "is_baseline" in means.columns:
        means = means[~means["is_baseline"].fillna(False).astype(bool)]
    means = means[means[metric].notna()] if metric in means.columns else means.iloc[0:0]
    if means.empty:
        return []
    dims = report[report["dimension"] != MEAN_DIMENSION].groupby(["model", "strategy"])["dimension"].nunique()
    complete = pd.Series(
        [dims.get((m, s), 0) == len(DIMENSIONS) for m, s in zip(means["model"], means["strategy"], strict=True)],
        index=means.index,
    )
    if "scope" in means.columns:
        complete &= means["scope"] == "full"
    pool = means[complete] if complete.any() else means
    pool = pool.sort_values([metric, "model", "strategy"], ascending=[False, True, True])
    return [(str(m), str(s)) for m, s in zip(pool["model"], pool["strategy"], strict=True)]


def best_configuration(
    report: pd.DataFrame, metric: str = HEADLINE_METRIC, *, baselines: bool = False
) -> tuple[str, str] | None:
    """The (model, strategy) with the highest ``metric`` on its ``mean`` row, or ``None`` (:func:`best_candidates`)."""
    candidates = best_candidates(report, metric, baselines=baselines)
    return candidates[0] if candidates else None
