"""Properties the reports must have (metric ranges, one row per configuration, connected BT inputs)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from argassets.argument_quality.bt_scores import CONFIG_COLUMNS, MEAN_DIMENSION
from argassets.platform.pairwise.agreement import (
    METRIC_RANGES,
)


def metric_range_violations(report: pd.DataFrame) -> pd.DataFrame:
    """Rows of a report with a metric outside its mathematical range (NaN is not a violation).

    Returns
    -------
    pandas.DataFrame
        ``row, metric, value, low, high`` plus the report's key columns.
    """
    keys = [c for c in ("model", "strategy", "dimension") if c in report.columns]
    found = []
    for metric, (low, high) in METRIC_RANGES.items():
        if metric not in report.columns:
            continue
        values = pd.to_numeric(report[metric], errors="coerce").to_numpy(dtype=float)
        bad = np.isfinite(values) & ((values < low - 1e-9) | (values > high + 1e-9))
        bad |= np.isinf(values)
        for row in np.flatnonzero(bad):
            found.append(
                {
                    "row": int(row),
                    **{k: report[k].iat[row] for k in keys},
                    "metric": metric,
                    "value": float(values[row]),
                    "low": low,
                    "high": high,
                }
            )
    return pd.DataFrame(found, columns=["row", *keys, "metric", "value", "low", "high"])


def disconnected_topics(scores: pd.DataFrame, group_columns: Sequence[str], max_listed: int = 10) -> pd.DataFrame:
    """(group, topic) cells whose comparison graph is not connected, with their components.

    Parameters
    ----------
    scores
        A BT score table with ``component`` (0 = the largest component of the topic).
    group_columns
        The columns of one set of scores (``["dimension"]`` or model, strategy, dimension).
    max_listed
        Arguments listed per smaller component.

    Returns
    -------
    pandas.DataFrame
        One row per disconnected cell: the group columns, ``topic_id``, ``n_components``,
        ``component_sizes`` (largest first) and ``components``, a text naming the arguments
        (``discussion_id/argument_id``) of every component but the largest.
    """
    columns = [*group_columns, "topic_id", "n_components", "component_sizes", "components"]
    if scores.empty:
        return pd.DataFrame(columns=columns)
    keys = [*group_columns, "topic_id"]
    n_comp = scores.groupby(keys, sort=True)["component"].max()
    bad = n_comp[n_comp > 0]
    if bad.empty:
        return pd.DataFrame(columns=columns)
    flagged = scores.merge(bad.rename("_max").reset_index(), on=keys)
    rows = []
    for key, part in flagged.groupby(keys, sort=True):
        sizes = part.groupby("component").size().sort_index()
        described = []
        for comp, members in part[part["component"] > 0].groupby("component"):
            names = [f"{d}/{a}" for d, a in zip(members["discussion_id"], members["argument_id"], strict=True)]
            more = f" (+{len(names) - max_listed} more)" if len(names) > max_listed else ""
            described.append(f"#{comp}: {', '.join(names[:max_listed])}{more}")
        rows.append(
            {
                **dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                "n_components": int(len(sizes)),
                "component_sizes": ",".join(str(int(s)) for s in sizes.to_numpy()),
                "components": "; ".join(described),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def report_configuration_mismatch(
    report: pd.DataFrame, configurations: pd.DataFrame, *, with_mean: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Configurations present in the data but missing from a report, and report rows without data.

    ``configurations`` holds the (model, strategy, dimension) present in the input; a report must
    have exactly one row for each, plus (``with_mean``) one ``mean`` row per (model, strategy).

    Returns
    -------
    tuple of pandas.DataFrame
        ``(missing, extra)``; duplicated report rows count as extra.
    """
    expected = configurations[CONFIG_COLUMNS].drop_duplicates()
    if with_mean and len(expected):
        means = expected[["model", "strategy"]].drop_duplicates().assign(dimension=MEAN_DIMENSION)
        expected = pd.concat([expected, means], ignore_index=True)
    have = report[CONFIG_COLUMNS].astype(str)
    expected = expected.astype(str)
    merged = expected.merge(have.drop_duplicates(), how="left", indicator=True)
    missing = merged[merged["_merge"] == "left_only"].drop(columns="_merge")
    extra_rows = have.merge(expected, how="left", indicator=True)
    extra = extra_rows[extra_rows["_merge"] == "left_only"].drop(columns="_merge")
    duplicated = have[have.duplicated(keep="first")]
    return missing.reset_index(drop=True), pd.concat([extra, duplicated], ignore_index=True)
