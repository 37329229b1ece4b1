"""How far to trust a pairwise judge (or a set of human labels): the reliability battery's counts.

Each figure of the battery is a share ``sum(numerator) / sum(denominator)`` of per-cluster counts
(a cluster is a topic or a debate: the unit the interval resamples), so every figure gets its
clustered interval from :func:`share_intervals`, all judges and all figures in one bootstrap:

- transitivity (:func:`triads_of`, :func:`transitivity_counts`): of the triads of items whose three
  pairs were all judged, the share violating weak stochastic transitivity and the share forming a
  strict 3-cycle, from each pair's preference (:func:`preferences`);
- repetition stability (:func:`repetition_counts`): the share of pairs whose runs all agree;
- tie propensity (:func:`tie_counts`): the share of valid verdicts that are ``Tie``.

Position consistency is :mod:`~argassets.platform.pairwise.position_bias`'s and the length
preference the study's own measure; both enter through :func:`share_intervals` too. How to read
the figures: docs/reliability.md. Plain numpy, without Dagster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.platform.pairwise.labels import TIE, A, B
from argassets.platform.pairwise.votes import run_agreement_pattern
from argassets.platform.stats.intervals import DEFAULT_SETTINGS, BootstrapSettings, cluster_bootstrap

__all__ = [
    "DEFAULT_TOLERANCES",
    "FLAGGED_PROPERTY",
    "Tolerances",
    "Triads",
    "flagged",
    "cluster_counts",
    "preferences",
    "repetition_counts",
    "share_intervals",
    "tie_counts",
    "transitivity_counts",
    "triads_of",
]


#: The property a metric flags (the other figures describe, they do not flag).
FLAGGED_PROPERTY = {
    "position_consistency": "position",
    "wst_violation_share": "transitivity",
    "run_agreement": "repetition",
    "longer_share": "length",
}


@dataclass(frozen=True)
class Tolerances:
    """How far a figure may sit from the ideal before a judge is flagged on it (conventions: docs/reliability.md)."""

    min_position_consistency: float = 0.9
    max_wst_violation: float = 0.05
    min_run_agreement: float = 0.9
    #: Flag a length preference whose interval lies wholly outside ``0.5 +- length_band``.
    length_band: float = 0.1


DEFAULT_TOLERANCES = Tolerances()


def flagged(
    metric: np.ndarray, low: np.ndarray, high: np.ndarray, tolerances: Tolerances = DEFAULT_TOLERANCES
) -> np.ndarray:
    """Per figure: ``True`` when its whole interval lies on the wrong side of its tolerance.

    Only the metrics of :data:`FLAGGED_PROPERTY` flag; a figure without an interval never does.
    """
    metric = np.asarray(metric, dtype=object)
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    with np.errstate(invalid="ignore"):
        rules = {
            "position_consistency": high < tolerances.min_position_consistency,
            "wst_violation_share": low > tolerances.max_wst_violation,
            "run_agreement": high < tolerances.min_run_agreement,
            "longer_share": (low > 0.5 + tolerances.length_band) | (high < 0.5 - tolerances.length_band),
        }
    out = np.zeros(len(metric), dtype=bool)
    for name, rule in rules.items():
        out |= (metric == name) & rule
    return out


def cluster_counts(
    values: np.ndarray, group: np.ndarray, cluster: np.ndarray, n_groups: int, n_clusters: int
) -> np.ndarray:
    """``(n_groups, n_clusters)`` sums of ``values`` (booleans count as 0/1) by group and cluster."""
    group = np.asarray(group, dtype=np.int64)
    cluster = np.asarray(cluster, dtype=np.int64)
    flat = np.bincount(group * n_clusters + cluster, np.asarray(values, dtype=float), n_groups * n_clusters)
    return flat.reshape(n_groups, n_clusters)


def preferences(codes: np.ndarray) -> np.ndarray:
    """Per pair, the share of its valid verdicts for the first item, a tie counting one half.

    ``codes`` is ``(n_pairs, n_runs)`` label codes (``A`` 0, ``B`` 1, ``Tie`` 2, missing < 0);
    NaN for a pair without a valid verdict.
    """
    codes = np.atleast_2d(np.asarray(codes))
    valid = (codes >= 0).sum(axis=1)
    score = (codes == A).sum(axis=1) + 0.5 * (codes == TIE).sum(axis=1)
    with np.errstate(all="ignore"):
        return np.where(valid > 0, score / np.maximum(valid, 1), np.nan)


def tie_counts(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: ``(ties, valid verdicts)`` over its runs (``codes`` as :func:`preferences`)."""
    codes = np.atleast_2d(np.asarray(codes))
    return (codes == TIE).sum(axis=1), ((codes == A) | (codes == B) | (codes == TIE)).sum(axis=1)


def repetition_counts(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: ``(all runs agree, every run valid)`` as 0/1 (``codes`` as :func:`preferences`).

    A pair with a missing run is left out (denominator 0); one run only measures nothing.
    """
    codes = np.atleast_2d(np.asarray(codes))
    if codes.shape[1] < 2:
        zeros = np.zeros(codes.shape[0], dtype=np.int64)
        return zeros, zeros
    pattern = run_agreement_pattern(codes)
    return (pattern == 1).astype(np.int64), (pattern > 0).astype(np.int64)


@dataclass(frozen=True)
class Triads:
    """Triads ``i < j < k`` of items whose three pairs were judged, as the cycle ``i -> j -> k -> i``.

    ``pairs[t]`` holds the indices (into the pairs given to :func:`triads_of`) of ``(i, j)``,
    ``(j, k)`` and ``(k, i)``; ``reversed_[t]`` is ``True`` where that pair was given the other way
    round (its preference enters as ``1 - p``); ``cluster[t]`` is the triad's cluster.
    """

    pairs: np.ndarray
    reversed_: np.ndarray
    cluster: np.ndarray

    def __len__(self) -> int:
        return len(self.cluster)


def _cluster_triads(first: np.ndarray, second: np.ndarray, where: np.ndarray, c: int, what: str) -> Triads:
    """The triads among the pairs ``where`` (all of cluster ``c``)."""
    nodes, inverse = np.unique(np.concatenate([first[where], second[where]]), return_inverse=True)
    u, v = inverse[: len(where)], inverse[len(where) :]
    n = len(nodes)
    pair_of = np.full((n, n), -1, dtype=np.int64)
    pair_of[u, v] = where
    pair_of[v, u] = where
    if int((pair_of >= 0).sum()) != 2 * len(where):
        raise ValueError(f"{what}: cluster {c} has a pair of items judged twice or an item paired with itself")
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    linked = pair_of >= 0
    later = np.arange(n)[None, :] > hi[:, None]
    edge, k = np.nonzero(linked[lo] & linked[hi] & later)
    i, j = lo[edge], hi[edge]
    pairs = np.stack([pair_of[i, j], pair_of[j, k], pair_of[k, i]], axis=1)
    heads = np.stack([nodes[i], nodes[j], nodes[k]], axis=1)
    reversed_ = first[pairs] != heads
    return Triads(pairs, reversed_, np.full(len(pairs), c, dtype=np.int64))


def triads_of(first: np.ndarray, second: np.ndarray, cluster: np.ndarray, *, what: str) -> Triads:
    """Every triad of items whose three pairs are among the pairs ``(first[p], second[p])``.

    Items are integer codes; triads are formed within a cluster only (a topic's tournament).

    Raises
    ------
    ValueError
        An unordered pair given twice in a cluster, or an item paired with itself; names ``what``.
    """
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    cluster = np.asarray(cluster, dtype=np.int64)
    if (first == second).any():
        raise ValueError(f"{what}: pair {int(np.flatnonzero(first == second)[0])} pairs an item with itself")
    parts = [_cluster_triads(first, second, np.flatnonzero(cluster == c), int(c), what) for c in np.unique(cluster)]
    if not parts:
        empty = np.zeros((0, 3), dtype=np.int64)
        return Triads(empty, empty.astype(bool), np.zeros(0, dtype=np.int64))
    return Triads(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("pairs", "reversed_", "cluster")))


def transitivity_counts(preference: np.ndarray, triads: Triads, n_clusters: int) -> dict[str, np.ndarray]:
    """Per cluster: triads with three defined preferences, WST violations and strict 3-cycles.

    ``preference`` is ``(n_judges, n_pairs)`` (:func:`preferences`; NaN: not judged). With the cycle
    preferences ``x, y, z`` a triad violates weak stochastic transitivity iff all three are
    ``>= 1/2`` and one ``> 1/2``, or all ``<= 1/2`` and one ``< 1/2`` (a tie is indifference, which
    WST makes transitive); a strict 3-cycle has all three ``> 1/2`` or all ``< 1/2``. Returns
    ``(n_judges, n_clusters)`` arrays ``triads``, ``violations``, ``cycles``.
    """
    preference = np.atleast_2d(np.asarray(preference, dtype=float))
    out = {name: np.zeros((preference.shape[0], n_clusters)) for name in ("triads", "violations", "cycles")}
    # One judge at a time: memory stays (triads x 3) however many judges there are.
    for row, values in enumerate(preference):
        cycle = values[triads.pairs]
        cycle = np.where(triads.reversed_, 1.0 - cycle, cycle)
        defined = np.isfinite(cycle).all(axis=1)
        at_least, above = (cycle >= 0.5).all(axis=1), (cycle > 0.5).any(axis=1)
        at_most, below = (cycle <= 0.5).all(axis=1), (cycle < 0.5).any(axis=1)
        violation = defined & ((at_least & above) | (at_most & below))
        strict = defined & ((cycle > 0.5).all(axis=1) | (cycle < 0.5).all(axis=1))
        for name, flags in (("triads", defined), ("violations", violation), ("cycles", strict)):
            out[name][row] = np.bincount(triads.cluster, flags, n_clusters)
    return out


def share_intervals(
    numerator: np.ndarray,
    denominator: np.ndarray,
    names: Sequence[str],
    settings: BootstrapSettings = DEFAULT_SETTINGS,
    *,
    what: str,
) -> pd.DataFrame:
    """Each row's share ``sum_c num[r, c] / sum_c den[r, c]`` with its clustered interval, in one bootstrap.

    ``numerator`` and ``denominator`` are ``(n_rows, n_clusters)`` counts (the same clusters for
    every row); a row whose denominator is zero has no figure (``interval_method`` says so).
    Returns ``name, estimate, low, high, interval_method, n`` (``n``: the summed denominator).
    """
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    if numerator.shape != denominator.shape or numerator.ndim != 2 or numerator.shape[0] != len(names):
        raise ValueError(
            f"{what}: numerator {numerator.shape} and denominator {denominator.shape} must be "
            f"(rows, clusters) with one row per name ({len(names)})"
        )

    def statistic(weights: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return (numerator @ weights.T) / (denominator @ weights.T)

    intervals = cluster_bootstrap(statistic, numerator.shape[1], names, settings, what=what)
    return intervals.frame().assign(n=denominator.sum(axis=1).astype(np.int64))
