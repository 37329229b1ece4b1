"""Prediction-powered estimates from a stratified human sample (``ppi-python``).

The pointwise human sample is not a random sample of the knowledge base: it drew 400 arguments
from E3's confident-political bucket (P(NA) near 0), 200 from its ambiguous bucket (near 0.5) and
400 from its confident-apolitical bucket (near 1), and none from between them. PPI assumes the
labelled items are a random sample of the population it speaks of, so every estimate here is
stratified by those buckets:

- over the three buckets at once (:func:`stratified_mean`): PPI++ within each bucket with
  ``ppi_py.ppi_mean_ci`` (labelled: the bucket's sample; unlabelled: the rest of the bucket), and
  the bucket estimates combined with the buckets' sizes, ``theta = sum_h N_h / N theta_h``,
  ``se^2 = sum_h (N_h / N)^2 se_h^2``;
- within one debate, where a bucket holds a handful of labelled items or none
  (:func:`weighted_mean`): one ``ppi_py.ppi_mean_ci`` with the design weights ``N_h / n_h`` on the
  labelled items (the Hajek form: each labelled item stands for as many arguments of its bucket as
  the sample's rate implies).

Arguments outside the buckets had no chance of being labelled; no design-based estimate reaches
them. The knowledge-base-wide rows say so (docs/human_replacement.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from argassets.political.validation.cluster_bootstrap import LEVEL


@dataclass(frozen=True)
class Estimate:
    """An estimate with its standard error and interval at ``level``."""

    estimate: float
    se: float
    low: float
    high: float

    @classmethod
    def normal(cls, estimate: float, se: float, level: float) -> Estimate:
        half = _z((1 + level) / 2) * se
        return cls(float(estimate), float(se), float(estimate - half), float(estimate + half))


def _z(quantile: float) -> float:
    """The standard normal quantile (``statistics``: scipy's is slow for one value at a time)."""
    return NormalDist().inv_cdf(quantile)


def _level(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return 1.0 - level


def ppi_mean(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    level: float = LEVEL,
    weights: np.ndarray | None = None,
    lam: float | None = None,
) -> Estimate:
    """``ppi_py.ppi_mean_ci`` (PPI++: ``lam`` tuned when None) as an :class:`Estimate`.

    Predictions that are constant over labelled and unlabelled items leave ``lam`` undefined (the
    tuning divides by their variance); any ``lam`` then gives the same estimate, and 1 is used.

    Raises
    ------
    ValueError
        Fewer than two labelled items, no unlabelled item, or arrays that disagree in length.
    """
    alpha = _level(level)
    y, yhat, unlabelled = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    if y.shape != yhat.shape or y.size < 2 or unlabelled.size < 1:
        raise ValueError(
            f"ppi_mean: {y.size} labels and {yhat.size} predictions (need two or more, as many of each) "
            f"and {unlabelled.size} unlabelled predictions (need one or more)"
        )
    if lam is None and np.ptp(np.concatenate([yhat, unlabelled])) == 0:
        lam = 1.0
    import ppi_py  # here, not at the top: it loads numba, which every CLI start paid for

    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=alpha, w=weights, lam=lam)
    low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
    return Estimate((low + high) / 2, (high - low) / (2 * _z(1 - alpha / 2)), low, high)


def classical_mean(y: np.ndarray, level: float = LEVEL, weights: np.ndarray | None = None) -> Estimate:
    """``ppi_py.classical_mean_ci`` (the labels alone) as an :class:`Estimate`."""
    alpha = _level(level)
    y = np.asarray(y, dtype=float)
    if y.size < 2:
        raise ValueError(f"classical_mean: {y.size} labels (need two or more)")
    import ppi_py

    low, high = ppi_py.classical_mean_ci(y, w=weights, alpha=alpha)
    low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
    return Estimate((low + high) / 2, (high - low) / (2 * _z(1 - alpha / 2)), low, high)


def naive_mean(yhat_population: np.ndarray, level: float = LEVEL) -> Estimate:
    """The predictions alone, over the whole population, with the interval one would give them if
    they were the truth (it ignores their error: the coverage test shows what that costs)."""
    values = np.asarray(yhat_population, dtype=float)
    if values.size < 2:
        raise ValueError(f"naive_mean: {values.size} predictions (need two or more)")
    return Estimate.normal(values.mean(), values.std() / np.sqrt(values.size), level)


@dataclass(frozen=True)
class Strata:
    """Bucket codes of the labelled items and of the unlabelled population, and each bucket's
    population size (labelled items included)."""

    labelled: np.ndarray
    unlabelled: np.ndarray
    sizes: Mapping[str, int]

    def weights(self) -> dict[str, float]:
        total = sum(self.sizes.values())
        return {h: n / total for h, n in self.sizes.items()}

    def design_weights(self) -> np.ndarray:
        """Per labelled item, ``N_h / n_h``: how many arguments of its bucket it stands for."""
        counts = {h: int((self.labelled == h).sum()) for h in self.sizes}
        missing = [h for h, n in counts.items() if n == 0]
        if missing:
            raise ValueError(f"bucket {missing[0]!r} has no labelled item")
        return np.array([self.sizes[h] / counts[h] for h in self.labelled])


def stratified_mean(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    strata: Strata,
    estimator: str,
    level: float = LEVEL,
    lam: float | None = None,
) -> Estimate:
    """The population mean over the buckets by ``estimator`` (``ppi``, ``classical`` or ``naive``),
    bucket by bucket and combined with the buckets' sizes (see the module docstring). A bucket
    whose every item is labelled gets the labels' mean under ``ppi`` too.

    Raises
    ------
    ValueError
        An unknown estimator, or a bucket with fewer than two labelled items.
    """
    if estimator not in ("ppi", "classical", "naive"):
        raise ValueError(f"unknown estimator {estimator!r} (ppi, classical or naive)")
    parts = []
    for bucket, weight in strata.weights().items():
        here, there = strata.labelled == bucket, strata.unlabelled == bucket
        if estimator != "naive" and here.sum() < 2:
            raise ValueError(f"bucket {bucket!r} has {int(here.sum())} labelled item(s); its mean needs two or more")
        if estimator == "ppi" and there.any():
            part = ppi_mean(y[here], yhat[here], yhat_unlabelled[there], level, lam=lam)
        elif estimator == "ppi":  # the bucket is all labelled: nothing for the predictions to add
            part = classical_mean(y[here], level)
        elif estimator == "classical":
            part = classical_mean(y[here], level)
        else:
            part = naive_mean(np.concatenate([yhat[here], yhat_unlabelled[there]]), level)
        parts.append((weight, part))
    estimate = sum(w * p.estimate for w, p in parts)
    se = float(np.sqrt(sum((w * p.se) ** 2 for w, p in parts)))
    return Estimate.normal(estimate, se, level)


def weighted_mean(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    weights: np.ndarray,
    estimator: str,
    level: float = LEVEL,
    lam: float | None = None,
) -> Estimate:
    """The population mean by ``estimator`` with design weights on the labelled items (a debate)."""
    if estimator == "ppi":
        return ppi_mean(y, yhat, yhat_unlabelled, level, weights=weights, lam=lam)
    if estimator == "classical":
        return classical_mean(y, level, weights=weights)
    if estimator == "naive":
        return naive_mean(np.concatenate([yhat, yhat_unlabelled]), level)
    raise ValueError(f"unknown estimator {estimator!r} (ppi, classical or naive)")
