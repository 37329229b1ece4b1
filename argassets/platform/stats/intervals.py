"""Clustered bootstrap intervals for any statistic computed from per-cluster data.

The unit resampled is the *cluster* (a topic, a debate, an annotated pair), never the row: items of
one cluster are not independent, and resampling rows understates the uncertainty (Miller, "Adding
Error Bars to Evals"; docs/uncertainty.md). ``scipy.stats.bootstrap`` draws the resamples of the
cluster indices and computes the BCa interval; the statistic sees each resample as a row of
*cluster weights* (how often each cluster was drawn), so a statistic built from per-cluster
sufficient statistics (confusion matrices, sums, rank tables) is one matrix product per batch.

With few clusters the bootstrap's spread understates the sampling spread (it divides by ``C``,
not ``C - 1``, and uses normal rather than ``t(C - 1)`` tails): a 95% interval over 20 clusters
covers about 93%. By default each interval is therefore widened about its estimate by
``sqrt(C / (C - 1)) * t_{C-1} / z``, the small-cluster correction of clustered standard errors
(the ``C / (C - 1)`` factor and ``t(C - 1)`` critical values; Cameron and Miller 2015), 1.096 for
20 clusters and 1.01 for 500; the simulation in ``tests/platform/test_stats_coverage.py`` measures
the coverage with and without it.

Where BCa is undefined for an output (a constant bootstrap distribution, a degenerate jackknife,
undefined replicates) the percentile interval over the defined replicates is given instead, and
the output's ``method`` says so; where the figure itself is undefined there is no interval and the
``method`` says that too. Never a silent NaN.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import ndtr, ndtri

__all__ = [
    "DEFAULT_SETTINGS",
    "BootstrapSettings",
    "ClusterIntervals",
    "cluster_bootstrap",
    "cluster_weights",
]

#: A statistic of cluster weights: ``(batch, n_clusters)`` weights -> ``(k, batch)`` values.
WeightedStatistic = Callable[[np.ndarray], np.ndarray]

#: ``method`` of an output whose figure is undefined (no interval).
UNDEFINED = "none: figure undefined"
#: ``method`` of an output whose replicates are mostly undefined (no interval).
MOSTLY_UNDEFINED = "none: undefined in most resamples"


@dataclass(frozen=True)
class BootstrapSettings:
    """Level, resamples, seed and method of every clustered interval (validated when built).

    ``method`` is ``BCa`` (percentile where BCa is undefined) or ``percentile``;
    ``small_cluster_correction`` widens each interval by ``sqrt(C / (C - 1)) * t_{C-1} / z``
    (module docstring); ``batch`` bounds how many resamples the statistic sees at once (memory),
    ``None`` for all at once.
    """

    level: float = 0.95
    n_resamples: int = 2000
    seed: int = 20_240_229
    method: Literal["BCa", "percentile"] = "BCa"
    small_cluster_correction: bool = True
    batch: int | None = 500

    def __post_init__(self) -> None:
        if not (isinstance(self.level, int | float) and 0.0 < float(self.level) < 1.0):
            raise ValueError(f"interval level must be in (0, 1), got {self.level!r}")
        if int(self.n_resamples) < 2:
            raise ValueError(f"n_resamples must be at least 2, got {self.n_resamples!r}")
        if self.method not in ("BCa", "percentile"):
            raise ValueError(f"interval method must be 'BCa' or 'percentile', got {self.method!r}")
        if self.batch is not None and int(self.batch) < 1:
            raise ValueError(f"batch must be positive or None, got {self.batch!r}")

    def describe(self) -> str:
        """A short text for reports: ``95% BCa, 2000 resamples, seed 20240229, small-cluster correction``."""
        text = f"{self.level:.0%} {self.method}, {self.n_resamples} resamples, seed {self.seed}"
        return text + (", small-cluster correction" if self.small_cluster_correction else "")

    def expansion(self, n_clusters: int) -> float:
        """The factor the intervals over ``n_clusters`` clusters are widened by (1 without the correction)."""
        if not self.small_cluster_correction or n_clusters < 2:
            return 1.0
        z = float(stats.norm.ppf(0.5 + self.level / 2.0))
        t = float(stats.t.ppf(0.5 + self.level / 2.0, n_clusters - 1))
        return float(np.sqrt(n_clusters / (n_clusters - 1.0)) * t / z)


DEFAULT_SETTINGS = BootstrapSettings()


@dataclass(frozen=True)
class ClusterIntervals:
    """The intervals of ``k`` outputs of one clustered bootstrap.

    ``distribution`` is ``(k, n_resamples)``, ``jackknife`` ``(k, n_clusters)`` (leave one cluster
    out; empty unless BCa); ``method`` per output is ``BCa``, ``percentile (BCa undefined)``,
    ``percentile`` or a ``none: ...`` reason; ``expansion`` the small-cluster widening applied.
    """

    names: tuple[str, ...]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    method: tuple[str, ...]
    n_clusters: int
    settings: BootstrapSettings
    distribution: np.ndarray = field(repr=False)
    jackknife: np.ndarray = field(repr=False)
    expansion: float = 1.0

    def p_values(self, null: float = 0.0) -> np.ndarray:
        """Two-sided p-value of ``output == null`` per output, by inverting its interval.

        The smallest ``1 - level`` at which the output's interval (BCa, or percentile where that is
        its method) excludes ``null`` (Efron and Tibshirani 1993, section 15.4, "achieved
        significance level"), so ``p < 1 - level`` exactly when the interval excludes ``null``, up
        to the resolution of ``1 / n_resamples`` (the small-cluster widening included). NaN where
        the output has no interval.
        """
        out = np.full(len(self.names), np.nan)
        for k, method in enumerate(self.method):
            if method.startswith("none"):
                continue
            draws = self.distribution[k]
            draws = draws[np.isfinite(draws)]
            bca = method == "BCa"
            z0, accel = _bca_constants(draws, self.estimate[k], self.jackknife[k]) if bca else (0.0, 0.0)
            # The widened interval reaches ``null`` where the unwidened one reaches this value.
            unwidened = self.estimate[k] + (null - self.estimate[k]) / self.expansion
            out[k] = _inverted_p(draws, unwidened, z0, accel)
        return out

    def frame(self) -> pd.DataFrame:
        """One row per output: ``name, estimate, low, high, interval_method``."""
        return pd.DataFrame(
            {
                "name": list(self.names),
                "estimate": self.estimate,
                "low": self.low,
                "high": self.high,
                "interval_method": list(self.method),
            }
        )


def cluster_weights(indices: np.ndarray, n_clusters: int) -> np.ndarray:
    """How often each cluster occurs in each row of ``indices`` (``(rows, m)`` -> ``(rows, n_clusters)``)."""
    indices = np.asarray(indices, dtype=np.int64)
    rows = indices.reshape(-1, indices.shape[-1])
    offsets = np.arange(rows.shape[0], dtype=np.int64)[:, None] * n_clusters
    counts = np.bincount((rows + offsets).ravel(), minlength=rows.shape[0] * n_clusters)
    return counts.reshape(rows.shape[0], n_clusters).astype(float)


def _checked(values: np.ndarray, k: int, rows: int, what: str) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.ndim == 1 and k == 1:
        values = values[None, :]
    if values.shape != (k, rows):
        raise ValueError(f"{what}: the statistic returned shape {values.shape}, expected ({k}, {rows})")
    return values


def cluster_bootstrap(
    statistic: WeightedStatistic,
    n_clusters: int,
    names: Sequence[str],
    settings: BootstrapSettings = DEFAULT_SETTINGS,
    *,
    what: str,
) -> ClusterIntervals:
    """Clustered bootstrap intervals of the ``k = len(names)`` outputs of ``statistic``.

    Parameters
    ----------
    statistic
        Cluster weights ``(batch, n_clusters)`` (each row sums to the number of clusters drawn)
        -> values ``(k, batch)``; all-ones weights give the figures themselves. NaN where an output
        is undefined for a resample.
    n_clusters
        Clusters in the data (at least two).
    names
        One name per output (at least one).
    settings
        Level, resamples, seed, method.
    what
        What is bootstrapped (a metric, a configuration), named in every error.

    Raises
    ------
    ValueError
        Fewer than two clusters, no output, or a statistic of the wrong shape; the message names
        ``what``.
    """
    names = tuple(str(n) for n in names)
    if not names:
        raise ValueError(f"{what}: nothing to bootstrap (an empty configuration: no output named)")
    if int(n_clusters) < 2:
        raise ValueError(f"{what}: a clustered interval needs at least two clusters, got {n_clusters}")
    k = len(names)

    def on_indices(indices: np.ndarray, axis: int = -1) -> np.ndarray:
        lead = np.shape(indices)[:-1]
        weights = cluster_weights(indices, n_clusters)
        return _checked(statistic(weights), k, weights.shape[0], what).reshape((k, *lead))

    estimate = _checked(statistic(np.ones((1, n_clusters))), k, 1, what)[:, 0]
    # Leave-one-cluster-out values (BCa's acceleration, for the p-values); not needed otherwise.
    jackknife = (
        _checked(statistic(1.0 - np.eye(n_clusters)), k, n_clusters, what)
        if settings.method == "BCa"
        else np.zeros((k, 0))
    )
    result = _scipy_bootstrap(on_indices, n_clusters, settings)
    distribution = np.asarray(result.bootstrap_distribution, dtype=float).reshape(k, -1)
    low = np.atleast_1d(np.asarray(result.confidence_interval.low, dtype=float)).copy()
    high = np.atleast_1d(np.asarray(result.confidence_interval.high, dtype=float)).copy()
    methods = _resolve(estimate, distribution, low, high, settings)
    factor = settings.expansion(int(n_clusters))
    low, high = estimate - factor * (estimate - low), estimate + factor * (high - estimate)
    return ClusterIntervals(
        names, estimate, low, high, tuple(methods), int(n_clusters), settings, distribution, jackknife, factor
    )


def _scipy_bootstrap(statistic: Callable[..., np.ndarray], n_clusters: int, settings: BootstrapSettings) -> Any:
    """``scipy.stats.bootstrap`` over the cluster indices (its warnings on degenerate BCa are handled per output)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return stats.bootstrap(
            (np.arange(n_clusters),),
            statistic,
            vectorized=True,
            n_resamples=int(settings.n_resamples),
            confidence_level=float(settings.level),
            method=settings.method,
            batch=settings.batch,
            random_state=np.random.default_rng(settings.seed),
        )


def _resolve(
    estimate: np.ndarray, distribution: np.ndarray, low: np.ndarray, high: np.ndarray, settings: BootstrapSettings
) -> list[str]:
    """Per output: keep scipy's interval, fall back to the percentile one, or give none (with why)."""
    tail = (1.0 - settings.level) / 2.0
    methods = []
    for k in range(len(estimate)):
        draws = distribution[k][np.isfinite(distribution[k])]
        if not np.isfinite(estimate[k]):
            low[k] = high[k] = np.nan
            methods.append(UNDEFINED)
        elif 2 * len(draws) < distribution.shape[1]:
            low[k] = high[k] = np.nan
            methods.append(MOSTLY_UNDEFINED)
        elif np.isfinite(low[k]) and np.isfinite(high[k]) and len(draws) == distribution.shape[1]:
            methods.append(settings.method)
        else:
            low[k], high[k] = np.quantile(draws, [tail, 1.0 - tail])
            methods.append("percentile (BCa undefined)" if settings.method == "BCa" else "percentile")
    return methods


def _bca_constants(draws: np.ndarray, estimate: float, jackknife: np.ndarray) -> tuple[float, float]:
    """BCa's bias correction ``z0`` and acceleration ``a``, as ``scipy.stats.bootstrap`` computes them."""
    share = ((draws < estimate).sum() + (draws <= estimate).sum()) / (2.0 * len(draws))
    z0 = float(ndtri(share))
    deviations = jackknife.mean() - jackknife
    spread = float((deviations**2).sum())
    accel = float((deviations**3).sum() / (6.0 * spread**1.5)) if spread > 0 else 0.0
    return z0, accel


def _inverted_p(draws: np.ndarray, null: float, z0: float, accel: float) -> float:
    """Two-sided p-value: the tail level at which an interval bound (BCa map) reaches ``null``."""
    n = len(draws)
    share = ((draws < null).sum() + (draws <= null).sum()) / (2.0 * n)
    # A null outside every replicate is at most as likely as one replicate in n + 1.
    share = float(np.clip(share, 0.5 / (n + 1), 1.0 - 0.5 / (n + 1)))
    w = float(ndtri(share)) - z0
    denominator = 1.0 + accel * w
    if denominator <= 0:
        return float(1.0 / (n + 1))
    z = w / denominator - z0
    tail = float(ndtr(z))
    return float(min(1.0, 2.0 * min(tail, 1.0 - tail)))
