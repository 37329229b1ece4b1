"""Agreement metrics between scores and between labels, vectorised over many configurations.

Score metrics compare two vectors of BT z-scores over the same arguments: Pearson's r,
Spearman's rho and Kendall's tau-b (scipy), mean absolute error and root mean squared error.

Label metrics compare two raters' nominal labels over the same comparisons: Cohen's kappa,
Krippendorff's alpha (nominal) and percent agreement. They are computed from per-group confusion
matrices or per-unit value counts, so thousands of (configuration, dimension) groups cost one
pass over the data; tests check them against scikit-learn and the ``krippendorff`` package.

Undefined values are NaN, never an exception: a correlation of a constant vector, kappa when
both raters use a single and the same category, alpha when only one category occurs.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

__all__ = [
    "LABEL_METRICS",
    "METRIC_RANGES",
    "SCORE_METRICS",
    "cohen_kappa",
    "confusion_matrices",
    "kappa_from_confusion",
    "krippendorff_alpha_from_confusion",
    "krippendorff_alpha_nominal",
    "krippendorff_alpha_from_value_counts",
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


def krippendorff_alpha_from_value_counts(
    value_counts: np.ndarray, groups: np.ndarray | None = None, n_groups: int | None = None
) -> np.ndarray:
    """Krippendorff's alpha (nominal) from per-unit value counts, per group of units.

    Parameters
    ----------
    value_counts
        ``(n_units, n_categories)``: how many raters gave each category to each unit. Units with
        fewer than two ratings are not pairable and do not count.
    groups, n_groups
        Group of each unit (default: one group).

    Returns
    -------
    numpy.ndarray
        Alpha per group: :math:`1 - (n - 1) D_o / D_e` from the coincidence matrix; NaN when fewer
        than two pairable values or a single category occurs.
    """
    counts = np.asarray(value_counts, dtype=float)
    if groups is None:
        groups = np.zeros(len(counts), dtype=np.int64)
        n_groups = 1
    groups = np.asarray(groups, dtype=np.int64)
    if n_groups is None:
        n_groups = int(groups.max()) + 1 if len(groups) else 0
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    counts, groups, m_u = counts[pairable], groups[pairable], m_u[pairable]
    c = counts.shape[1]
    # Coincidences: o_ck = sum_u n_uc (n_uk - [c == k]) / (m_u - 1).
    per_unit = counts[:, :, None] * counts[:, None, :]
    per_unit[:, np.arange(c), np.arange(c)] -= counts
    per_unit /= (m_u - 1.0)[:, None, None]
    coincidence = np.zeros((n_groups, c, c))
    np.add.at(coincidence, groups, per_unit)
    return _alpha_from_coincidence(coincidence)


def _alpha_from_coincidence(coincidence: np.ndarray) -> np.ndarray:
    n_c = coincidence.sum(axis=-1)
    n = n_c.sum(axis=-1)
    disagree_observed = n - np.trace(coincidence, axis1=-2, axis2=-1)
    disagree_expected = (n * n - (n_c * n_c).sum(axis=-1)) / (n - 1.0)
    with np.errstate(all="ignore"):
        alpha = 1.0 - disagree_observed / disagree_expected
    return np.where((n > 1) & (disagree_expected > 0), alpha, np.nan)


def krippendorff_alpha_from_confusion(confusion: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (nominal) for two raters from their confusion matrices ``(..., c, c)``."""
    confusion = np.asarray(confusion, dtype=float)
    # Each unit rated twice: coincidences o = C + C^T (the 1/(m_u - 1) factor is 1).
    return _alpha_from_coincidence(confusion + np.swapaxes(confusion, -1, -2))


def krippendorff_alpha_nominal(reliability_data: np.ndarray, n_categories: int | None = None) -> float:
    """Krippendorff's alpha (nominal) of a ``(raters, units)`` matrix of codes, -1 or NaN missing."""
    data = np.asarray(reliability_data, dtype=float)
    data = np.where(np.isfinite(data), data, -1).astype(np.int64)
    if n_categories is None:
        n_categories = int(data.max()) + 1 if data.size and data.max() >= 0 else 1
    counts = np.stack([(data == k).sum(axis=0) for k in range(n_categories)], axis=1)
    return float(krippendorff_alpha_from_value_counts(counts)[0])


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
