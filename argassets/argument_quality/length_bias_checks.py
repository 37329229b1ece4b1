"""The checks of a length-bias report: rows missing, given twice or out of range (plain pandas)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.argument_quality.length_bias_report import ALL_DIMENSIONS, EXPERTS
from argassets.argument_quality.scope import DIMENSIONS

#: Range of every bounded column of :func:`length_bias_report` (inclusive).
RANGES: dict[str, tuple[float, float]] = {
    "share_longer": (0.0, 1.0),
    "share_longer_experts": (0.0, 1.0),
    "delta_share": (-1.0, 1.0),
    "pearson": (-1.0, 1.0),
    "partial_pearson": (-1.0, 1.0),
    "length_correlation": (-1.0, 1.0),
    "lc_pearson": (-1.0, 1.0),
    "lc_spearman": (-1.0, 1.0),
    "lc_kendall": (-1.0, 1.0),
}


def length_bias_problems(report: pd.DataFrame, configurations: pd.DataFrame | None) -> pd.DataFrame:
    """Rows missing from or wrong in a :func:`length_bias_report`.

    ``configurations`` (``model, strategy, dimension``, e.g. of ``aq_majority_votes``) must each have
    a row, plus one ``all`` row per (model, strategy); the experts must have a row per dimension of
    the data and ``all``; no row may be given twice; every bounded value must be in range
    (:data:`RANGES`, ``kappa_q*`` in [-1, 1], ``agreement_q*`` in [0, 100]).

    Returns
    -------
    pandas.DataFrame
        ``model, strategy, dimension, problem``.
    """
    problems: list[tuple[str, str, str, str]] = []
    key = ["model", "strategy", "dimension"]
    have = set(report[key].astype(str).itertuples(index=False, name=None)) if len(report) else set()
    if len(report):
        for dup in report[report.duplicated(key)][key].itertuples(index=False, name=None):
            problems.append((*dup, "given twice"))
    expected: set[tuple[str, str, str]] = set()
    dims = set(DIMENSIONS)
    if configurations is not None and len(configurations):
        for model, strategy, dimension in configurations[key].astype(str).itertuples(index=False, name=None):
            expected |= {(model, strategy, dimension), (model, strategy, ALL_DIMENSIONS)}
        dims = set(configurations["dimension"].astype(str))
    expected |= {(*EXPERTS, d) for d in dims} | {(*EXPERTS, ALL_DIMENSIONS)}
    for missing in sorted(expected - have):
        problems.append((*missing, "missing"))
    bounds = dict(RANGES)
    for column in report.columns:
        if column.startswith("kappa_q"):
            bounds[column] = (-1.0, 1.0)
        elif column.startswith("agreement_q"):
            bounds[column] = (0.0, 100.0)
    for column, (low, high) in bounds.items():
        if column not in report.columns:
            continue
        values = pd.to_numeric(report[column], errors="coerce").to_numpy(dtype=float)
        for i in np.flatnonzero(
            np.isinf(values) | (np.isfinite(values) & ((values < low - 1e-9) | (values > high + 1e-9)))
        ):
            record = report.iloc[int(i)]
            problems.append(
                (
                    str(record["model"]),
                    str(record["strategy"]),
                    str(record["dimension"]),
                    f"{column} out of range: {float(values[i])!r}",
                )
            )
    return pd.DataFrame(problems, columns=["model", "strategy", "dimension", "problem"])
