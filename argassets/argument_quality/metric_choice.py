"""Does the answer depend on the metric? Study A's best configuration and the baselines' ranks, per metric.

By Cohen's κ the paper's best configuration leads and ``longer-wins`` sits far down; by Pearson
(and most other metrics) counting words leads. :func:`rank_by_metric` makes that a table from the
``mean`` rows of ``aq_agreement_report``, and :func:`metric_choice_section` puts it on the results
page with what each metric compares and on which basis (docs/aggregation.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from argassets.platform.reporting.results_page import Leaderboard, Section

#: The metrics compared, the headline first; MAE and RMSE are errors (lower is better).
CHOICE_METRICS = (
    "cohen_kappa",
    "krippendorff_alpha",
    "percent_agreement",
    "pearson",
    "spearman",
    "kendall",
    "mae",
    "rmse",
)
LOWER_IS_BETTER = ("mae", "rmse")
#: What each metric compares (shown beside it on the page).
METRIC_BASIS = {
    "cohen_kappa": "labels: the majority label (A, B, Tie) per expert comparison against the experts', chance-corrected",
    "krippendorff_alpha": "labels, as κ (nominal α, two raters)",
    "percent_agreement": "labels: share of expert comparisons with the experts' label (0-100)",
    "pearson": "ranking: Bradley-Terry scores per argument against the experts' z-scores",
    "spearman": "ranking, as Pearson, on ranks",
    "kendall": "ranking, as Pearson, concordant pairs",
    "mae": "ranking: mean absolute error of the z-scored BT scores (lower is better)",
    "rmse": "ranking: root mean squared error of the z-scored BT scores (lower is better)",
}


def _configuration(frame: pd.DataFrame) -> pd.Series:
    return frame["model"].astype(str) + " / " + frame["strategy"].astype(str)


def _baseline_columns(ranked: pd.DataFrame, metric: str, baselines: Sequence[str]) -> dict[str, object]:
    """Each baseline's best rank (its strategies share one value) and value on ``metric``."""
    out: dict[str, object] = {}
    for name in baselines:
        rows = ranked[ranked["model"] == name]
        out[f"{name}_rank"] = int(rows["rank"].min()) if len(rows) else pd.NA
        out[f"{name}_value"] = float(rows[metric].iloc[0]) if len(rows) else float("nan")
    return out


def rank_by_metric(means: pd.DataFrame, metrics: Sequence[str] = CHOICE_METRICS) -> pd.DataFrame:
    """Per metric: the best configuration over every row (baselines and the paper's included), the best
    that is not a baseline, and each baseline's rank (1 = best; ties share the better rank) of ``n_ranked``."""
    baselines = sorted(means.loc[means["kind"] == "baseline", "model"].astype(str).unique())
    rows = []
    for metric in [m for m in metrics if m in means.columns]:
        values = pd.to_numeric(means[metric], errors="coerce")
        ranked = means[values.notna()].assign(value=values[values.notna()])
        if ranked.empty:
            continue
        lower = metric in LOWER_IS_BETTER
        ranked = ranked.assign(rank=ranked["value"].rank(method="min", ascending=lower).astype(int))
        ranked = ranked.sort_values("rank", kind="stable")
        judges = ranked[ranked["kind"] != "baseline"]
        best, best_judge = ranked.iloc[0], (judges.iloc[0] if len(judges) else None)
        rows.append(
            {
                "metric": metric,
                "compares": METRIC_BASIS.get(metric, ""),
                "n_ranked": len(ranked),
                "best": _configuration(ranked.iloc[[0]]).iloc[0],
                "best_kind": best["kind"],
                "best_value": float(best["value"]),
                "best_judge": _configuration(judges.iloc[[0]]).iloc[0] if best_judge is not None else "",
                "best_judge_value": float(best_judge["value"]) if best_judge is not None else float("nan"),
                **_baseline_columns(ranked, metric, baselines),
            }
        )
    return pd.DataFrame(rows)


BASIS_SAYS = (
    "Basis: the measured and baseline rows are computed here, on the majority label of the 3 runs for every "
    "expert comparison of a dimension (label metrics) and on the Bradley-Terry scores of all arguments of a "
    "topic (ranking metrics), then averaged over the three dimensions. The published rows are the paper's own "
    "figures: its κ and percent agreement cannot both be on that basis (the chance agreement they imply is "
    "below the least any judge can have on these comparisons; docs/aggregation.md), so compare a published κ "
    "with a measured one with care."
)


def _flip_sentence(table: pd.DataFrame, headline: str, versus: str, baseline: str) -> str:
    """One sentence: the best configuration and the baseline's rank by the headline and by ``versus``."""
    rows = table.set_index("metric")
    if headline not in rows.index or versus not in rows.index or f"{baseline}_rank" not in rows.columns:
        return ""
    parts = []
    for metric in (headline, versus):
        row = rows.loc[metric]
        parts.append(
            f"by {metric} the best is {row['best']} ({row['best_value']:.3f}) and {baseline} ranks "
            f"{row[f'{baseline}_rank']} of {row['n_ranked']} ({row[f'{baseline}_value']:.3f})"
        )
    return "The answer depends on the metric: " + "; ".join(parts) + "."


def metric_choice_section(means: pd.DataFrame, headline: str = "cohen_kappa", versus: str = "pearson") -> Section:
    """The page's section "Does the answer depend on the metric?" from the ``mean`` rows of the report."""
    table = rank_by_metric(means)
    says = (
        f"The leaderboard ranks by {headline}; the README's finding that counting words (longer-wins) beats "
        f"every published LLM is by {versus}. "
        + _flip_sentence(table, headline, versus, "longer-wins")
        + " Label metrics score the label each expert comparison gets; ranking metrics score the order of "
        "all arguments that the Bradley-Terry fit makes of those labels, and the experts' scores follow "
        "argument length (see Length bias), so an order by length can correlate well with the experts while "
        "its labels of single pairs agree less. Choose the metric by the question: a judge that labels pairs "
        f"(κ) or one that ranks arguments ({versus}). " + BASIS_SAYS
    )
    board = Leaderboard(
        "Best configuration and the baselines' rank, per metric (mean over dimensions)",
        table,
        keys=list(table.columns),
        headline=None,
        kind_column="best_kind",
        note="best: over every row, baselines and the paper's configurations included; best_judge: the best "
        "that is not a baseline; <baseline>_rank: 1 is best, ties share the better rank, of n_ranked.",
    )
    return Section("Does the answer depend on the metric?", says, tables=[board], anchor="metric-choice")
