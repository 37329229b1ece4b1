"""Joining systems' predictions to the study items, and the report figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from argassets.political.validation.evaluation import SUBSETS


def item_keys(matches: pd.DataFrame, study: str, meta_ids: Sequence[str]) -> list[list[str]]:
    """Per study item, the prediction keys that stand for it, in order of preference.

    The KB argument matched by text (``political_study_items.argument_id``), then, for pairwise
    items, the published KB index ``paper:<prediction_index>`` under which published-TSV imports
    are stored.
    """
    from argassets.political.published import published_argument_id

    rows = matches[matches["study"] == study].set_index("meta_id")
    keys = []
    for meta_id in meta_ids:
        if meta_id not in rows.index:
            raise ValueError(f"{study} item {meta_id!r} is missing from political_study_items")
        row = rows.loc[meta_id]
        candidates = []
        if isinstance(row["argument_id"], str):
            candidates.append(row["argument_id"])
        if "published_index" in row and pd.notna(row["published_index"]):
            candidates.append(published_argument_id(int(row["published_index"])))
        keys.append(candidates)
    return keys


def system_item_values(stats: pd.DataFrame, keys: Sequence[Sequence[str]], column: str) -> dict[str, list[Any]]:
    """Per system of ``stats``, the value of ``column`` for each study item (``None`` if unscored).

    ``column`` is ``scores`` (returned as a list of floats) or ``prob_na``.
    """
    from argassets.political.model_stats import scores_from_json

    out: dict[str, list[object]] = {}
    for system, group in stats.groupby("system", sort=True):
        lookup = dict(zip(group["argument_id"], group[column], strict=True))
        values: list[object] = []
        for candidates in keys:
            found = next((lookup[k] for k in candidates if k in lookup), None)
            if found is not None and column == "scores":
                found = scores_from_json(found)
            values.append(found)
        if any(v is not None for v in values):
            out[str(system)] = values
    return out


#: Point colour of each ``kind`` in :func:`plot_f1_vs_alpha` (purple for any other).
KIND_COLOURS = {
    "model": "tab:blue",
    "ensemble": "tab:red",
    "published": "tab:gray",
    "published-ensemble": "tab:brown",
    "human": "tab:green",
    "baseline": "black",
}


def _plot_kind(axis: Any, group: pd.DataFrame, kind: str, colour: str) -> None:
    """One kind's points on one panel, with their intervals (when the report has them) and names."""
    if {"alpha_ordinal_low", "macro_f1_low"} <= set(group.columns):
        # 95% intervals clustered over debates (docs/uncertainty.md), thin so the points stay readable.
        x, y = group["alpha_ordinal"].astype(float), group["macro_f1"].astype(float)
        xerr = np.vstack([x - group["alpha_ordinal_low"].astype(float), group["alpha_ordinal_high"].astype(float) - x])
        yerr = np.vstack([y - group["macro_f1_low"].astype(float), group["macro_f1_high"].astype(float) - y])
        axis.errorbar(
            x,
            y,
            xerr=np.nan_to_num(xerr.clip(0)),
            yerr=np.nan_to_num(yerr.clip(0)),
            fmt="none",
            ecolor=colour,
            elinewidth=0.5,
            alpha=0.5,
        )
    axis.scatter(group["alpha_ordinal"], group["macro_f1"], s=18, c=colour, label=kind)
    for record in group.itertuples(index=False):
        if np.isfinite(record.alpha_ordinal) and np.isfinite(record.macro_f1):
            label = record.system.removeprefix("published:")
            axis.annotate(
                label,
                (record.alpha_ordinal, record.macro_f1),
                fontsize=5,
                alpha=0.8,
                xytext=(2, 2),
                textcoords="offset points",
            )


def plot_f1_vs_alpha(report: pd.DataFrame, title: str = "Pairwise validation") -> bytes:
    """The paper's main figure: macro-F1 against ordinal alpha for every row, one panel per subset.

    Returns PNG bytes. Points are coloured by ``kind``; each is labelled with its system name; where
    the report has intervals, each point has its error bars on both axes.
    """
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    subsets = [s for s in SUBSETS if s in set(report["subset"])]
    columns = min(3, len(subsets))
    rows_of_panels = -(-len(subsets) // columns)
    figure, grid = plt.subplots(rows_of_panels, columns, figsize=(5.2 * columns, 4.6 * rows_of_panels), squeeze=False)
    axes = grid.ravel()
    for axis in axes[len(subsets) :]:
        axis.set_visible(False)
    for axis, subset in zip(axes, subsets, strict=False):
        rows = report[report["subset"] == subset]
        for kind, group in rows.groupby("kind"):
            _plot_kind(axis, group, str(kind), KIND_COLOURS.get(str(kind), "tab:purple"))
        n_pairs = int(rows["n_pairs"].iloc[0]) if len(rows) else 0
        axis.set_title(f"{subset} ({n_pairs} pairs)")
        axis.set_xlabel("ordinal Krippendorff alpha (ranks vs humans)")
        axis.grid(alpha=0.3)
        axis.set_ylabel("macro-F1 over pairs")
    axes[0].legend(fontsize=7, loc="lower right")
    figure.suptitle(title)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return buffer.getvalue()
