"""Study A across prompt variants and perturbations: which entries are one model, and what changes.

An entry's scope may set a ``prompt_variant`` and a ``perturbation``
(:mod:`argassets.argument_quality.prompt_axis`); entries with the same engine and weights
(``backend``, ``model_id``) are one *model* judged several ways (:func:`axis_frame`). The variant
report (:func:`variant_report`) reads each variant's κ and ρ with the experts, and their intervals,
from ``aq_agreement_report``; the perturbation report is in
:mod:`argassets.argument_quality.perturbation_report`. How to read both: docs/prompt_variants.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from argassets.argument_quality.prompt_axis import DEFAULT_VARIANT
from argassets.argument_quality.scope import STUDY_NAME, ArgumentQualityScope
from argassets.platform.registry.model_entry import ModelEntry

__all__ = [
    "AXIS_COLUMNS",
    "NOTHING",
    "VARIANT_COLUMNS",
    "VARIANT_METRICS",
    "axis_frame",
    "nothing_to_report",
    "rank_swaps",
    "reported",
    "variant_report",
]

AXIS_COLUMNS = ["entry", "model", "prompt_variant", "perturbation"]
#: The figures compared across variants (columns of ``aq_agreement_report``, with ``_low``/``_high``).
VARIANT_METRICS: tuple[str, ...] = ("cohen_kappa", "spearman")
VARIANT_COLUMNS = [
    "model",
    "strategy",
    "dimension",
    "metric",
    "statistic",
    "variant",
    "entry",
    "estimate",
    "low",
    "high",
    "interval_method",
    "n_variants",
    "variants",
]
#: The perturbation of an entry that has none.
UNPERTURBED = "none"
#: The ``metric`` of the one row of a report with nothing to report (an empty table would not be written).
NOTHING = "none"


def nothing_to_report(columns: Sequence[str], why: str) -> pd.DataFrame:
    """One row whose ``metric`` is :data:`NOTHING`, no figure, and ``interval_method`` saying why."""
    row: dict[str, object] = {column: None for column in columns}
    row.update(metric=NOTHING, estimate=np.nan, low=np.nan, high=np.nan, interval_method=f"none: {why}")
    row.update({column: 0 for column in columns if column.startswith("n_") or column == "n"})
    return pd.DataFrame([row], columns=list(columns))


def reported(report: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``report`` that carry a figure (without the :func:`nothing_to_report` row)."""
    return report[report["metric"] != NOTHING]


def axis_frame(entries: Iterable[ModelEntry]) -> pd.DataFrame:
    """One row per Study A entry: its name, its model, its prompt variant and perturbation.

    The model is named after the group's unperturbed entry with the protocol's text (the first such
    in registry order; else the group's first entry). A scope without a variant uses the protocol's
    text, whose bytes are the ``appendix`` variant's: it is reported as that variant.
    """
    rows = []
    for entry in entries:
        if not entry.takes_part_in(STUDY_NAME):
            continue
        scope = ArgumentQualityScope.of(entry)
        group = (entry.backend, entry.model_id or entry.backend)
        variant = scope.prompt_variant or DEFAULT_VARIANT
        rows.append((entry.name, group, variant, scope.perturbation or UNPERTURBED))
    frame = pd.DataFrame(rows, columns=["entry", "group", "prompt_variant", "perturbation"])
    plain = (frame["prompt_variant"] == DEFAULT_VARIANT) & (frame["perturbation"] == UNPERTURBED)
    first_plain = frame[plain].groupby("group", sort=False)["entry"].first()
    first_any = frame.groupby("group", sort=False)["entry"].first()
    names = first_any.to_dict() | first_plain.to_dict()
    frame["model"] = frame["group"].map(names)
    return frame[AXIS_COLUMNS].reset_index(drop=True)


def _pick(group: pd.DataFrame, metric: str) -> list[tuple[str, pd.Series]]:
    """The min, (lower) median and max variant of ``metric`` in ``group`` (rows with a figure)."""
    ranked = group.dropna(subset=[metric]).sort_values([metric, "prompt_variant"], kind="stable")
    if ranked.empty:
        return []
    middle = (len(ranked) - 1) // 2
    return [("min", ranked.iloc[0]), ("median", ranked.iloc[middle]), ("max", ranked.iloc[-1])]


def _interval_method(row: pd.Series) -> str:
    return str(row["interval_method"]) if "interval_method" in row.index and pd.notna(row["interval_method"]) else ""


def variant_report(agreement: pd.DataFrame, axis: pd.DataFrame) -> pd.DataFrame:
    """Per model × strategy × dimension with two or more variants: min / median / max of κ and ρ.

    ``agreement`` is ``aq_agreement_report`` (``model`` = entry; ``<metric>``, ``<metric>_low``,
    ``<metric>_high``); only unperturbed entries enter. Each statistic is one variant's figure with
    that variant's interval (the median of an even number is the lower middle one, so that it is a
    figure with its interval, not an average of two).
    """
    plain = axis[axis["perturbation"] == UNPERTURBED]
    measured = agreement.merge(plain.rename(columns={"model": "axis_model"}), left_on="model", right_on="entry")
    rows: list[dict[str, object]] = []
    for (model, strategy, dimension), group in measured.groupby(["axis_model", "strategy", "dimension"], sort=True):
        if group["prompt_variant"].nunique() < 2:
            continue
        variants = ", ".join(sorted(group["prompt_variant"]))
        for metric in VARIANT_METRICS:
            for statistic, row in _pick(group, metric):
                rows.append(
                    {
                        "model": model,
                        "strategy": strategy,
                        "dimension": dimension,
                        "metric": metric,
                        "statistic": statistic,
                        "variant": row["prompt_variant"],
                        "entry": row["entry"],
                        "estimate": float(row[metric]),
                        "low": float(row.get(f"{metric}_low", np.nan)),
                        "high": float(row.get(f"{metric}_high", np.nan)),
                        "interval_method": _interval_method(row),
                        "n_variants": int(group[metric].notna().sum()),
                        "variants": variants,
                    }
                )
    if not rows:
        return nothing_to_report(VARIANT_COLUMNS, "no model was judged under two prompt variants")
    return pd.DataFrame(rows, columns=VARIANT_COLUMNS).astype({"n_variants": "int64"})


def _swaps(figures: pd.DataFrame, models: Sequence[str]) -> tuple[int, int]:
    """``(model pairs compared, pairs whose order differs between two variants both were judged in)``."""
    compared = swapped = 0
    for first, second in combinations(models, 2):
        both = figures[[first, second]].dropna()
        if len(both) < 2:
            continue
        compared += 1
        signs = np.sign(both[first].to_numpy() - both[second].to_numpy())
        swapped += int(signs.min() < 0 < signs.max())
    return compared, swapped


def rank_swaps(agreement: pd.DataFrame, axis: pd.DataFrame) -> pd.DataFrame:
    """Per strategy × dimension × metric: model pairs judged under two or more common variants, and how
    many of them change order (one ahead under one variant, behind under another; a tie swaps nothing)."""
    plain = axis[axis["perturbation"] == UNPERTURBED]
    measured = agreement.merge(plain.rename(columns={"model": "axis_model"}), left_on="model", right_on="entry")
    rows = []
    for (strategy, dimension), group in measured.groupby(["strategy", "dimension"], sort=True):
        for metric in VARIANT_METRICS:
            figures = group.pivot_table(index="prompt_variant", columns="axis_model", values=metric, aggfunc="first")
            compared, swapped = _swaps(figures, list(figures.columns))
            rows.append((strategy, dimension, metric, compared, swapped))
    columns = ["strategy", "dimension", "metric", "model_pairs", "pairs_swapping_rank"]
    return pd.DataFrame(rows, columns=columns).astype({"model_pairs": "int64", "pairs_swapping_rank": "int64"})
