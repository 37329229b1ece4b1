"""Study A's results page: prompt variants and perturbations side by side (issue 32 items 2 and 3).

One row per way a model was judged (an entry: its prompt variant, its perturbation), its κ and ρ
with the experts and what its perturbation did, then the min / median / max across variants and the
rank swaps. How to read it: docs/prompt_variants.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.argument_quality.bt_scores import MEAN_DIMENSION
from argassets.argument_quality.perturbation_report import PERTURBATION_METRICS
from argassets.argument_quality.prompt_axis_report import reported
from argassets.platform.reporting.results_page import Leaderboard, Section

__all__ = ["AXIS_SAYS", "PromptAxis", "prompt_axis_section", "side_by_side"]

AXIS_SAYS = (
    "Each row is one way a model was judged: its prompt variant (the protocol's text is 'appendix') and its "
    "perturbation; 'swap' is the entry's own ba order against its ab order (kappa and rho: on its ab row). kappa and "
    "rho: with the experts; flip rate: share of the pairs whose majority verdict differs from the "
    "unperturbed run of the same model and variant; rank rho: Spearman between the perturbed and unperturbed BT "
    "scores; delta rho: change of rho with the experts. Intervals: 95%, clustered over topics (none with one topic)."
)


def _cell(estimate: float, low: float, high: float) -> str:
    """``0.123 [0.100, 0.150]``, the bare figure without an interval, or ``-`` without a figure."""
    if pd.isna(estimate):
        return "-"
    return f"{estimate:.3f} [{low:.3f}, {high:.3f}]" if pd.notna(low) and pd.notna(high) else f"{estimate:.3f}"


def _cells(frame: pd.DataFrame, metric: str) -> list[str]:
    """The ``metric`` column of ``frame`` with its ``_low``/``_high`` as cells."""
    low = frame[f"{metric}_low"] if f"{metric}_low" in frame.columns else pd.Series(np.nan, index=frame.index)
    high = frame[f"{metric}_high"] if f"{metric}_high" in frame.columns else pd.Series(np.nan, index=frame.index)
    return [_cell(e, lo, hi) for e, lo, hi in zip(frame[metric], low, high, strict=True)]


def side_by_side(agreement: pd.DataFrame, perturbations: pd.DataFrame, axis: pd.DataFrame) -> pd.DataFrame:
    """One row per way a model was judged two or more ways (entry, or an entry's swap) x strategy x dimension."""
    keys = ["entry", "perturbation", "strategy", "dimension"]
    several = axis.groupby("model")["entry"].transform("size") > 1
    ways = axis[several | axis["entry"].isin(perturbations.get("entry", pd.Series(dtype=object)))]
    measured = agreement[(agreement["dimension"] != MEAN_DIMENSION) & agreement["model"].isin(ways["entry"])]
    figures = pd.DataFrame(
        {
            "entry": measured["model"].to_numpy(),
            "strategy": measured["strategy"].to_numpy(),
            "dimension": measured["dimension"].to_numpy(),
            "cohen_kappa": _cells(measured, "cohen_kappa"),
            "spearman": _cells(measured, "spearman"),
        }
    )
    rows = ways.merge(figures, on="entry", how="inner")
    if len(perturbations):
        cells = perturbations.assign(
            cell=_cells(
                perturbations.rename(columns={"estimate": "value", "low": "value_low", "high": "value_high"}), "value"
            )
        )
        wide = cells.pivot_table(index=keys, columns="metric", values="cell", aggfunc="first").reset_index()
        swaps = wide[wide["perturbation"] == "swap"].merge(ways.drop(columns="perturbation"), on="entry")
        rows = pd.concat([rows.merge(wide, on=keys, how="left"), swaps], ignore_index=True)
    columns = ["model", "entry", "prompt_variant", "perturbation", "strategy", "dimension", "cohen_kappa", "spearman"]
    table = rows.reindex(columns=[*columns, *PERTURBATION_METRICS]).fillna("-")
    order = ["model", "strategy", "dimension", "prompt_variant", "perturbation", "entry"]
    return table.sort_values(order, kind="stable").reset_index(drop=True)


#: What the section reads: ``aq_prompt_variant_report``, ``aq_perturbation_report`` and the registry's axis frame.
PromptAxis = tuple[pd.DataFrame | None, pd.DataFrame | None, pd.DataFrame]


def prompt_axis_section(
    agreement: pd.DataFrame, variants: pd.DataFrame | None, perturbations: pd.DataFrame | None, axis: pd.DataFrame
) -> list[Section]:
    """The section, when some model was judged two or more ways (else nothing)."""
    perturbations = reported(perturbations) if perturbations is not None else pd.DataFrame()
    variants = reported(variants) if variants is not None else None
    table = side_by_side(agreement, perturbations, axis)
    if table.empty:
        return []
    tables = [
        Leaderboard(
            "Prompt variants and perturbations, side by side",
            table,
            list(table.columns[:6]),
            None,
            others=list(table.columns[6:]),
        )
    ]
    if variants is not None and len(variants):
        spread = variants.assign(
            cell=[_cell(*v) for v in variants[["estimate", "low", "high"]].itertuples(index=False)]
        )
        spread["cell"] = spread["cell"] + " (" + spread["variant"].astype(str) + ")"
        wide = spread.pivot_table(
            index=["model", "strategy", "dimension", "metric", "variants"],
            columns="statistic",
            values="cell",
            aggfunc="first",
        ).reset_index()
        wide = wide.reindex(columns=["model", "strategy", "dimension", "metric", "variants", "min", "median", "max"])
        tables.append(
            Leaderboard(
                "Across prompt variants: min / median / max",
                wide,
                list(wide.columns[:4]),
                None,
                others=list(wide.columns[4:]),
            )
        )
    return [Section("Prompt wording and perturbations", AXIS_SAYS, tables=tables, anchor="prompt-axis")]
