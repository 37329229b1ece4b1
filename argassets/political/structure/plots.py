"""Plots of the KB analysis (PNG bytes for the reports' metadata)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.platform.reporting.presentation import figure_png, pyplot


def distance_plot(robustness: pd.DataFrame) -> bytes:
    """Mean |Δ| of attacks and of supports per system, with the difference's interval."""
    plt = pyplot()
    frame = robustness.reset_index(drop=True)
    y = np.arange(len(frame))
    fig, ax = plt.subplots(figsize=(7, 0.28 * len(frame) + 1.2))
    ax.scatter(frame["attacks_mean_abs_diff"], y, label="attacks", marker="o", color="tab:red")
    ax.scatter(frame["supports_mean_abs_diff"], y, label="supports", marker="s", color="tab:blue")
    ax.set_yticks(y, [s.removeprefix("published-") for s in frame["system"]], fontsize=7)
    ax.set_xlabel("mean |Δ position| between the two ends of a relation")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    return figure_png(fig)


def debate_plot(debates: pd.DataFrame, system: str) -> bytes:
    """Mean position (with interval) and mean P(NA) per debate, in date order, for one system."""
    plt = pyplot()
    rows = debates[debates["system"] == system].sort_values("episode")
    x = np.arange(len(rows))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    top.errorbar(
        x,
        rows["position"],
        yerr=[rows["position"] - rows["position_low"], rows["position_high"] - rows["position"]],
        fmt="o",
        capsize=2,
    )
    top.axhline(50, color="grey", lw=0.8)
    top.set_ylabel(f"{system} mean position")
    bottom.errorbar(
        x,
        rows["prob_na"],
        yerr=[rows["prob_na"] - rows["prob_na_low"], rows["prob_na_high"] - rows["prob_na"]],
        fmt="s",
        capsize=2,
        color="tab:orange",
    )
    bottom.set_ylabel("mean P(NA)")
    bottom.set_xticks(x, list(rows["episode"]), rotation=90, fontsize=7)
    return figure_png(fig)


def ambiguity_plot(ambiguity: pd.DataFrame, system: str, facet: str) -> bytes:
    """Share of ambiguous arguments (P(NA) in [0.3, 0.7]) per value of a facet, with intervals."""
    plt = pyplot()
    rows = ambiguity[(ambiguity["system"] == system) & (ambiguity["facet"] == facet)].reset_index(drop=True)
    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(6, 0.3 * len(rows) + 1.2))
    ax.errorbar(
        rows["ambiguous_share"],
        y,
        xerr=[
            rows["ambiguous_share"] - rows["ambiguous_share_low"],
            rows["ambiguous_share_high"] - rows["ambiguous_share"],
        ],
        fmt="o",
        capsize=2,
    )
    ax.set_yticks(y, [f"{v} (n={n})" for v, n in zip(rows["value"], rows["arguments"], strict=True)], fontsize=8)
    ax.set_xlabel(f"{system}: share with P(NA) in [0.3, 0.7], by {facet}")
    ax.grid(axis="x", alpha=0.3)
    return figure_png(fig)
