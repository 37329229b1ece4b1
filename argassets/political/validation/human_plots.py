"""Plots of the annotator reports (PNG bytes for the assets' metadata), every figure with its interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from argassets.platform.reporting.presentation import figure_png, pyplot
from argassets.political.validation.human_tasks import TASKS


def _interval_row(ax: Any, part: pd.DataFrame, offset: float, colour: str, label: str, size: tuple) -> None:
    """One group's estimates with their intervals, one row per system, shifted by ``offset``."""
    marker, cap, width = size
    error = [part["estimate"] - part["low"], part["high"] - part["estimate"]]
    y = np.arange(len(part)) + offset
    ax.errorbar(part["estimate"], y, xerr=error, fmt="o", ms=marker, capsize=cap, lw=width, color=colour, label=label)


def _short(name: str) -> str:
    return name.removeprefix("published:").removeprefix("published-")


def replacement_plot(table: pd.DataFrame) -> bytes:
    """Per task: each system's agreement with the remaining annotators (interval as error bar) and
    the annotators' own (the green band: a held-out annotator against the rest)."""
    plt = pyplot()
    tasks = [t for t in TASKS if t in set(table["task"])]
    systems = table[table["kind"] != "human"]
    n = systems.groupby("task").size().max()
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.4 * len(tasks), 0.2 * n + 1.6), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        rows = systems[systems["task"] == task].sort_values("agreement_with_rest")
        y = np.arange(len(rows))
        error = [
            rows["agreement_with_rest"] - rows["agreement_with_rest_low"],
            rows["agreement_with_rest_high"] - rows["agreement_with_rest"],
        ]
        ax.errorbar(rows["agreement_with_rest"], y, xerr=error, fmt="o", ms=3, capsize=2, lw=0.8)
        human = table[(table["task"] == task) & (table["system"] == "human:rest")].iloc[0]
        ax.axvspan(human["agreement_with_rest_low"], human["agreement_with_rest_high"], color="tab:green", alpha=0.2)
        ax.axvline(human["agreement_with_rest"], color="tab:green", lw=1, label="held-out annotator")
        ax.set_yticks(y, [_short(s) for s in rows["system"]], fontsize=6)
        ax.set_title(task, fontsize=9)
        ax.set_xlabel("agreement with the remaining annotators", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return figure_png(fig)


def affiliation_plot(table: pd.DataFrame) -> bytes:
    """Per task: each system's and the annotators' agreement with Left, Centre and Right annotators."""
    plt = pyplot()
    rows = table[
        (table["measure"] == "agreement") & ~table["system"].isin(["human:Left", "human:Centre", "human:Right"])
    ]
    tasks = [t for t in TASKS if t in set(rows["task"])]
    colours = {"Left": "tab:red", "Centre": "tab:purple", "Right": "tab:blue"}
    n = rows.groupby("task")["system"].nunique().max()
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.4 * len(tasks), 0.22 * n + 1.6), squeeze=False)
    for ax, task in zip(axes[0], tasks, strict=True):
        here = rows[rows["task"] == task]
        order = here[here["group"] == "Left"].sort_values("estimate")["system"].tolist()
        for offset, (group, colour) in zip((-0.25, 0.0, 0.25), colours.items(), strict=True):
            part = here[here["group"] == group].set_index("system").loc[order]
            _interval_row(ax, part, offset, colour, group, size=(2.5, 1.5, 0.7))
        ax.set_yticks(np.arange(len(order)), [_short(s) for s in order], fontsize=6)
        ax.set_title(task, fontsize=9)
        ax.set_xlabel("agreement with the group's labels", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return figure_png(fig)


def ppi_plot(table: pd.DataFrame, estimand: str = "political_share") -> bytes:
    """Per system: the estimate over the sampled buckets by PPI, by the human labels alone and by the
    system alone, each with its interval."""
    plt = pyplot()
    rows = table[(table["estimand"] == estimand) & (table["scope"] == "buckets") & (table["debate"] == "all")]
    order = rows[rows["estimator"] == "naive"].sort_values("estimate")["system"].tolist()
    colours = {"ppi": "tab:red", "classical": "tab:green", "naive": "tab:gray"}
    fig, ax = plt.subplots(figsize=(7, 0.25 * len(order) + 1.4))
    for offset, (estimator, colour) in zip((0.2, 0.0, -0.2), colours.items(), strict=True):
        part = rows[rows["estimator"] == estimator].set_index("system").loc[order]
        _interval_row(ax, part, offset, colour, estimator, size=(3, 2, 0.8))
    ax.set_yticks(np.arange(len(order)), [_short(s) for s in order], fontsize=6)
    ax.set_xlabel(f"{estimand.replace('_', ' ')} over E3's three sampled buckets", fontsize=8)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return figure_png(fig)
