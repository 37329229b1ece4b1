"""Paired comparisons of configurations judged on the same items, and the set of the best.

Two configurations scored on the same clusters are compared by the bootstrap distribution of their
*difference* on the same resamples (the paired design: what the clusters share cancels), not by
two separate intervals. Each difference gets its clustered interval and a two-sided p-value (the
inverted interval, :meth:`ClusterIntervals.p_values`); the p-values of one family of comparisons
are adjusted together (Holm by default). ``best_set`` is the top configuration and every other
one not significantly worse than it at the stated level.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
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
    families: Sequence[Hashable] | None = None,
) -> PairedResult:
    """Intervals of ``k`` configurations and of the differences ``value[i] - value[j]``, in one bootstrap.

    ``statistic`` maps cluster weights ``(batch, n_clusters)`` to each configuration's figure on the
    same resample, ``(k, batch)`` (see :func:`~argassets.platform.stats.intervals.cluster_bootstrap`);
    ``comparisons`` are ``(i, j)`` index pairs into ``names`` (configuration ``i`` against reference
    ``j``); comparisons with the same label in ``families`` are adjusted together by ``adjustment``
    (``holm`` or ``bh``; default: all one family). Returns the ``k`` figures' intervals and the
    differences (:data:`DIFFERENCE_COLUMNS`).
    """
    names = tuple(str(n) for n in names)
    adjust_p_values(np.zeros(0), adjustment)  # an unknown adjustment fails before the resampling
    pairs = np.asarray(list(comparisons), dtype=np.int64).reshape(-1, 2)
    if len(pairs) and (pairs.min() < 0 or pairs.max() >= len(names)):
        raise ValueError(f"{what}: a comparison names a configuration outside 0..{len(names) - 1}")
    k = len(names)

    def with_differences(weights: np.ndarray) -> np.ndarray:
        values = np.asarray(statistic(weights), dtype=float).reshape(k, -1)
        return np.vstack([values, values[pairs[:, 0]] - values[pairs[:, 1]]])

    labels = [*names, *(f"{names[i]} - {names[j]}" for i, j in pairs)]
    both = cluster_bootstrap(with_differences, n_clusters, labels, settings, what=what)
    levels = _first(both, k)
    p = both.p_values()[k:]
    adjusted = _adjusted(p, families, adjustment, what)
    differences = pd.DataFrame(
        {
            "configuration": [names[i] for i in pairs[:, 0]],
            "reference": [names[j] for j in pairs[:, 1]],
            "difference": both.estimate[k:],
            "difference_low": both.low[k:],
            "difference_high": both.high[k:],
            "p_value": p,
            "p_adjusted": adjusted,
            "adjustment": adjustment,
            "interval_method": list(both.method[k:]),
        },
        columns=DIFFERENCE_COLUMNS,
    )
    return PairedResult(levels, differences)


def _first(intervals: ClusterIntervals, k: int) -> ClusterIntervals:
    """The first ``k`` outputs of ``intervals``."""
    return ClusterIntervals(
        intervals.names[:k],
        intervals.estimate[:k],
        intervals.low[:k],
        intervals.high[:k],
        intervals.method[:k],
        intervals.n_clusters,
        intervals.settings,
        intervals.distribution[:k],
        intervals.jackknife[:k],
        intervals.expansion,
    )


def _adjusted(p: np.ndarray, families: Sequence[Hashable] | None, adjustment: str, what: str) -> np.ndarray:
    """p-values adjusted within each family (all one family without labels)."""
    labels = list(families) if families is not None else [0] * len(p)
    if len(labels) != len(p):
        raise ValueError(f"{what}: {len(labels)} family labels for {len(p)} comparisons")
    out = np.full(len(p), np.nan)
    for family in dict.fromkeys(labels):
        members = np.array([label == family for label in labels], dtype=bool)
        out[members] = adjust_p_values(p[members], adjustment)
    return out


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
