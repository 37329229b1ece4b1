"""Cluster-resampled BCa intervals of ratios of sums, with ``scipy.stats.bootstrap``.

Stand-in for the shared interval core (``argassets.platform.stats``, issue 29, items 1-2) until it
reaches main: the intent is the same (resample the clusters, BCa where defined), and everything
that calls it goes through :func:`ratio_intervals`, so the switch is one import.

A figure here is a ratio of sums over rows, ``sum(value) / sum(present)`` (a mean over the rows an
output uses). A row belongs to one cluster (an argument, a debate) or to two (a pair of arguments:
the *vertex bootstrap*, Snijders and Borgatti 1999, which draws arguments and keeps a pair as often
as both its arguments are drawn, so every pair that shares an argument moves with it). SciPy
resamples the cluster indices; the statistic turns them into row weights, vectorised over the
replicates and over every output at once.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

#: Defaults of every interval here: level, replicates, seed (recorded in each asset's metadata).
LEVEL = 0.95
N_RESAMPLES = 2000
SEED = 2029
#: Replicates per batch of the vectorised statistic (bounds the row-weight matrix's memory).
BATCH = 250


@dataclass(frozen=True)
class ClusterDesign:
    """Which cluster(s) each row belongs to: ``row_clusters`` is ``(rows, 1)`` (nested) or
    ``(rows, 2)`` (a pair of arguments), codes ``0 <= c < n_clusters``."""

    row_clusters: np.ndarray
    n_clusters: int

    @classmethod
    def of(cls, *codes: np.ndarray) -> ClusterDesign:
        """The design of one (nested) or two (pair) cluster codes per row, factorised together
        (clusters numbered in order of first appearance)."""
        if not 1 <= len(codes) <= 2:
            raise ValueError(f"ClusterDesign.of: one or two cluster codes per row, got {len(codes)}")
        stacked = np.column_stack([np.asarray(c).astype(str) for c in codes])
        inverse, labels = pd.factorize(stacked.ravel())  # numbered in order of first appearance
        return cls(inverse.reshape(stacked.shape).astype(np.int64), len(labels))


@dataclass(frozen=True)
class RatioIntervals:
    """Per output: the estimate, the two-sided interval at ``level``, the one-sided upper bound at
    ``level``, the standard error (of the replicates, for a bootstrap), and how the interval was
    formed (``BCa``, ``percentile`` where BCa is undefined, ``constant``, ``dyadic``)."""

    estimate: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    upper: np.ndarray
    method: np.ndarray
    level: float
    n_resamples: int
    seed: int


def _multiplicities(indices: np.ndarray, n_clusters: int) -> np.ndarray:
    """How often each cluster occurs in each resample: ``(replicates, n_clusters)``."""
    flat = indices.reshape(-1, indices.shape[-1]).astype(np.int64)
    offsets = flat + n_clusters * np.arange(flat.shape[0])[:, None]
    counts = np.bincount(offsets.ravel(), minlength=flat.shape[0] * n_clusters)
    return counts.reshape(flat.shape[0], n_clusters).astype(float)


def _statistic(values: np.ndarray, present: np.ndarray, design: ClusterDesign, contrasts: np.ndarray):
    """The vectorised ratio statistic over resampled cluster indices, for ``scipy.stats.bootstrap``:
    every output's ratio, then the difference of each contrast's two ratios."""
    numerators = np.where(present, values, 0.0).T  # (rows, outputs)
    denominators = present.astype(float).T
    first = design.row_clusters[:, 0]
    second = design.row_clusters[:, 1] if design.row_clusters.shape[1] == 2 else None

    def statistic(indices: np.ndarray, axis: int = -1) -> np.ndarray:
        batch_shape = indices.shape[:-1]
        counts = _multiplicities(indices, design.n_clusters)
        weights = counts[:, first] if second is None else counts[:, first] * counts[:, second]
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = ((weights @ numerators) / (weights @ denominators)).T
        ratio = np.vstack([ratio, combine(contrasts, ratio)])
        return ratio.reshape(ratio.shape[0], *batch_shape)

    return statistic


def as_contrasts(contrasts: np.ndarray | None, n_outputs: int) -> np.ndarray:
    """``(k, n_outputs)`` weights: the extra outputs ``contrasts @ ratios`` (e.g. a row with +1 and -1
    is the difference of two outputs); none when ``contrasts`` is None.

    Raises ``ValueError`` when a row's width is not the number of outputs.
    """
    if contrasts is None:
        return np.zeros((0, n_outputs))
    weights = np.atleast_2d(np.asarray(contrasts, dtype=float))
    if weights.shape[1] != n_outputs:
        raise ValueError(f"contrasts have {weights.shape[1]} columns for {n_outputs} outputs")
    return weights


def combine(weights: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """``weights @ outputs`` along the first axis of ``outputs``, NaN only where a weighed output is
    NaN (a NaN of an output a row ignores stays out, as ``0 * NaN`` would not)."""
    flat = outputs.reshape(outputs.shape[0], -1)
    missing = np.isnan(flat)
    combined = weights @ np.where(missing, 0.0, flat)
    touched = (weights != 0).astype(float) @ missing.astype(float)
    return np.where(touched > 0, np.nan, combined).reshape(weights.shape[0], *outputs.shape[1:])


def _check(values: np.ndarray, present: np.ndarray, design: ClusterDesign, level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"ratio_intervals: level must lie in (0, 1), got {level}")
    if values.ndim != 2 or values.shape != present.shape:
        raise ValueError(f"ratio_intervals: values {values.shape} and present {present.shape} must be (outputs, rows)")
    if design.row_clusters.shape[0] != values.shape[1]:
        raise ValueError(f"ratio_intervals: {design.row_clusters.shape[0]} cluster codes for {values.shape[1]} rows")
    if design.n_clusters < 2:
        raise ValueError(f"ratio_intervals: an interval needs at least two clusters, got {design.n_clusters}")
    empty = np.flatnonzero(~present.any(axis=1))
    if empty.size:
        raise ValueError(f"ratio_intervals: output {int(empty[0])} has no row (an empty configuration)")


def ratio_intervals(
    values: np.ndarray,
    present: np.ndarray,
    design: ClusterDesign,
    level: float = LEVEL,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    contrasts: np.ndarray | None = None,
) -> RatioIntervals:
    """BCa intervals of ``sum(values * present) / sum(present)`` per output, resampling clusters.

    Parameters
    ----------
    values, present
        ``(outputs, rows)``: each output's value per row and whether it uses the row.
    design
        The rows' clusters (:class:`ClusterDesign`).
    level, n_resamples, seed
        Two-sided level (the one-sided upper bound is at the same level), replicates, seed.
    contrasts
        ``(k, outputs)`` weights of linear combinations appended as outputs (differences of two
        outputs, differences of differences), resampled with them, so their intervals are paired.

    Raises
    ------
    ValueError
        A level outside (0, 1), fewer than two clusters, an output without rows, or shapes that disagree.
    """
    values = np.asarray(values, dtype=float)
    present = np.asarray(present, dtype=bool)
    _check(values, present, design, level)
    statistic = _statistic(values, present, design, as_contrasts(contrasts, values.shape[0]))
    estimate = statistic(np.arange(design.n_clusters)[None, :])[:, 0]
    data = (np.arange(design.n_clusters),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate outputs are handled below, not warned about
        result = stats.bootstrap(
            data, statistic, vectorized=True, n_resamples=n_resamples, batch=BATCH,
            confidence_level=level, method="BCa", rng=np.random.default_rng(seed),
        )  # fmt: skip
        one_sided = stats.bootstrap(
            data, statistic, vectorized=True, n_resamples=0, batch=BATCH, confidence_level=level,
            method="BCa", alternative="less", bootstrap_result=result,
        )  # fmt: skip
    low, high = np.asarray(result.confidence_interval.low), np.asarray(result.confidence_interval.high)
    upper = np.asarray(one_sided.confidence_interval.high)
    return _fallbacks(estimate, low, high, upper, result.bootstrap_distribution, level, n_resamples, seed)


def _fallbacks(
    estimate: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    upper: np.ndarray,
    replicates: np.ndarray,
    level: float,
    n_resamples: int,
    seed: int,
) -> RatioIntervals:
    """Where BCa is undefined: a constant output gets its estimate as both bounds, an output with
    replicates SciPy could not use (a resample without its rows) the percentile interval of the rest."""
    method = np.full(estimate.shape, "BCa", dtype=object)
    low, high, upper = low.copy(), high.copy(), upper.copy()
    replicates = np.atleast_2d(replicates)
    se = np.nanstd(replicates, axis=1, ddof=1)
    for output in np.flatnonzero(~(np.isfinite(low) & np.isfinite(high) & np.isfinite(upper))):
        finite = replicates[output][np.isfinite(replicates[output])]
        if finite.size == 0 or np.ptp(finite) == 0:
            low[output] = high[output] = upper[output] = estimate[output]
            method[output] = "constant"
            continue
        tail = (1 - level) / 2
        low[output], high[output] = np.quantile(finite, [tail, 1 - tail])
        upper[output] = np.quantile(finite, level)
        method[output] = "percentile"
    return RatioIntervals(estimate, se, low, high, upper, method, level, n_resamples, seed)
