"""Agreement metrics from per-cluster sufficient statistics, for many cluster weightings at once.

A clustered bootstrap resample is a row of cluster weights ``w`` (how often each cluster was
drawn). Every metric here is a function of sums over clusters of per-cluster tables, so a batch
of resamples is a matrix product:

- label agreement (Cohen's kappa, percent agreement, nominal Krippendorff alpha, F1 and the other
  classification figures) from per-cluster confusion or coincidence matrices;
- interval Krippendorff alpha of many raters (repetitions of one judge) from four per-cluster sums:
  the interval metric's coincidence totals reduce to the pairable values' count, sum, sum of
  squares and within-unit disagreement, so a 0-100 scale needs no 101 x 101 matrix;
- score agreement: Pearson and the errors (MAE, RMSE) from per-cluster moment sums; Spearman as
  the weighted Pearson of the resample's mid-ranks, which are ``w @ L`` for a per-cluster table
  ``L[c, i]`` of how many items of cluster ``c`` lie below item ``i`` (ties counting one half);
  Kendall's tau-b as ``w K w / sqrt(w X w * w Y w)`` with per-cluster-pair sums of the sign
  products ``K`` and of the untied pairs ``X``, ``Y``.

With all-ones weights each metric equals the plain one (scipy, scikit-learn, ``krippendorff``;
tested), so the figure and its interval come from the same function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "CLASSIFICATION_METRICS",
    "ScoreClusters",
    "classification_metrics",
    "coincidence_from_value_counts",
    "interval_alpha_from_sums",
    "interval_alpha_sums",
    "nominal_alpha_from_coincidence",
    "percent_agreement_from_confusion",
    "weighted_tables",
]

#: Figures of :func:`classification_metrics`.
CLASSIFICATION_METRICS = ("macro_f1", "micro_f1", "precision", "recall", "balanced_accuracy", "alpha_nominal")


def weighted_tables(weights: np.ndarray, per_cluster: np.ndarray) -> np.ndarray:
    """``sum_c w[b, c] * T[c]``: per-cluster tables ``(C, ...)`` summed under each weighting ``(B, C)``."""
    per_cluster = np.asarray(per_cluster, dtype=float)
    flat = per_cluster.reshape(per_cluster.shape[0], -1)
    return (np.asarray(weights, dtype=float) @ flat).reshape(-1, *per_cluster.shape[1:])


def percent_agreement_from_confusion(confusion: np.ndarray) -> np.ndarray:
    """Percent (0-100) of units on the diagonal of each confusion matrix ``(..., c, c)``; NaN when empty."""
    total = confusion.sum(axis=(-2, -1))
    with np.errstate(all="ignore"):
        share = np.trace(confusion, axis1=-2, axis2=-1) / total
    return np.where(total > 0, 100.0 * share, np.nan)


def nominal_alpha_from_coincidence(coincidence: np.ndarray) -> np.ndarray:
    """Nominal Krippendorff alpha of coincidence matrices ``(..., c, c)``; NaN when undefined.

    ``alpha = 1 - (n - 1) * (n - trace(o)) / (n^2 - sum_k n_k^2)`` with ``n_k`` the marginals of
    the coincidence matrix ``o`` and ``n`` its total (Krippendorff 2011, nominal metric). For two
    raters with confusion matrix ``C``, ``o = C + C^T``.
    """
    o = np.asarray(coincidence, dtype=float)
    n = o.sum(axis=(-2, -1))
    marginals = o.sum(axis=-1)
    expected = n * n - (marginals * marginals).sum(axis=-1)
    with np.errstate(all="ignore"):
        alpha = 1.0 - (n - 1.0) * (n - np.trace(o, axis1=-2, axis2=-1)) / expected
    return np.where(expected > 0, alpha, np.nan)


def coincidence_from_value_counts(value_counts: np.ndarray, cluster: np.ndarray, n_clusters: int) -> np.ndarray:
    """Per-cluster coincidence matrices ``(n_clusters, c, c)`` of units given as value counts.

    A unit with ``m >= 2`` ratings adds ``(n_c n_k - [c = k] n_c) / (m - 1)`` to cell ``(c, k)``;
    units with fewer ratings are not pairable and add nothing (as in ``krippendorff``).
    """
    counts = np.asarray(value_counts, dtype=float)
    cluster = np.asarray(cluster, dtype=np.int64)
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, cluster, m = counts[pairable], cluster[pairable], m[pairable]
    c = counts.shape[1]
    per_unit = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(c)) / (m - 1.0)[:, None, None]
    out = np.zeros((n_clusters, c * c))
    np.add.at(out, cluster, per_unit.reshape(-1, c * c))
    return out.reshape(n_clusters, c, c)


def interval_alpha_sums(values: np.ndarray, cluster: np.ndarray, n_clusters: int) -> np.ndarray:
    """Per-cluster sums ``(n_clusters, 4)`` behind interval Krippendorff alpha of ``(units, raters)`` values.

    NaN is a missing value; a unit with fewer than two values is not pairable and adds nothing (as
    in ``krippendorff``). The sums are the pairable values' count ``n``, their sum and sum of
    squares, and ``sum_u sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1)`` (the observed coincidences
    weighted by the interval metric): :func:`interval_alpha_from_sums` turns weighted sums into alpha.
    """
    values = np.asarray(values, dtype=float)
    cluster = np.asarray(cluster, dtype=np.int64)
    if values.ndim != 2 or len(cluster) != len(values):
        raise ValueError(
            f"values must be (units, raters) with one cluster per unit, got {values.shape}, {cluster.shape}"
        )
    present = np.isfinite(values)
    m = present.sum(axis=1).astype(float)
    pairable = m >= 2
    filled = np.where(present, values, 0.0)
    s1, s2 = filled.sum(axis=1), (filled * filled).sum(axis=1)
    with np.errstate(all="ignore"):
        within = np.where(pairable, (2.0 * m * s2 - 2.0 * s1 * s1) / (m - 1.0), 0.0)
    columns = np.stack([m, s1, s2, within], axis=1) * pairable[:, None]
    out = np.zeros((n_clusters, 4))
    np.add.at(out, cluster, columns)
    return out


def interval_alpha_from_sums(sums: np.ndarray) -> np.ndarray:
    """Interval Krippendorff alpha of (weighted) :func:`interval_alpha_sums` ``(..., 4)``; NaN when undefined.

    ``alpha = 1 - (n - 1) * D / (2 n S2 - 2 S1^2)``: the expected disagreement is the interval
    metric summed over every pair of pairable values, ``2 n S2 - 2 S1^2``; undefined when the
    values do not vary (no expected disagreement) or fewer than two are pairable.
    """
    sums = np.asarray(sums, dtype=float)
    n, s1, s2, within = (sums[..., k] for k in range(4))
    expected = 2.0 * n * s2 - 2.0 * s1 * s1
    with np.errstate(all="ignore"):
        alpha = 1.0 - (n - 1.0) * within / expected
    return np.where((n >= 2) & (expected > 1e-9 * np.maximum(n * s2, 1.0)), alpha, np.nan)


def classification_metrics(confusion: np.ndarray) -> dict[str, np.ndarray]:
    """Binary figures of confusion matrices ``(..., 2, 2)``, rows gold and columns predicted (1 = positive).

    scikit-learn's semantics: macro-F1 averages the classes present in gold or prediction;
    micro-F1 is the accuracy; precision and recall of class 1 are 0 when undefined
    (``zero_division=0``); balanced accuracy is the mean recall of the gold classes, NaN unless
    both occur; ``alpha_nominal`` treats gold and prediction as two raters. All NaN when empty.
    """
    m = np.asarray(confusion, dtype=float)
    tn, fp, fn, tp = m[..., 0, 0], m[..., 0, 1], m[..., 1, 0], m[..., 1, 1]
    total = tn + fp + fn + tp
    with np.errstate(all="ignore"):
        f1_pos = np.where(tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        f1_neg = np.where(tn + fn + fp > 0, 2 * tn / (2 * tn + fn + fp), 0.0)
        present_pos = (tp + fn + fp) > 0
        present_neg = (tn + fp + fn) > 0
        macro = (f1_pos * present_pos + f1_neg * present_neg) / (present_pos.astype(float) + present_neg)
        recall_pos = tp / (tp + fn)
        recall_neg = tn / (tn + fp)
        out = {
            "macro_f1": macro,
            "micro_f1": (tp + tn) / total,
            "precision": np.where(tp + fp > 0, tp / (tp + fp), 0.0),
            "recall": np.where(tp + fn > 0, recall_pos, 0.0),
            "balanced_accuracy": np.where((tp + fn > 0) & (tn + fp > 0), (recall_pos + recall_neg) / 2.0, np.nan),
            "alpha_nominal": nominal_alpha_from_coincidence(m + np.swapaxes(m, -1, -2)),
        }
    empty = total <= 0
    return {name: np.where(empty, np.nan, values) for name, values in out.items()}


def _midrank_table(values: np.ndarray, cluster: np.ndarray, n_clusters: int) -> np.ndarray:
    """``L[c, i]`` = items of cluster ``c`` below item ``i`` plus half those equal to it."""
    table = np.zeros((n_clusters, len(values)))
    for c in range(n_clusters):
        inside = np.sort(values[cluster == c])
        below = np.searchsorted(inside, values, side="left")
        table[c] = below + 0.5 * (np.searchsorted(inside, values, side="right") - below)
    return table


def _pair_sums(x: np.ndarray, y: np.ndarray, cluster: np.ndarray, n_clusters: int, block: int = 32) -> np.ndarray:
    """Per cluster pair: sums of ``sign(dx) sign(dy)``, ``|sign(dx)|`` and ``|sign(dy)|`` over item pairs."""
    onehot = np.zeros((len(x), n_clusters))
    onehot[np.arange(len(x)), cluster] = 1.0
    out = np.zeros((3, n_clusters, n_clusters))
    for start in range(0, len(x), block):
        part = slice(start, start + block)
        sx = np.sign(x[part, None] - x[None, :])
        sy = np.sign(y[part, None] - y[None, :])
        for k, table in enumerate((sx * sy, np.abs(sx), np.abs(sy))):
            out[k] += onehot[part].T @ (table @ onehot)
    return out


def _correlation(
    s0: np.ndarray, sx: np.ndarray, sy: np.ndarray, sxx: np.ndarray, syy: np.ndarray, sxy: np.ndarray
) -> np.ndarray:
    """Pearson correlation from weighted sums (weight, x, y, x^2, y^2, xy); NaN where a side is constant."""
    with np.errstate(all="ignore"):
        var_x = sxx / s0 - (sx / s0) ** 2
        var_y = syy / s0 - (sy / s0) ** 2
        r = (sxy / s0 - sx * sy / (s0 * s0)) / np.sqrt(var_x * var_y)
        defined = (
            (s0 >= 2) & (var_x > 1e-12 * np.maximum(sxx / s0, 1e-300)) & (var_y > 1e-12 * np.maximum(syy / s0, 1e-300))
        )
    return np.where(defined, np.clip(r, -1.0, 1.0), np.nan)


def _cubic(weights: np.ndarray, tensor: np.ndarray) -> np.ndarray:
    """``sum_{e,c,d} w_e w_c w_d T[e, c, d]`` for each row of ``weights``."""
    c = tensor.shape[0]
    inner = (weights @ tensor.reshape(c, c * c)).reshape(-1, c, c)
    return (np.matmul(inner, weights[:, :, None])[:, :, 0] * weights).sum(axis=1)


def _quadratic(weights: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``sum_{c,d} w_c w_d T[c, d]`` for each row of ``weights``."""
    return ((weights @ table) * weights).sum(axis=1)


@dataclass(frozen=True)
class ScoreClusters:
    """Two score vectors over clustered items, reduced to per-cluster tables (build with :meth:`build`).

    ``moments[c]``: weight, x, y, x^2, y^2, xy, |x - y|, (x - y)^2 summed over cluster ``c``
    (x and y centred on their overall means, for precision). ``rank_tables``: for Spearman,
    ``A[e, c] = sum_{i in e} L[c, i]`` and the cubic sums ``T[e, c, d] = sum_{i in e} L[c, i] L'[d, i]``
    of the mid-rank tables (x-x, y-y, x-y). ``pair_sums``: Kendall's ``K``, ``X``, ``Y``.
    """

    n_clusters: int
    moments: np.ndarray
    rank_sums: np.ndarray
    rank_cubes: np.ndarray
    pair_sums: np.ndarray

    @classmethod
    def build(cls, x: np.ndarray, y: np.ndarray, cluster: np.ndarray, n_clusters: int) -> ScoreClusters:
        """Items with a non-finite score on either side are left out (as ``score_agreement`` does)."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        cluster = np.asarray(cluster, dtype=np.int64)
        if not (x.shape == y.shape == cluster.shape):
            raise ValueError(f"scores and clusters differ in shape: {x.shape}, {y.shape}, {cluster.shape}")
        ok = np.isfinite(x) & np.isfinite(y)
        x, y, cluster = x[ok], y[ok], cluster[ok]
        diff = x - y
        xc = x - x.mean() if len(x) else x
        yc = y - y.mean() if len(y) else y
        columns = np.stack([np.ones_like(x), xc, yc, xc * xc, yc * yc, xc * yc, np.abs(diff), diff * diff], axis=1)
        moments = np.zeros((n_clusters, columns.shape[1]))
        np.add.at(moments, cluster, columns)
        lx = _midrank_table(x, cluster, n_clusters)
        ly = _midrank_table(y, cluster, n_clusters)
        sums = np.zeros((2, n_clusters, n_clusters))
        cubes = np.zeros((3, n_clusters, n_clusters, n_clusters))
        for e in range(n_clusters):
            inside = cluster == e
            a, b = lx[:, inside], ly[:, inside]
            sums[0, e], sums[1, e] = a.sum(axis=1), b.sum(axis=1)
            cubes[0, e], cubes[1, e], cubes[2, e] = a @ a.T, b @ b.T, a @ b.T
        return cls(int(n_clusters), moments, sums, cubes, _pair_sums(x, y, cluster, n_clusters))

    def metrics(self, weights: np.ndarray) -> dict[str, np.ndarray]:
        """Pearson, Spearman, Kendall (tau-b), MAE and RMSE under each row of cluster weights ``(B, C)``."""
        weights = np.asarray(weights, dtype=float)
        s = weights @ self.moments
        total = s[:, 0]
        rx = _quadratic(weights, self.rank_sums[0])
        ry = _quadratic(weights, self.rank_sums[1])
        rxx, ryy, rxy = (_cubic(weights, cube) for cube in self.rank_cubes)
        quadratic = [_quadratic(weights, table) for table in self.pair_sums]
        with np.errstate(all="ignore"):
            kendall = np.clip(quadratic[0] / np.sqrt(quadratic[1] * quadratic[2]), -1.0, 1.0)
            mae = s[:, 6] / total
            rmse = np.sqrt(s[:, 7] / total)
        defined = total >= 2
        return {
            "pearson": _correlation(total, s[:, 1], s[:, 2], s[:, 3], s[:, 4], s[:, 5]),
            "spearman": _correlation(total, rx, ry, rxx, ryy, rxy),
            "kendall": np.where(defined & (quadratic[1] > 0) & (quadratic[2] > 0), kendall, np.nan),
            "mae": np.where(total > 0, mae, np.nan),
            "rmse": np.where(total > 0, rmse, np.nan),
        }
