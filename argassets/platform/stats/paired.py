"""Paired comparisons of configurations judged on the same items, and the set of the best.

Two configurations scored on the same clusters are compared by the bootstrap distribution of their
*difference* on the same resamples (the paired design: what the clusters share cancels), not by
two separate intervals. Each difference gets its clustered interval and a two-sided p-value (the
inverted interval, :meth:`ClusterIntervals.p_values`); the p-values of one family of comparisons
are adjusted together (Holm by default). ``best_set`` is the top configuration and every other
one not significantly worse than it at the stated level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.platform.stats.intervals import (
    DEFAULT_SETTINGS,
    BootstrapSettings,
    ClusterIntervals,
    WeightedStatistic,
    cluster_bootstrap,
)
from argassets.platform.stats.multiplicity import adjust_p_values

__all__ = ["DIFFERENCE_COLUMNS", "PairedResult", "best_set", "paired_bootstrap", "top_index"]

#: Columns of :attr:`PairedResult.differences`.
DIFFERENCE_COLUMNS = [
    "configuration",
    "reference",
    "difference",
    "difference_low",
    "difference_high",
    "p_value",
    "p_adjusted",
    "adjustment",
    "interval_method",
]


@dataclass(frozen=True)
class PairedResult:
    """The configurations' own intervals and the differences of the requested comparisons."""

    levels: ClusterIntervals
    differences: pd.DataFrame


def paired_bootstrap(
    statistic: WeightedStatistic,
    n_clusters: int,
    names: Sequence[str],
    comparisons: Sequence[tuple[int, int]],
    settings: BootstrapSettings = DEFAULT_SETTINGS,
    *,
    what: str,
    adjustment: str = "holm",
) -> PairedResult:
    """Intervals of ``k`` configurations and of the differences ``value[i] - value[j]``, in one bootstrap.

    Parameters
    ----------
    statistic
        Cluster weights ``(batch, n_clusters)`` -> ``(k, batch)``: each configuration's figure on
        the same resample (see :func:`~argassets.platform.stats.intervals.cluster_bootstrap`).
    names
        The ``k`` configurations.
    comparisons
        ``(i, j)`` pairs of indices into ``names``: configuration ``i`` against reference ``j``.
        Their p-values form one family for ``adjustment``.
    adjustment
        ``holm`` or ``bh`` (:func:`~argassets.platform.stats.multiplicity.adjust_p_values`).

    Returns
    -------
    PairedResult
        ``levels`` (the ``k`` figures' intervals) and ``differences`` (:data:`DIFFERENCE_COLUMNS`).
    """
    names = tuple(str(n) for n in names)
    pairs = np.asarray(list(comparisons), dtype=np.int64).reshape(-1, 2)
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= len(names)):
        raise ValueError(f"{what}: a comparison names a configuration outside 0..{len(names) - 1}")
    k = len(names)

    def with_differences(weights: np.ndarray) -> np.ndarray:
        values = np.asarray(statistic(weights), dtype=float).reshape(k, -1)
        return np.vstack([values, values[pairs[:, 0]] - values[pairs[:, 1]]])

    labels = [*names, *(f"{names[i]} - {names[j]}" for i, j in pairs)]
    both = cluster_bootstrap(with_differences, n_clusters, labels, settings, what=what)
    levels = ClusterIntervals(
        names,
        both.estimate[:k],
        both.low[:k],
        both.high[:k],
        both.method[:k],
        both.n_clusters,
        settings,
        both.distribution[:k],
        both.jackknife[:k],
        both.expansion,
    )
    p = both.p_values()[k:]
    differences = pd.DataFrame(
        {
            "configuration": [names[i] for i in pairs[:, 0]],
            "reference": [names[j] for j in pairs[:, 1]],
            "difference": both.estimate[k:],
            "difference_low": both.low[k:],
            "difference_high": both.high[k:],
            "p_value": p,
            "p_adjusted": adjust_p_values(p, adjustment),
            "adjustment": adjustment,
            "interval_method": list(both.method[k:]),
        },
        columns=DIFFERENCE_COLUMNS,
    )
    return PairedResult(levels, differences)


def top_index(
    estimates: np.ndarray, candidates: np.ndarray | None = None, *, higher_is_better: bool = True
) -> int | None:
    """Index of the best defined estimate among ``candidates`` (first on ties), ``None`` if none."""
    values = np.asarray(estimates, dtype=float)
    allowed = np.isfinite(values) if candidates is None else np.isfinite(values) & np.asarray(candidates, dtype=bool)
    if not allowed.any():
        return None
    signed = np.where(allowed, values if higher_is_better else -values, -np.inf)
    return int(np.argmax(signed))


def best_set(
    names: Sequence[str],
    differences: pd.DataFrame,
    top: str,
    level: float,
    *,
    higher_is_better: bool = True,
) -> np.ndarray:
    """Which of ``names`` are the top or not significantly worse than it.

    ``differences`` holds the comparisons ``configuration - top`` (:func:`paired_bootstrap`); a
    configuration is significantly worse when its difference points the worse way and its
    adjusted p-value is below ``1 - level``. A configuration without a comparison to the top, or
    with an undefined one, is not in the set.
    """
    against = differences[differences["reference"] == top].set_index("configuration")
    worse_sign = -1.0 if higher_is_better else 1.0
    members = []
    for name in names:
        if name == top:
            members.append(True)
            continue
        if name not in against.index:
            members.append(False)
            continue
        row = against.loc[name]
        if not np.isfinite(row["p_adjusted"]):
            members.append(False)  # no defined difference: "not worse" cannot be claimed
            continue
        worse = bool(np.sign(row["difference"]) == worse_sign)
        members.append(not (worse and row["p_adjusted"] < 1.0 - level))
    return np.asarray(members, dtype=bool)
