"""Intervals of means over rows that are clustered: by debate (nested) or by pair of arguments (dyadic).

A row of the pointwise study belongs to one argument, and an argument to one debate: the clusters
nest, and :func:`~.cluster_bootstrap.ratio_intervals` resamples debates (BCa). A row of the
pairwise study belongs to a *pair* of arguments, and each argument recurs in about 19 pairs: a
system that misplaces one argument errs on all of them, so rows that share an argument are
dependent although no partition into clusters holds them. For such dyadic data the variance is
the dyadic-robust sandwich (Fafchamps and Gubert 2007; Aronow, Samii and Assenova 2015; Cameron
and Miller 2014): with the linearised residuals ``e_r`` of the mean,
``V = G / (G - 1) * sum over row pairs (r, s) sharing an argument of e_r e_s``, ``G`` the number of
arguments, and the interval is normal. Resampling the arguments instead (the vertex bootstrap)
was measured 1.5 times wider than this on the study (docs/human_replacement.md): it counts a pair
drawn through both of its arguments as the product of their multiplicities, whose variance (3)
inflates the row noise threefold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse, stats

from argassets.political.validation.cluster_bootstrap import (
    LEVEL,
    N_RESAMPLES,
    SEED,
    ClusterDesign,
    RatioIntervals,
    as_contrasts,
    combine,
    ratio_intervals,
)


@dataclass(frozen=True)
class Clustering:
    """How a table's rows cluster: ``nested`` (one code per row, resampled with BCa) or ``dyadic``
    (two argument codes per row, the dyadic-robust sandwich), with the unit named for the reader."""

    design: ClusterDesign
    unit: str

    @property
    def dyadic(self) -> bool:
        return self.design.row_clusters.shape[1] == 2

    @property
    def method(self) -> str:
        if self.dyadic:
            return f"dyadic-robust normal interval over {self.design.n_clusters} {self.unit}s"
        return f"BCa bootstrap over {self.design.n_clusters} {self.unit}s"

    def subset(self, keep: np.ndarray) -> Clustering:
        """The clustering of the rows ``keep`` selects (codes factorised again)."""
        codes = self.design.row_clusters[np.asarray(keep)]
        return Clustering(ClusterDesign.of(*codes.T), self.unit)


def dyadic_intervals(
    values: np.ndarray,
    present: np.ndarray,
    design: ClusterDesign,
    level: float = LEVEL,
    contrasts: np.ndarray | None = None,
) -> RatioIntervals:
    """Normal intervals of ``sum(values * present) / sum(present)`` per output with the dyadic-robust variance.

    Rows whose two codes are the same unordered pair share both arguments and are counted once.
    ``contrasts`` (``(k, outputs)`` weights) appends linear combinations of the outputs (their residuals combine alike).

    Raises
    ------
    ValueError
        A level outside (0, 1), an output without rows, fewer than two arguments, or a row whose two
        codes are the same argument.
    """
    values = np.asarray(values, dtype=float)
    present = np.asarray(present, dtype=bool)
    if not 0.0 < level < 1.0:
        raise ValueError(f"dyadic_intervals: level must lie in (0, 1), got {level}")
    codes = design.row_clusters
    if codes.shape[1] != 2 or np.any(codes[:, 0] == codes[:, 1]):
        raise ValueError("dyadic_intervals: every row needs two different argument codes")
    if design.n_clusters < 2:
        raise ValueError(f"dyadic_intervals: an interval needs at least two arguments, got {design.n_clusters}")
    counts = present.sum(axis=1)
    if np.any(counts == 0):
        raise ValueError(f"dyadic_intervals: output {int(np.flatnonzero(counts == 0)[0])} has no row")
    filled = np.where(present, values, 0.0)
    estimate = filled.sum(axis=1) / counts
    residuals = np.where(present, values - estimate[:, None], 0.0) / counts[:, None]
    weights = as_contrasts(contrasts, values.shape[0])
    estimate = np.concatenate([estimate, combine(weights, estimate)])
    residuals = np.vstack([residuals, combine(weights, residuals)])
    rows = np.arange(codes.shape[0])
    incidence = sparse.csr_matrix(
        (np.ones(2 * rows.size), (np.concatenate([rows, rows]), codes.T.ravel())),
        shape=(rows.size, design.n_clusters),
    )
    _, pair_codes = np.unique(np.sort(codes, axis=1), axis=0, return_inverse=True)
    same_pair = sparse.csr_matrix((np.ones(rows.size), (rows, pair_codes.ravel())))
    by_argument = np.asarray(incidence.T @ residuals.T).T
    by_pair = np.asarray(same_pair.T @ residuals.T).T
    variance = (by_argument**2).sum(axis=1) - (by_pair**2).sum(axis=1)
    variance = np.where(variance > 0, variance, (by_pair**2).sum(axis=1))
    se = np.sqrt(variance * design.n_clusters / (design.n_clusters - 1))
    two_sided = stats.norm.ppf((1 + level) / 2)
    method = np.full(estimate.shape, "dyadic", dtype=object)
    return RatioIntervals(
        estimate, se, estimate - two_sided * se, estimate + two_sided * se, estimate + stats.norm.ppf(level) * se,
        method, level, 0, 0,
    )  # fmt: skip


def clustered_intervals(
    values: np.ndarray,
    present: np.ndarray,
    clustering: Clustering,
    level: float = LEVEL,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    contrasts: np.ndarray | None = None,
) -> RatioIntervals:
    """The interval of each output's mean the clustering calls for (BCa over nested clusters, dyadic
    sandwich), then of each contrast's difference."""
    if clustering.dyadic:
        return dyadic_intervals(values, present, clustering.design, level, contrasts)
    return ratio_intervals(values, present, clustering.design, level, n_resamples, seed, contrasts)
