"""Agreement between two raters of the same items: scores and nominal labels, per group at once."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
from scipy import stats

__all__ = [
    "LABEL_METRICS",
    "METRIC_RANGES",
    "SCORE_METRICS",
    "cohen_kappa",
    "confusion_matrices",
    "kappa_from_confusion",
    "krippendorff_alpha",
    "krippendorff_alpha_from_confusion",
    "krippendorff_alpha_from_value_counts",
    "krippendorff_alpha_nominal",
    "label_agreement",
    "percent_agreement",
    "score_agreement",
]

SCORE_METRICS: tuple[str, ...] = ("pearson", "spearman", "kendall", "mae", "rmse")
LABEL_METRICS: tuple[str, ...] = ("cohen_kappa", "krippendorff_alpha", "percent_agreement")

#: Mathematical range of every metric (inclusive); percent agreement is in percent.
METRIC_RANGES: dict[str, tuple[float, float]] = {
    "pearson": (-1.0, 1.0),
    "spearman": (-1.0, 1.0),
    "kendall": (-1.0, 1.0),
    "mae": (0.0, np.inf),
    "rmse": (0.0, np.inf),
    "cohen_kappa": (-1.0, 1.0),
    "krippendorff_alpha": (-1.0, 1.0),
    "percent_agreement": (0.0, 100.0),
    "expected_cohen_kappa": (-1.0, 1.0),
    "expected_percent_agreement": (0.0, 100.0),
    "expected_share_all_equal": (0.0, 1.0),
    "expected_share_two_equal": (0.0, 1.0),
    "expected_share_all_unequal": (0.0, 1.0),
    "share_all_equal": (0.0, 1.0),
    "share_two_equal": (0.0, 1.0),
    "share_all_unequal": (0.0, 1.0),
    "order_consistency": (0.0, 1.0),
    "order_consistency_majority": (0.0, 1.0),
    "first_position_share": (0.0, 1.0),
    "tie_share": (0.0, 1.0),
    "first_position_pvalue": (0.0, 1.0),
}


def score_agreement(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Pearson, Spearman, Kendall (tau-b), MAE and RMSE between two score vectors.

    Pairs where either value is NaN are dropped. Correlations need at least two pairs and two
    distinct values on each side, otherwise they are NaN; MAE and RMSE need one pair.

    Returns
    -------
    dict
        ``pearson, spearman, kendall, mae, rmse`` and ``n_items`` (pairs used).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"score vectors differ in shape: {x.shape} vs {y.shape}")
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    out: dict[str, float] = {"n_items": float(len(x))}
    if len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out["pearson"] = float(np.clip(stats.pearsonr(x, y)[0], -1.0, 1.0))
            out["spearman"] = float(np.clip(stats.spearmanr(x, y)[0], -1.0, 1.0))
            out["kendall"] = float(np.clip(stats.kendalltau(x, y)[0], -1.0, 1.0))
    else:
        out.update(pearson=np.nan, spearman=np.nan, kendall=np.nan)
    diff = x - y
    out["mae"] = float(np.abs(diff).mean()) if len(x) else np.nan
    out["rmse"] = float(np.sqrt((diff * diff).mean())) if len(x) else np.nan
    return out


def confusion_matrices(
    groups: np.ndarray, a: np.ndarray, b: np.ndarray, n_groups: int, n_categories: int = 3
) -> np.ndarray:
    """Per-group confusion matrices ``C[g, i, j]`` = units where rater 1 said *i* and rater 2 *j*.

    Units where either code is negative (missing) are left out.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    ok = (a >= 0) & (b >= 0)
    if (a[ok] >= n_categories).any() or (b[ok] >= n_categories).any():
        raise ValueError(f"label codes must be below n_categories={n_categories}")
    flat = (groups[ok] * n_categories + a[ok]) * n_categories + b[ok]
    return (
        np.bincount(flat, minlength=n_groups * n_categories * n_categories)
        .reshape(n_groups, n_categories, n_categories)
        .astype(float)
    )


def kappa_from_confusion(confusion: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each confusion matrix (``(..., c, c)``); NaN where undefined."""
    confusion = np.asarray(confusion, dtype=float)
    total = confusion.sum(axis=(-2, -1))
    with np.errstate(all="ignore"):
        observed = np.trace(confusion, axis1=-2, axis2=-1) / total
        expected = (confusion.sum(axis=-1) * confusion.sum(axis=-2)).sum(axis=-1) / (total * total)
        kappa = (observed - expected) / (1.0 - expected)
    return np.where((total > 0) & (expected < 1.0), kappa, np.nan)


def krippendorff_alpha(value_counts: np.ndarray) -> float:
    """Krippendorff's alpha (nominal) of units given as value counts, by the ``krippendorff`` package.

    Parameters
    ----------
    value_counts
        ``(n_units, n_categories)``: how many raters gave each category to each unit. Units with
        fewer than two ratings are not pairable and do not count.

    Returns
    -------
    float
        :math:`1 - D_o / D_e` over the coincidence matrix; NaN when no unit is pairable or a single
        category occurs (no expected disagreement).
    """
    counts = np.asarray(value_counts)
    if counts.ndim != 2 or counts.shape[1] < 2 or not (counts.sum(axis=1) >= 2).any():
        return float("nan")
    with np.errstate(all="ignore"):
        alpha = float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))
    return alpha if np.isfinite(alpha) else float("nan")


def krippendorff_alpha_from_value_counts(
    value_counts: np.ndarray, groups: np.ndarray | None = None, n_groups: int | None = None
) -> np.ndarray:
    """Krippendorff's alpha (nominal) per group of units (:func:`krippendorff_alpha` of each group).

    Parameters
    ----------
    value_counts
        ``(n_units, n_categories)`` ratings per unit and category.
    groups, n_groups
        Group of each unit (default: one group).

    Returns
    -------
    numpy.ndarray
        Alpha per group; NaN where undefined (also for a group without units).
    """
    counts = np.asarray(value_counts, dtype=np.int64)
    if groups is None:
        groups = np.zeros(len(counts), dtype=np.int64)
        n_groups = 1
    groups = np.asarray(groups, dtype=np.int64)
    if n_groups is None:
        n_groups = int(groups.max()) + 1 if len(groups) else 0
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(n_groups + 1))
    return np.array(
        [krippendorff_alpha(counts[order[bounds[g] : bounds[g + 1]]]) for g in range(n_groups)], dtype=float
    )


def _two_rater_units(confusion: np.ndarray) -> np.ndarray:
    """Value counts of few units with the coincidence totals of the two-rater ``confusion`` units.

    Nominal alpha depends on the units only through ``n``, the diagonal of the coincidence matrix
    and its marginals. All agreeing ratings of a category form one unit (``m`` equal ratings add
    ``m`` to the diagonal). ``k`` units rated (i, j) or (j, i) become one unit with ``x`` ratings
    of each category, ``x**2 / (2x - 1) = k`` (their off-diagonal coincidences); the diagonal it
    adds beyond theirs, ``x - k`` per side, is taken off the agreeing units, as far as they keep
    ``m >= 2``; units beyond that budget stay single (1, 1) units.
    """
    c = confusion.shape[0]
    pairs = confusion + confusion.T
    pure = np.diag(pairs).astype(float)
    rows: list[np.ndarray] = []
    for i in range(c):
        for j in range(i + 1, c):
            k = int(round(pairs[i, j]))
            budget = max(min(pure[i], pure[j]) - 2.0, 0.0)
            # Most units whose merged unit fits the budget: sqrt(k'^2 - k') <= budget.
            merged = min(k, int(np.floor((1.0 + np.sqrt(1.0 + 4.0 * budget * budget)) / 2.0)))
            if merged >= 2:
                x = merged + np.sqrt(merged * merged - merged)
                rows.append((np.eye(c)[i] + np.eye(c)[j]) * x)
                pure[[i, j]] -= x - merged
            else:
                merged = 0
            rows += [np.eye(c)[i] + np.eye(c)[j]] * (k - merged)
    rows += [np.eye(c)[i] * pure[i] for i in range(c) if pure[i] > 0]
    return np.array(rows, dtype=float).reshape(-1, c)


def krippendorff_alpha_from_confusion(confusion: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (nominal) for two raters from their confusion matrices ``(..., c, c)``.

    Each matrix goes to :func:`krippendorff_alpha` as the value counts of a few units with the
    same coincidence totals (exact up to rounding; a bootstrap replicate costs one small call).
    """
    confusion = np.asarray(confusion, dtype=float)
    c = confusion.shape[-1]
    flat = confusion.reshape(-1, c, c)
    alphas = [krippendorff_alpha(_two_rater_units(matrix)) for matrix in flat]
    return np.array(alphas, dtype=float).reshape(confusion.shape[:-2])


def krippendorff_alpha_nominal(reliability_data: np.ndarray, n_categories: int | None = None) -> float:
    """Krippendorff's alpha (nominal) of a ``(raters, units)`` matrix of codes, -1 or NaN missing."""
    data = np.asarray(reliability_data, dtype=float)
    data = np.where(np.isfinite(data), data, -1).astype(np.int64)
    if n_categories is None:
        n_categories = int(data.max()) + 1 if data.size and data.max() >= 0 else 1
    counts = np.stack([(data == k).sum(axis=0) for k in range(n_categories)], axis=1)
    return krippendorff_alpha(counts)


def cohen_kappa(a: np.ndarray, b: np.ndarray, n_categories: int = 3) -> float:
    """Cohen's kappa of two raters' codes (missing pairs left out)."""
    a = np.asarray(a)
    confusion = confusion_matrices(np.zeros(len(a), dtype=np.int64), a, b, 1, n_categories)
    return float(kappa_from_confusion(confusion)[0])


def percent_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Percentage (0-100) of units where both raters gave the same code (missing pairs left out)."""
    a = np.asarray(a)
    b = np.asarray(b)
    ok = (a >= 0) & (b >= 0)
    return float(100.0 * (a[ok] == b[ok]).mean()) if ok.any() else np.nan


def label_agreement(
    groups: np.ndarray, a: np.ndarray, b: np.ndarray, n_groups: int, n_categories: int = 3
) -> dict[str, np.ndarray]:
    """Cohen's kappa, Krippendorff's alpha, percent agreement and unit count per group.

    Parameters
    ----------
    groups
        Group of each unit (``0 .. n_groups-1``).
    a, b
        Codes of the two raters, negative where missing (such units are left out).

    Returns
    -------
    dict
        Arrays ``cohen_kappa, krippendorff_alpha, percent_agreement, n_comparisons``.
    """
    confusion = confusion_matrices(groups, a, b, n_groups, n_categories)
    total = confusion.sum(axis=(1, 2))
    with np.errstate(all="ignore"):
        percent = np.where(total > 0, 100.0 * np.trace(confusion, axis1=1, axis2=2) / total, np.nan)
    return {
        "cohen_kappa": kappa_from_confusion(confusion),
        "krippendorff_alpha": krippendorff_alpha_from_confusion(confusion),
        "percent_agreement": percent,
        "n_comparisons": total.astype(np.int64),
    }
