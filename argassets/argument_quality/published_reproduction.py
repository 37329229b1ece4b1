"""Whether a re-run reproduces Study A's published figures, and the reports with the paper's rows.

A registry model maps to a paper model with ``published_as``. For such a model,
:func:`reproduction_table` says, metric by metric, how far the platform's figure is from the
published one and whether the published value lies inside the report's own clustered interval
(``<metric>_low/_high``, read by :func:`report_intervals`); :func:`with_published` adds the
verdicts and the paper's rows to a report.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from argassets.argument_quality.published import (
    KIND_BASELINE,
    KIND_MEASURED,
    MEAN_DIMENSION,
    PUBLISHED_METRICS,
    published_report_rows,
)
from argassets.argument_quality.scope import DIMENSIONS

__all__ = ["report_intervals", "reproduction_markdown", "reproduction_summary", "reproduction_table", "with_published"]

#: The columns of :func:`reproduction_table`.
_REPRODUCTION_COLUMNS = [
    "model",
    "published_as",
    "strategy",
    "dimension",
    "metric",
    "value",
    "published",
    "delta",
    "ci_low",
    "ci_high",
    "reproduced",
]


def reproduction_table(
    report: pd.DataFrame,
    published: pd.DataFrame,
    published_as: Mapping[str, str],
    intervals: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per measured configuration of a model with ``published_as`` and per published metric: the
    platform's value, the published one, their difference and whether the published value lies
    inside the platform's bootstrap interval.

    Parameters
    ----------
    report
        Measured report rows (``model, strategy, dimension`` and the metrics, ``mean`` rows included).
    published
        :func:`~argassets.argument_quality.published.published_report_rows` (``published_as``, ``strategy``, ``dimension``, metrics).
    published_as
        Registry model -> paper name.
    intervals
        :func:`report_intervals` (``None``: every ``reproduced`` is ``unknown``).

    Returns
    -------
    pandas.DataFrame
        ``model, published_as, strategy, dimension, metric, value, published, delta (value -
        published), ci_low, ci_high, reproduced`` with ``reproduced`` ``true`` (inside the closed
        interval), ``false`` (outside) or ``unknown`` (no interval, or no value on either side). A
        ``mean`` row of a configuration that lacks a dimension is not compared (``published`` NaN,
        ``unknown``).
    """
    metrics = list(PUBLISHED_METRICS.values())
    mine = report[report["model"].isin(list(published_as))]
    if mine.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in _REPRODUCTION_COLUMNS})
    long = mine.melt(
        id_vars=["model", "strategy", "dimension"], value_vars=metrics, var_name="metric", value_name="value"
    )
    long["published_as"] = long["model"].map(dict(published_as))
    theirs = published.melt(
        id_vars=["published_as", "strategy", "dimension"], value_vars=metrics, var_name="metric", value_name="published"
    )
    long = long.merge(theirs, on=["published_as", "strategy", "dimension", "metric"], how="left")
    long = _with_intervals(long, intervals)
    _drop_partial_means(long, mine)
    _add_verdicts(long)
    rank = {d: i for i, d in enumerate([*DIMENSIONS, MEAN_DIMENSION])}
    order = {m: i for i, m in enumerate(metrics)}
    long = long.assign(_d=long["dimension"].map(rank), _m=long["metric"].map(order))
    long = long.sort_values(["model", "strategy", "_d", "_m"], kind="stable").drop(columns=["_d", "_m"])
    return long[_REPRODUCTION_COLUMNS].reset_index(drop=True)


def report_intervals(report: pd.DataFrame) -> pd.DataFrame:
    """The report's intervals of the published metrics, long: ``model, strategy, dimension, metric, ci_low, ci_high``."""
    keys = ["model", "strategy", "dimension"]
    metrics = [m for m in PUBLISHED_METRICS.values() if f"{m}_low" in report.columns]
    frames = [
        report[keys].assign(
            metric=m, ci_low=report[f"{m}_low"].astype(float), ci_high=report[f"{m}_high"].astype(float)
        )
        for m in metrics
    ]
    if not frames:
        return pd.DataFrame(columns=[*keys, "metric", "ci_low", "ci_high"])
    return pd.concat(frames, ignore_index=True)


def _with_intervals(long: pd.DataFrame, intervals: pd.DataFrame | None) -> pd.DataFrame:
    """``ci_low`` and ``ci_high`` of each (configuration, metric); NaN without intervals."""
    if intervals is not None and len(intervals):
        return long.merge(
            intervals[["model", "strategy", "dimension", "metric", "ci_low", "ci_high"]],
            on=["model", "strategy", "dimension", "metric"],
            how="left",
        )
    long["ci_low"] = np.nan
    long["ci_high"] = np.nan
    return long


def _drop_partial_means(long: pd.DataFrame, mine: pd.DataFrame) -> None:
    """A mean row is comparable only when the configuration covers every dimension the paper averages."""
    covered = mine[mine["dimension"] != MEAN_DIMENSION].groupby(["model", "strategy"])["dimension"].nunique()
    partial = [(m, s) for (m, s), k in covered.items() if k < len(DIMENSIONS)]
    if partial:
        incomplete = (long["dimension"] == MEAN_DIMENSION) & pd.Series(
            list(zip(long["model"], long["strategy"], strict=True)), index=long.index
        ).isin(partial)
        long.loc[incomplete, "published"] = np.nan


def _add_verdicts(long: pd.DataFrame) -> None:
    """``delta`` and ``reproduced`` (inside the closed interval, outside, or unknown)."""
    value = long["value"].to_numpy(dtype=float)
    theirs_v = long["published"].to_numpy(dtype=float)
    low = long["ci_low"].to_numpy(dtype=float)
    high = long["ci_high"].to_numpy(dtype=float)
    long["delta"] = value - theirs_v
    known = np.isfinite(theirs_v) & np.isfinite(low) & np.isfinite(high) & np.isfinite(value)
    inside = (theirs_v >= low) & (theirs_v <= high)
    long["reproduced"] = np.where(known, np.where(inside, "true", "false"), "unknown")


def reproduction_summary(reproduction: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: ``delta_<metric>`` for every published metric, and the verdicts.

    ``reproduced`` is ``true`` when every published metric with an interval lies inside it (and at
    least one has one), ``false`` when one lies outside, else ``unknown``; ``metrics_reproduced``
    of ``metrics_compared`` count the metrics inside, of those with a verdict.
    """
    keys = ["model", "strategy", "dimension"]
    metrics = list(PUBLISHED_METRICS.values())
    columns = [
        *keys,
        "published_as",
        *(f"delta_{m}" for m in metrics),
        "reproduced",
        "metrics_reproduced",
        "metrics_compared",
    ]
    if reproduction.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    wide = reproduction.pivot_table(index=keys, columns="metric", values="delta", aggfunc="first", dropna=False)
    wide = wide.reindex(columns=metrics).add_prefix("delta_").reset_index()
    grouped = reproduction.groupby(keys, sort=False)["reproduced"]
    verdicts = pd.DataFrame(
        {
            "reproduced": grouped.agg(
                lambda s: "false" if (s == "false").any() else "true" if (s == "true").any() else "unknown"
            ),
            "metrics_reproduced": grouped.agg(lambda s: int((s == "true").sum())),
            "metrics_compared": grouped.agg(lambda s: int((s != "unknown").sum())),
            "published_as": reproduction.groupby(keys, sort=False)["published_as"].first(),
        }
    ).reset_index()
    return wide.merge(verdicts, on=keys)[columns]


def _with_reproduction(
    out: pd.DataFrame,
    published: pd.DataFrame | None,
    published_as: Mapping[str, str],
    intervals: pd.DataFrame | None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``out`` with the reproduction summary columns (``reproduced``, metric counts), and the table."""
    published_rows = (
        published_report_rows(published, ["published_as", "strategy", "dimension", *PUBLISHED_METRICS.values()])
        if published is not None
        else pd.DataFrame(columns=["published_as", "strategy", "dimension", *PUBLISHED_METRICS.values()])
    )
    reproduction = reproduction_table(out, published_rows, published_as, intervals)
    summary = reproduction_summary(reproduction).drop(columns="published_as")
    out = out.merge(summary, on=["model", "strategy", "dimension"], how="left")
    mapped = out["published_as"].notna()
    out["reproduced"] = out["reproduced"].fillna("unknown").astype(object).where(mapped, None)
    for column in ("metrics_reproduced", "metrics_compared"):
        counts = pd.to_numeric(out[column], errors="coerce").fillna(0).astype(np.int64)
        out[column] = pd.array([int(c) if m else pd.NA for c, m in zip(counts, mapped, strict=True)], dtype="Int64")
    return out, reproduction


def with_published(
    report: pd.DataFrame,
    published: pd.DataFrame | None,
    published_as: Mapping[str, str],
    intervals: pd.DataFrame | None = None,
    *,
    best: tuple[str, str] | None = None,
    reproduce: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A report with ``kind`` and ``published_as`` (and the reproduction columns), plus the published rows.

    Parameters
    ----------
    report
        The platform's report (:func:`argassets.argument_quality.agreement_reports.agreement_report` or
        ``cross_model_report``), with ``is_baseline``.
    published
        :func:`~argassets.argument_quality.published.read_published_table`, or ``None`` when the published tables are not available
        (then no published row is added and ``reproduced`` is ``unknown``).
    published_as
        Registry model -> paper name (models with ``published_as``).
    intervals
        :func:`report_intervals` of the mapped models' configurations.
    best
        The published best configuration, for the cross-model report's published rows.
    reproduce
        Add ``delta_<metric>`` and ``reproduced`` (the agreement report).

    Returns
    -------
    tuple of pandas.DataFrame
        ``(report, reproduction)``: the measured rows (``kind`` ``measured`` or ``baseline``) then
        the published ones (``kind = "published"``); ``reproduction`` is :func:`reproduction_table`.
    """
    out = report.copy()
    baseline = out["is_baseline"].astype(bool) if "is_baseline" in out.columns else pd.Series(False, index=out.index)
    out["kind"] = np.where(baseline, KIND_BASELINE, KIND_MEASURED)
    out["published_as"] = out["model"].map(dict(published_as)).astype("object")
    reproduction = pd.DataFrame()
    if reproduce:
        out, reproduction = _with_reproduction(out, published, published_as, intervals)
    if published is not None and len(published):
        rows = published_report_rows(published, list(out.columns), {v: k for k, v in published_as.items()}, best=best)
        # Columns the paper does not give are left out of the concatenation and come back as NaN.
        rows = rows.dropna(axis=1, how="all")
        out = pd.concat([out, rows], ignore_index=True)[list(out.columns)]
    for column in [c for c in out.columns if c.startswith("n_")]:
        out[column] = pd.array(out[column], dtype="Int64")
    return out, reproduction


def reproduction_markdown(reproduction: pd.DataFrame, confidence: float = 0.95, max_rows: int = 300) -> str:
    """A Markdown summary of :func:`reproduction_table`: counts, then one line per configuration and metric."""
    if reproduction.empty:
        return (
            "_No measured configuration of a model with `published_as`: nothing to compare with the published figures._"
        )
    configs = reproduction[["model", "strategy", "dimension"]].drop_duplicates()
    verdicts = reproduction_summary(reproduction)["reproduced"].value_counts()
    counts = reproduction["reproduced"].value_counts()
    lines = [
        f"**{len(configs)} configuration rows** of {reproduction['model'].nunique()} model(s) with "
        f"`published_as` against the paper; a metric is *reproduced* when the published value lies inside "
        f"the platform's {confidence:.0%} interval (clustered over topics, docs/uncertainty.md).",
        "",
        f"- configurations: {int(verdicts.get('true', 0))} reproduced, {int(verdicts.get('false', 0))} not, "
        f"{int(verdicts.get('unknown', 0))} unknown",
        f"- metrics: {int(counts.get('true', 0))} inside, {int(counts.get('false', 0))} outside, "
        f"{int(counts.get('unknown', 0))} unknown",
        "",
    ]
    shown = reproduction.head(max_rows)
    lines.append(shown.to_markdown(index=False, floatfmt=".3f"))
    if len(reproduction) > max_rows:
        lines.append(f"\n_{len(reproduction) - max_rows} more rows not shown._")
    return "\n".join(lines)
