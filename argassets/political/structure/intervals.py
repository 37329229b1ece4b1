"""Bootstrap intervals that resample whole clusters (debates, or speakers within a debate).

Arguments of one debate share a topic, a panel and an audience, so they are not independent; the
interval of a mean resamples clusters with replacement and recomputes the ratio of sums. Everything
is vectorised over groups: one ``(clusters,)`` weight vector per replicate serves every group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix

#: Replicates of every interval, and their seed (the figures must not change from run to run).
N_BOOT = 1000
SEED = 2026
LEVEL = 0.95
#: Up to this many (group, cluster) cells the sums are a dense array, beyond it a sparse matrix.
DENSE_CELLS = 200_000


def cluster_weights(
    n_clusters: int, n_boot: int = N_BOOT, seed: int = SEED, strata: np.ndarray | None = None
) -> np.ndarray:
    """``(n_boot, n_clusters)`` counts: how often each cluster is drawn in each replicate.

    With ``strata`` (a stratum code per cluster), each replicate draws within every stratum as many
    clusters as it holds (speakers resampled within their debate, so every debate keeps its size).
    """
    if n_clusters < 1:
        raise ValueError("cluster_weights: no clusters to resample")
    rng = np.random.default_rng(seed)
    if strata is None:
        return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_boot).astype(float)
    strata = np.asarray(strata)
    if len(strata) != n_clusters:
        raise ValueError(f"cluster_weights: {len(strata)} strata codes for {n_clusters} clusters")
    weights = np.zeros((n_boot, n_clusters))
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        size = len(members)
        weights[:, members] = rng.multinomial(size, np.full(size, 1.0 / size), size=n_boot)
    return weights


@dataclass(frozen=True)
class Bootstrap:
    """Point estimates ``(groups,)`` and their bootstrap replicates ``(n_boot, groups)``."""

    estimate: np.ndarray
    replicates: np.ndarray
    count: np.ndarray  # observations per group

    def interval(self, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
        """Percentile interval per group (NaN where a group has no observation)."""
        return replicate_interval(self.replicates, level)


def replicate_interval(replicates: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of each column of ``replicates``, NaN replicates ignored (linear
    interpolation, as ``numpy.nanpercentile``; vectorised, since that one loops over columns)."""
    tail = (1.0 - level) / 2.0
    ordered = np.sort(replicates, axis=0)  # NaN sort last
    finite = np.isfinite(ordered).sum(axis=0)
    bounds = []
    for q in (tail, 1.0 - tail):
        position = q * np.maximum(finite - 1, 0)
        below = np.floor(position).astype(int)
        above = np.minimum(below + 1, np.maximum(finite - 1, 0))
        low_value = np.take_along_axis(ordered, below[None, :], axis=0)[0]
        high_value = np.take_along_axis(ordered, above[None, :], axis=0)[0]
        value = low_value + (high_value - low_value) * (position - below)
        bounds.append(np.where(finite > 0, value, np.nan))
    return bounds[0], bounds[1]


def grouped_means(
    values: np.ndarray, groups: np.ndarray, n_groups: int, clusters: np.ndarray, weights: np.ndarray
) -> Bootstrap:
    """Mean of ``values`` per group, with replicates that resample clusters.

    Parameters
    ----------
    values
        Observations; NaN ones are left out.
    groups, clusters
        Integer codes per observation (``0 <= group < n_groups``, ``0 <= cluster < weights.shape[1]``).
    weights
        :func:`cluster_weights` output.
    """
    values = np.asarray(values, dtype=float)
    keep = np.isfinite(values)
    shape = (n_groups, weights.shape[1])
    at = (np.asarray(groups)[keep], np.asarray(clusters)[keep])
    if shape[0] * shape[1] <= DENSE_CELLS:
        flat = at[0] * shape[1] + at[1]
        sums: Any = np.bincount(flat, weights=values[keep], minlength=shape[0] * shape[1]).reshape(shape)
        counts: Any = np.bincount(flat, minlength=shape[0] * shape[1]).reshape(shape).astype(float)
    else:
        # sparse (group x cluster) sums: a replicate costs one pass over the occupied cells, so
        # clusters nested in groups (speakers within a debate) cost no more than debates
        sums = coo_matrix((values[keep], at), shape=shape).tocsr()
        counts = coo_matrix((np.ones(int(keep.sum())), at), shape=shape).tocsr()
    total, n = np.asarray(sums.sum(axis=1)).ravel(), np.asarray(counts.sum(axis=1)).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = total / n
        replicates = np.asarray(sums @ weights.T).T / np.asarray(counts @ weights.T).T
    return Bootstrap(estimate, replicates, n.astype(int))


def speaker_clusters(table: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``table`` (``episode``, ``speaker``): its speaker-in-debate cluster, and weights
    that resample speakers within each debate."""
    episode = pd.factorize(table["episode"].astype(str), sort=True)[0]
    speaker = pd.factorize(table["speaker"].astype(str), sort=True)[0]
    width = int(speaker.max()) + 1 if len(speaker) else 1
    clusters, pairs = pd.factorize(episode * width + speaker, sort=True)
    return clusters, cluster_weights(len(pairs), n_boot, seed, strata=np.asarray(pairs) // width)
