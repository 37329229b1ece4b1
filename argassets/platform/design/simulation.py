"""How many judgments per item a study needs, found by simulating annotators with known noise.

Pairwise (Bradley-Terry)
    True strengths are drawn from ``Normal(0, strength_sd^2)`` for every replication. Each
    judgment of a pair is made by an annotator of the pool: "equal" with probability
    ``tie_share``, else the first item wins with probability
    ``1 / (1 + exp(-a (theta_1 - theta_2)))``, where the annotator's discrimination ``a`` is
    log-normal around 1 (``discrimination_sd``). An "equal" counts half a win to each side (the
    human studies' rule). For each number of judgments per pair the strengths are re-estimated
    (the platform's Bradley-Terry fit) and scored by the scale-separation reliability the analyst
    will see (:func:`~.information.scale_separation_reliability`), the reliability that is true in
    the simulation (squared correlation with the true strengths), Spearman's rho with the truth and
    the mean width of the 95% Wald intervals of the strengths.

Pointwise (binary labels, Krippendorff's alpha)
    Each item has a probability ``q`` that an annotator says 1, drawn from a Beta distribution
    (fitted to a pilot study's label counts with :func:`fit_label_probabilities`, a beta-binomial
    maximum-likelihood fit). For each number of annotators per item the nominal alpha of the
    simulated labels is computed (``krippendorff``); its 2.5-97.5% range over the replications is
    the interval a study of that size would give, and the majority's accuracy against each item's
    true class (``q > 0.5``) is reported beside it.

:func:`choose_judgments` picks the smallest number that meets the stated target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats
from threadpoolctl import threadpool_limits

from argassets.platform.design.information import scale_separation_reliability, standard_errors
from argassets.platform.pairwise.agreement import krippendorff_alpha_from_value_counts
from argassets.platform.pairwise.bradley_terry import Engine, fit_strengths

__all__ = [
    "AnnotatorPool",
    "choose_judgments",
    "fit_label_probabilities",
    "pool_from_pilot",
    "simulate_pairwise",
    "simulate_pointwise",
]

#: Regularisation of the simulated BT fits (``choix``'s ``alpha``; the political study's value).
SIMULATION_ALPHA = 0.01

#: Percentiles of the replications reported as the interval of a figure.
_LOW, _HIGH = 2.5, 97.5


@dataclass(frozen=True)
class AnnotatorPool:
    """Simulated pairwise annotators (see the module docstring)."""

    strength_sd: float
    tie_share: float = 0.0
    discrimination_sd: float = 0.0

    def __post_init__(self) -> None:
        if not self.strength_sd > 0:
            raise ValueError(f"strength_sd must be > 0, got {self.strength_sd!r}")
        if not 0 <= self.tie_share < 1:
            raise ValueError(f"tie_share must be in [0, 1), got {self.tie_share!r}")
        if not self.discrimination_sd >= 0:
            raise ValueError(f"discrimination_sd must be >= 0, got {self.discrimination_sd!r}")


def _pair_index(pairs: np.ndarray, n_items: int) -> np.ndarray:
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if len(index) == 0:
        raise ValueError("no pairs to simulate")
    if index.min() < 0 or index.max() >= n_items:
        raise ValueError(f"pair indices must lie in 0..{n_items - 1}")
    if (index[:, 0] == index[:, 1]).any():
        raise ValueError("a pair compares an item with itself")
    return index


def simulate_votes(
    theta: np.ndarray, pairs: np.ndarray, judgments: int, pool: AnnotatorPool, rng: np.random.Generator
) -> np.ndarray:
    """Win-count matrices ``(replications, n, n)`` of ``judgments`` simulated votes per pair."""
    reps, n = theta.shape
    a, b = pairs[:, 0], pairs[:, 1]
    shape = (reps, len(pairs), judgments)
    discrimination = np.exp(pool.discrimination_sd * rng.standard_normal(shape))
    diff = (theta[:, a] - theta[:, b])[:, :, None]
    first = rng.random(shape) < 1.0 / (1.0 + np.exp(-discrimination * diff))
    tie = rng.random(shape) < pool.tie_share
    first_wins = np.where(tie, 0.5, first.astype(float)).sum(axis=2)
    counts = np.zeros((reps, n, n))
    rows = np.arange(reps)[:, None]
    np.add.at(counts, (rows, a[None, :], b[None, :]), first_wins)
    np.add.at(counts, (rows, b[None, :], a[None, :]), judgments - first_wins)
    return counts


def _correlations(estimates: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson and Spearman correlation of every row of ``estimates`` with the row of ``truth``."""
    pearson = np.array([np.corrcoef(e, t)[0, 1] for e, t in zip(estimates, truth, strict=True)])
    spearman = np.array([stats.spearmanr(e, t)[0] for e, t in zip(estimates, truth, strict=True)])
    return pearson, spearman


def simulate_pairwise(
    pairs: np.ndarray,
    n_items: int,
    pool: AnnotatorPool,
    judgments_per_pair: Sequence[int],
    replications: int,
    seed: int,
    alpha: float = SIMULATION_ALPHA,
    engine: Engine = "batched",
) -> pd.DataFrame:
    """Reliability of the BT strengths for each number of judgments per pair (``engine``: the
    platform's BT engine, ``batched`` or ``choix``).

    Returns
    -------
    pandas.DataFrame
        One row per number: ``judgments_per_pair``, ``judgments`` (total), ``ssr`` (mean),
        ``ssr_low``, ``ssr_high``, ``reliability`` (mean squared correlation with the truth),
        ``reliability_low``, ``spearman``, ``spearman_low``, ``ci_width`` (mean width of the 95%
        intervals of the strengths) and ``replications``.
    """
    index = _pair_index(pairs, n_items)
    if replications < 2:
        raise ValueError(f"replications must be >= 2, got {replications}")
    rows = []
    for k in judgments_per_pair:
        if k < 1:
            raise ValueError(f"judgments per pair must be >= 1, got {k}")
        # One stream per number of judgments: adding a number to the grid changes no other row.
        rng = np.random.default_rng([seed, int(k)])
        theta = pool.strength_sd * rng.standard_normal((replications, n_items))
        counts = simulate_votes(theta, index, int(k), pool, rng)
        # Many small matrices: a multi-threaded BLAS only adds overhead (10x on a loaded machine).
        with threadpool_limits(limits=1, user_api="blas"):
            estimates = fit_strengths(counts, alpha, engine=engine)
            errors = standard_errors(estimates, counts)
        ssr = np.asarray(scale_separation_reliability(estimates, errors))
        pearson, spearman = _correlations(estimates, theta)
        rows.append(
            {
                "judgments_per_pair": int(k),
                "judgments": int(k) * len(index),
                "ssr": float(ssr.mean()),
                "ssr_low": float(np.percentile(ssr, _LOW)),
                "ssr_high": float(np.percentile(ssr, _HIGH)),
                "reliability": float((pearson**2).mean()),
                "reliability_low": float(np.percentile(pearson**2, _LOW)),
                "spearman": float(spearman.mean()),
                "spearman_low": float(np.percentile(spearman, _LOW)),
                "ci_width": float((2 * 1.959963984540054 * errors).mean()),
                "replications": replications,
            }
        )
    return pd.DataFrame(rows)


def pool_from_pilot(strengths: np.ndarray, counts: np.ndarray, tie_share: float) -> AnnotatorPool:
    """Simulated annotators like a pilot's: the spread of its BT strengths net of their estimation
    error (``var(theta_hat) - mean(se^2)``, pooled over a stack of groups) and its share of ties.

    ``strengths`` ``(groups, n)`` or ``(n,)`` with their count matrices; items never compared
    (all-zero rows, e.g. padding) are left out.
    """
    theta = np.atleast_2d(np.asarray(strengths, dtype=float))
    wins = np.asarray(counts, dtype=float).reshape(theta.shape[0], theta.shape[1], theta.shape[1])
    errors = standard_errors(theta, wins)
    compared = (wins + np.swapaxes(wins, 1, 2)).sum(axis=2) > 0
    variances = []
    for row, se, seen in zip(theta, errors, compared, strict=True):
        if seen.sum() >= 2:
            variances.append(row[seen].var() - np.mean(se[seen] ** 2))
    true_variance = float(np.mean(variances)) if variances else float("nan")
    if not true_variance > 0:
        raise ValueError("the pilot's BT strengths are not separated from their estimation error")
    return AnnotatorPool(strength_sd=float(np.sqrt(true_variance)), tie_share=float(tie_share))


def fit_label_probabilities(positive_counts: np.ndarray, n_labels: int) -> tuple[float, float]:
    """Beta(a, b) of the items' probability of a positive label, from a pilot's label counts.

    A beta-binomial maximum-likelihood fit of how many of ``n_labels`` labels of each item were
    positive: L-BFGS-B on log(a), log(b) from the moments' start. (``scipy.stats.fit``'s default
    differential evolution is unseeded and, with a + b weakly identified at 3 labels, returned
    a + b anywhere from 9.5 to 415 on the same pilot.)
    """
    counts = np.asarray(positive_counts, dtype=np.int64)
    if counts.size == 0 or counts.min() < 0 or counts.max() > n_labels:
        raise ValueError(f"positive counts must lie in 0..{n_labels}")
    histogram = np.bincount(counts, minlength=n_labels + 1)
    k = np.arange(n_labels + 1)

    def negative_log_likelihood(log_ab: np.ndarray) -> float:
        a, b = np.exp(log_ab)
        return float(-(histogram * stats.betabinom.logpmf(k, n_labels, a, b)).sum())

    share = float(np.clip(counts.mean() / n_labels, 0.01, 0.99))
    start = np.log([2.0 * share, 2.0 * (1.0 - share)])
    bounds = [(np.log(1e-3), np.log(1e3))] * 2
    result = optimize.minimize(negative_log_likelihood, start, method="L-BFGS-B", bounds=bounds)
    if not result.success:
        raise RuntimeError(f"beta-binomial fit did not converge: {result.message}")
    a, b = np.exp(result.x)
    return float(a), float(b)


def simulate_pointwise(
    beta: tuple[float, float],
    n_items: int,
    annotators_per_item: Sequence[int],
    replications: int,
    seed: int,
) -> pd.DataFrame:
    """Nominal alpha and majority accuracy for each number of annotators per item.

    Returns
    -------
    pandas.DataFrame
        One row per number: ``annotators_per_item``, ``judgments`` (total), ``alpha`` (mean),
        ``alpha_low``, ``alpha_high``, ``alpha_width`` (high - low), ``majority_accuracy`` (mean;
        an even split counts half) and ``replications``.
    """
    a, b = beta
    if not (a > 0 and b > 0):
        raise ValueError(f"beta parameters must be > 0, got {beta}")
    if n_items < 2 or replications < 2:
        raise ValueError("simulate_pointwise needs at least 2 items and 2 replications")
    rows = []
    for k in annotators_per_item:
        if k < 2:
            raise ValueError(f"alpha needs >= 2 annotators per item, got {k}")
        rng = np.random.default_rng([seed, int(k)])
        q = rng.beta(a, b, size=(replications, n_items))
        positive = rng.binomial(int(k), q)
        value_counts = np.stack([int(k) - positive, positive], axis=-1).reshape(-1, 2)
        groups = np.repeat(np.arange(replications), n_items)
        alpha = krippendorff_alpha_from_value_counts(value_counts, groups, replications)
        truth = q > 0.5
        majority = np.where(2 * positive == k, 0.5, ((2 * positive > k) == truth).astype(float))
        low, high = np.nanpercentile(alpha, [_LOW, _HIGH])
        rows.append(
            {
                "annotators_per_item": int(k),
                "judgments": int(k) * n_items,
                "alpha": float(np.nanmean(alpha)),
                "alpha_low": float(low),
                "alpha_high": float(high),
                "alpha_width": float(high - low),
                "majority_accuracy": float(majority.mean()),
                "replications": replications,
            }
        )
    return pd.DataFrame(rows)


def choose_judgments(table: pd.DataFrame, number_column: str, column: str, target: float, at_least: bool) -> int | None:
    """The smallest ``number_column`` whose ``column`` reaches ``target`` (>= when ``at_least``,
    else <=, e.g. for an interval width); ``None`` when no row of the table does."""
    if number_column not in table.columns or column not in table.columns:
        raise ValueError(f"the simulation table has no column {number_column!r} or {column!r}")
    ordered = table.sort_values(number_column)
    met = ordered[column] >= target if at_least else ordered[column] <= target
    return int(ordered.loc[met, number_column].iloc[0]) if met.any() else None
