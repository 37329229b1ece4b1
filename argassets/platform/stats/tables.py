"""Intervals as table columns: ``<metric>_low``, ``<metric>_high`` and how they were made, one row per figure row.

Both studies' reports add the same columns beside their figures (docs/uncertainty.md):
:data:`INTERVAL_COLUMNS` say how (method with its exceptions, the unit resampled, how many
clusters, level, resamples, seed), :func:`bound_columns` names the bounds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from argassets.platform.stats.intervals import BootstrapSettings, ClusterIntervals

__all__ = [
    "INTERVAL_COLUMNS",
    "bound_columns",
    "interval_frame",
    "interval_problems",
    "no_interval_row",
    "row_method",
    "verdicts",
]

INTERVAL_COLUMNS = [
    "interval_method",
    "interval_unit",
    "interval_clusters",
    "interval_level",
    "interval_resamples",
    "interval_seed",
]


def bound_columns(metrics: Sequence[str]) -> list[str]:
    """``<metric>_low, <metric>_high`` for each metric."""
    return [f"{m}_{side}" for m in metrics for side in ("low", "high")]


def row_method(methods: Sequence[str], metrics: Sequence[str]) -> str:
    """One text per row: the method most of its metrics share, then the exceptions by metric."""
    if not methods:
        return "none: no figure on this row"
    common = max(dict.fromkeys(methods), key=list(methods).count)
    others: dict[str, list[str]] = {}
    for metric, method in zip(metrics, methods, strict=True):
        if method != common:
            others.setdefault(method, []).append(metric)
    return "; ".join([common, *(f"{method} for {', '.join(names)}" for method, names in others.items())])


def interval_frame(
    rows: Sequence[tuple],
    key_columns: Sequence[str],
    metrics: Sequence[str],
    result: ClusterIntervals,
    index: Mapping[Any, int],
    *,
    unit: str,
    ranges: Mapping[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """One row per figure row: its key columns, the bounds of its metrics and :data:`INTERVAL_COLUMNS`.

    ``index[(row, metric)]`` is the output of ``result`` holding that figure; a (row, metric)
    missing from ``index`` has no interval (NaN bounds). Bounds are clipped to the metric's
    ``ranges`` (the small-cluster widening can pass a bound such as 1).
    """
    records = []
    for row in rows:
        record: dict[str, object] = dict(zip(key_columns, row, strict=True))
        methods, named = [], []
        for metric in metrics:
            k = index.get((row, metric))
            low, high = (ranges or {}).get(metric, (-np.inf, np.inf))
            if k is None:
                record[f"{metric}_low"] = record[f"{metric}_high"] = np.nan
                continue
            record[f"{metric}_low"] = float(np.clip(result.low[k], low, high))
            record[f"{metric}_high"] = float(np.clip(result.high[k], low, high))
            methods.append(result.method[k])
            named.append(metric)
        widened = f", widened x{result.expansion:.3f}" if result.expansion != 1.0 else ""
        record["interval_method"] = (
            f"clustered {row_method(methods, named)}{widened}" if methods else row_method([], [])
        )
        records.append(record)
    return pd.DataFrame(records, columns=[*key_columns, *bound_columns(metrics), "interval_method"]).assign(
        interval_unit=unit,
        interval_clusters=result.n_clusters,
        interval_level=result.settings.level,
        interval_resamples=result.settings.n_resamples,
        interval_seed=result.settings.seed,
    )


def no_interval_row(
    keys: Mapping[str, object],
    metrics: Sequence[str],
    reason: str,
    settings: BootstrapSettings,
    unit: str,
    clusters: int,
) -> dict[str, object]:
    """A row of NaN bounds whose ``interval_method`` gives the ``reason`` (``none: ...``)."""
    return {
        **keys,
        **dict.fromkeys(bound_columns(metrics), np.nan),
        "interval_method": reason,
        "interval_unit": unit,
        "interval_clusters": clusters,
        "interval_level": settings.level,
        "interval_resamples": settings.n_resamples,
        "interval_seed": settings.seed,
    }


def verdicts(
    differences: np.ndarray, p_adjusted: np.ndarray, level: float, lower_is_better: Sequence[bool]
) -> list[str]:
    """Per comparison: ``better`` or ``worse`` (adjusted p below ``1 - level``, by the metric's
    direction), ``not distinguishable``, or ``undefined`` (no p-value)."""
    out = []
    for difference, p, lower in zip(differences, p_adjusted, lower_is_better, strict=True):
        if not np.isfinite(p):
            out.append("undefined")
        elif p >= 1.0 - level or difference == 0:
            out.append("not distinguishable")
        else:
            out.append("better" if (difference < 0) == lower else "worse")
    return out


def interval_problems(report: pd.DataFrame, metrics: Sequence[str], keys: Sequence[str]) -> pd.DataFrame:
    """Figures whose interval is missing without a stated reason, or does not contain the figure.

    A row whose ``interval_method`` starts with ``none`` states why it has no interval (a
    published aggregate, too few clusters); any other row with a defined figure must have both
    bounds, ``low <= figure <= high`` (1e-9 slack). Returns the row's ``keys``, ``metric``,
    ``value``, ``low``, ``high`` and ``problem``.
    """
    found = []
    stated = report["interval_method"].astype("string").fillna("").str.startswith("none")
    for metric in metrics:
        if metric not in report.columns:
            continue
        value = pd.to_numeric(report[metric], errors="coerce").to_numpy(dtype=float)
        low = pd.to_numeric(report[f"{metric}_low"], errors="coerce").to_numpy(dtype=float)
        high = pd.to_numeric(report[f"{metric}_high"], errors="coerce").to_numpy(dtype=float)
        missing = np.isfinite(value) & ~(np.isfinite(low) & np.isfinite(high)) & ~stated.to_numpy()
        outside = (
            np.isfinite(value) & np.isfinite(low) & np.isfinite(high) & ((low > value + 1e-9) | (high < value - 1e-9))
        )
        for row in np.flatnonzero(missing | outside):
            found.append(
                {
                    **{k: report[k].iat[row] for k in keys},
                    "metric": metric,
                    "value": value[row],
                    "low": low[row],
                    "high": high[row],
                    "problem": "no interval and no reason" if missing[row] else "interval does not contain the figure",
                }
            )
    return pd.DataFrame(found, columns=[*keys, "metric", "value", "low", "high", "problem"])
