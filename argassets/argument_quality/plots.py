"""Study A's figures: BT scores against the experts, the agreement heat map, the share to the longer argument."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.argument_quality.bt_scores import MEAN_DIMENSION
from argassets.argument_quality.length_bias_report import ALL_DIMENSIONS, KIND_REFERENCE
from argassets.argument_quality.scope import DIMENSIONS
from argassets.platform.pairwise.agreement import score_agreement
from argassets.platform.reporting.presentation import figure_png, pyplot


def plot_scores_vs_experts(scores: pd.DataFrame, model: str, strategy: str) -> bytes:
    """PNG: BT z-score distributions of one (model, strategy) against the experts, per dimension.

    Top row: histograms of the configuration's ``bt_z`` and the published expert z-scores of the
    same arguments; bottom row: LLM against expert score per argument, with Pearson's r.
    """
    plt = pyplot()
    part = scores[(scores["model"] == model) & (scores["strategy"] == strategy)]
    dims = [d for d in DIMENSIONS if d in set(part["dimension"])] or list(DIMENSIONS)
    fig, axes = plt.subplots(2, len(dims), figsize=(4.2 * len(dims), 7.5), squeeze=False)
    bins = np.linspace(-4, 4, 33)
    for j, dim in enumerate(dims):
        sub = part[part["dimension"] == dim].dropna(subset=["bt_z"])
        ref = sub["published_z"] if "published_z" in sub.columns else pd.Series(dtype=float)
        ax = axes[0, j]
        ax.hist(np.clip(sub["bt_z"], -4, 4), bins=bins, alpha=0.6, label=f"{model} / {strategy}", density=True)
        ax.hist(np.clip(ref.dropna(), -4, 4), bins=bins, alpha=0.6, label="experts (published)", density=True)
        ax.set_title(f"{dim}: BT z-score distribution")
        ax.set_xlabel("z-score")
        if j == 0:
            ax.legend(fontsize=8)
        ax = axes[1, j]
        both = sub.dropna(subset=["published_z"]) if "published_z" in sub.columns else sub.iloc[0:0]
        ax.scatter(both["published_z"], both["bt_z"], s=6, alpha=0.4)
        r = score_agreement(both["bt_z"].to_numpy(), both["published_z"].to_numpy())["pearson"] if len(both) else np.nan
        ax.set_title(f"{dim}: LLM vs experts (r = {r:.3f})")
        ax.set_xlabel("expert z (published)")
        ax.set_ylabel("LLM BT z")
        ax.axline((0, 0), slope=1, color="grey", lw=0.8, ls="--")
    fig.suptitle(f"{model} / {strategy}")
    fig.tight_layout()
    return figure_png(fig)


def plot_agreement_heatmap(report: pd.DataFrame) -> bytes:
    """PNG: heat map of the agreement report's mean rows (configurations x metrics)."""
    plt = pyplot()
    metrics = ["pearson", "spearman", "kendall", "cohen_kappa", "krippendorff_alpha", "percent_agreement"]
    means = report[report["dimension"] == MEAN_DIMENSION]
    if means.empty:
        fig, ax = plt.subplots(figsize=(4, 1.5))
        ax.text(0.5, 0.5, "no configurations", ha="center", va="center")
        ax.axis("off")
        return figure_png(fig)
    means = means.sort_values("correlation_mean", ascending=False)
    values = means[metrics].to_numpy(dtype=float).copy()
    values[:, -1] = values[:, -1] / 100.0
    labels = [
        f"{m} / {s}" + (" *" if b else "") + (" (baseline)" if bl else "")
        for m, s, b, bl in zip(means["model"], means["strategy"], means["best_set"], means["is_baseline"], strict=True)
    ]
    fig, ax = plt.subplots(figsize=(1.2 * len(metrics) + 4, 0.32 * len(labels) + 1.8))
    image = ax.imshow(values, cmap="RdYlGn", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(
        range(len(metrics)),
        [m if m != "percent_agreement" else "agreement (share)" for m in metrics],
        rotation=30,
        ha="right",
    )
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if np.isfinite(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title("Agreement with experts (mean over dimensions; * = best set)")
    fig.tight_layout()
    return figure_png(fig)


def plot_headline_intervals(report: pd.DataFrame, metrics: tuple[str, ...] = ("cohen_kappa", "pearson")) -> bytes:
    """PNG: each configuration's mean-row figure with its 95% clustered interval, one panel per metric.

    Measured rows and baselines with their error bars (best set in green); the paper's rows as grey
    points without bars (aggregates: no interval).
    """
    plt = pyplot()
    means = report[report["dimension"] == MEAN_DIMENSION].sort_values(metrics[0])
    labels = [f"{m} / {s}" for m, s in zip(means["model"], means["strategy"], strict=True)]
    fig, axes = plt.subplots(
        1, len(metrics), figsize=(4.2 * len(metrics) + 2.5, 0.28 * len(labels) + 1.8), squeeze=False, sharey=True
    )
    positions = np.arange(len(labels))
    kinds = means["kind"].astype(str).to_numpy() if "kind" in means.columns else np.array(["measured"] * len(means))
    in_set = (
        means["best_set"].fillna(False).astype(bool).to_numpy()
        if "best_set" in means.columns
        else np.zeros(len(means), dtype=bool)
    )
    for axis, metric in zip(axes[0], metrics, strict=True):
        value = means[metric].to_numpy(dtype=float)
        low = means.get(f"{metric}_low", pd.Series(np.nan, index=means.index)).to_numpy(dtype=float)
        high = means.get(f"{metric}_high", pd.Series(np.nan, index=means.index)).to_numpy(dtype=float)
        bars = np.isfinite(low) & np.isfinite(high)
        colour = np.where(in_set, "tab:green", np.where(kinds == "baseline", "tab:gray", "tab:blue"))
        for k in np.flatnonzero(bars):
            axis.errorbar(
                value[k],
                positions[k],
                xerr=[[value[k] - low[k]], [high[k] - value[k]]],
                fmt="o",
                color=colour[k],
                ms=4,
                capsize=2,
            )
        axis.scatter(value[~bars], positions[~bars], s=10, color="lightgrey", label="published (no interval)")
        axis.set_title(f"{metric} (mean over dimensions)")
        axis.grid(axis="x", alpha=0.3)
    axes[0, 0].set_yticks(positions, labels, fontsize=7)
    fig.suptitle("Against the experts, with 95% intervals clustered over topics (green: best set)")
    fig.tight_layout()
    return figure_png(fig)


def plot_longer_share(report: pd.DataFrame) -> bytes:
    """PNG: share of decisive verdicts to the longer argument, experts against each configuration.

    One panel per dimension and one over all three; one bar per (model, strategy), baselines
    hatched; the experts' share as a dashed line, and on each judge's own comparisons as a red tick
    (0.5, no preference, dotted).
    """
    plt = pyplot()
    panels = [d for d in [*DIMENSIONS, ALL_DIMENSIONS] if d in set(report["dimension"])] or [ALL_DIMENSIONS]
    judges = report[report["kind"] != KIND_REFERENCE]
    labels = sorted(set(zip(judges["model"], judges["strategy"], strict=True)))
    height = 0.32 * max(len(labels), 1) + 1.6
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), height), squeeze=False, sharey=True)
    for j, dimension in enumerate(panels):
        ax = axes[0, j]
        part = report[report["dimension"] == dimension]
        expert = part[part["kind"] == KIND_REFERENCE]["share_longer"]
        lookup = {
            (m, s): (v, b)
            for m, s, v, b in zip(
                part["model"], part["strategy"], part["share_longer"], part["is_baseline"], strict=True
            )
        }
        values = [lookup.get(key, (np.nan, False)) for key in labels]
        positions = np.arange(len(labels))
        same = dict(zip(zip(part["model"], part["strategy"], strict=True), part["share_longer_experts"], strict=True))
        # The experts on each judge's own comparisons (differs from the line for a restricted scope).
        ax.scatter(
            [same.get(key, np.nan) for key in labels],
            positions,
            marker="|",
            s=120,
            color="tab:red",
            zorder=3,
            label="experts, same comparisons",
        )
        bars = ax.barh(positions, [v for v, _ in values], color="tab:blue", alpha=0.75)
        for bar, (_, is_baseline) in zip(bars, values, strict=True):
            if is_baseline:
                bar.set_hatch("//")
                bar.set_color("tab:grey")
        title = dimension
        if len(expert) and np.isfinite(expert.iloc[0]):
            ax.axvline(float(expert.iloc[0]), color="tab:red", ls="--", label="experts, all comparisons")
            title += f" (experts {float(expert.iloc[0]):.2f})"
        ax.axvline(0.5, color="black", ls=":", lw=0.8)
        ax.set_xlim(0, 1)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("share to the longer argument")
        ax.set_yticks(positions, [f"{m} / {s}" for m, s in labels], fontsize=7)
    # One legend above the panels: inside a panel it covered the bars.
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.suptitle("Decisive verdicts that go to the longer argument")
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0.94), ncol=max(len(names), 1), fontsize=7)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    return figure_png(fig)
