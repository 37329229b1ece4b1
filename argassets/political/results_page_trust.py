"""Study B's results page: the trust table (the reliability battery, the annotators' row on top)."""

from __future__ import annotations

import pandas as pd

from argassets.platform.reporting.results_page import Leaderboard, Section
from argassets.political.reliability import BATTERY_METRICS, FLAGGED_PROPERTY, HUMANS, SCOPES

TRUST_ANCHOR = "trust"
TRUST_SAYS = (
    "Each cell: the figure and its 95% interval over debates. alpha_score: interval Krippendorff alpha of the "
    "scores across a judge's 5 repetitions; alpha_na: nominal alpha of the NA call across them (the annotators' "
    "row: across the 3 annotators, 'not political' as NA); na_share: answers that are NA; na_inconsistent_share: "
    "arguments NA in some but not all repetitions (annotators: items they split on); share_50, share_extremes "
    "(0 or 100), spread (SD of the scores): scale use. Flags: a figure whose whole interval lies past its "
    "tolerance. Tabs: the pointwise study's 1,000 arguments (beside the annotators) or the whole KB. "
    "Agreement with the humans is the pointwise validation's; transitivity is 0 by construction for a "
    "pointwise score (a score order cannot cycle), so it is not shown. How to read it: docs/reliability.md."
)


def _cell(estimate: float, low: float, high: float, method: str) -> str:
    """``figure [low, high]``, the figure alone without an interval, or why it is missing."""
    if pd.notna(low):
        return f"{estimate:.3f} [{low:.3f}, {high:.3f}]"
    if pd.notna(estimate):
        return f"{estimate:.3f}"
    return "not measured" if "no score" in str(method) else "undefined"


def trust_table(battery: pd.DataFrame) -> pd.DataFrame:
    """One row per (system, scope), the annotators first; one ``figure [low, high]`` cell per battery metric."""
    cells = battery.assign(
        cell=[
            _cell(e, lo, hi, m)
            for e, lo, hi, m in zip(
                battery["estimate"], battery["low"], battery["high"], battery["interval_method"], strict=True
            )
        ]
    )
    keys = ["system", "kind", "scope"]
    table = cells.pivot(index=keys, columns="metric", values="cell").reset_index()
    table = table[[*keys, *[m for m in BATTERY_METRICS if m in table.columns]]]
    marked = battery[battery["flagged"].astype(bool)]
    flags = marked.groupby(keys)["metric"].agg(lambda m: ", ".join(dict.fromkeys(FLAGGED_PROPERTY[x] for x in m)))
    table["flags"] = flags.reindex(pd.MultiIndex.from_frame(table[keys])).fillna("").to_numpy()
    order = table.assign(
        _scope=table["scope"].map({s: i for i, s in enumerate(SCOPES)}), _first=(table["system"] != HUMANS).astype(int)
    )
    return order.sort_values(["_scope", "_first", "system"], kind="stable").drop(columns=["_scope", "_first"])


def trust_sections(battery: pd.DataFrame | None) -> list[Section]:
    """The trust table's section, when the battery has rows."""
    if battery is None or not len(battery):
        return []
    table = trust_table(battery)
    board = Leaderboard(
        "Trust: the reliability battery of the pointwise judges",
        table,
        # every figure is a key column: shown at once (``others`` would wait for "all columns")
        keys=["system", "scope", *[m for m in BATTERY_METRICS if m in table.columns], "flags"],
        headline=None,
        split_by="scope",
        split_first=SCOPES[0],
        note=TRUST_SAYS,
    )
    return [Section("How far to trust each judge", tables=[board], anchor=TRUST_ANCHOR)]
