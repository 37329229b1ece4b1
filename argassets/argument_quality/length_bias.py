"""Length bias: how far a judge's verdicts follow the longer argument, and what is left once length is held fixed.

A judge that agrees with the experts may just be counting words: in Webis-ArgQuality-20 the experts
themselves give most of their decisive verdicts to the longer argument. This module measures, for
the experts and for any judge, on the same comparisons:

- :func:`longer_share`: among decisive verdicts (``A`` or ``B``) between arguments of unequal length,
  the share that goes to the longer argument (0.5 = blind to length, 1 = always the longer one);
- :func:`length_strata` and :func:`stratified_agreement`: Cohen's kappa and percent agreement with
  the experts within strata of :math:`|\\log(L_a / L_b)|` (quartiles by default), so a judge whose
  agreement lives only where the lengths differ most shows it;
- :func:`partial_correlation`: Pearson's correlation of the judge's BT z-scores with the experts'
  z-scores once both are residualised on the log length of the argument;
- :func:`argassets.argument_quality.length_bias_model.length_controlled_bt`: a Bradley-Terry model
  with a length covariate (strengths at equal length, and the preference for length).

Lengths are the corpus's ``Text Length`` (whitespace-separated words); a length below 1 counts as 1
so that its logarithm is defined. This module holds the measures; the model is in
:mod:`~argassets.argument_quality.length_bias_model`, the report over the corpus and its checks in
:mod:`~argassets.argument_quality.length_bias_report`. Plain numpy, without Dagster.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from argassets.platform.pairwise.agreement import kappa_from_confusion

__all__ = [
    "pearson",
    "length_strata",
    "log_length_ratio",
    "longer_share",
    "partial_correlation",
    "stratified_agreement",
]

#: Label codes (as :func:`argassets.argument_quality.voting.encode_labels`): A, B.
_A, _B = 0, 1


def log_length_ratio(length_a: np.ndarray | Sequence[float], length_b: np.ndarray | Sequence[float]) -> np.ndarray:
    """:math:`\\log(L_a / L_b)` per comparison; lengths below 1 count as 1.

    Raises
    ------
    ValueError
        Lengths of different shapes, or a length that is NaN or negative.
    """
    a = np.asarray(length_a, dtype=float)
    b = np.asarray(length_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"length vectors differ in shape: {a.shape} vs {b.shape}")
    bad = ~np.isfinite(a) | ~np.isfinite(b) | (a < 0) | (b < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"comparison {i}: lengths must be finite and >= 0, got {a[i]!r} and {b[i]!r}")
    return np.log(np.maximum(a, 1.0)) - np.log(np.maximum(b, 1.0))


def longer_share(
    codes: np.ndarray, ratio: np.ndarray, groups: np.ndarray | None = None, n_groups: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group: the share of decisive verdicts between unequal lengths that go to the longer argument.

    Parameters
    ----------
    codes
        Label codes (0 = A, 1 = B, 2 = Tie, negative = missing).
    ratio
        :func:`log_length_ratio` of each comparison (positive: A is longer).
    groups, n_groups
        Group of each comparison (default: one group).

    Returns
    -------
    tuple of numpy.ndarray
        ``(share, n_longer, n_decisive)``; ``share`` is NaN for a group without such a verdict.
    """
    codes = np.asarray(codes, dtype=np.int64)
    ratio = np.asarray(ratio, dtype=float)
    if codes.shape != ratio.shape:
        raise ValueError(f"codes and ratios differ in shape: {codes.shape} vs {ratio.shape}")
    if groups is None:
        groups = np.zeros(len(codes), dtype=np.int64)
        n_groups = 1
    groups = np.asarray(groups, dtype=np.int64)
    if n_groups is None:
        n_groups = int(groups.max()) + 1 if len(groups) else 0
    decisive = ((codes == _A) | (codes == _B)) & (ratio != 0)
    longer = decisive & (((codes == _A) & (ratio > 0)) | ((codes == _B) & (ratio < 0)))
    n_decisive = np.bincount(groups[decisive], minlength=n_groups).astype(np.int64)
    n_longer = np.bincount(groups[longer], minlength=n_groups).astype(np.int64)
    with np.errstate(all="ignore"):
        share = np.where(n_decisive > 0, n_longer / n_decisive, np.nan)
    return share, n_longer, n_decisive


def length_strata(
    abs_ratio: np.ndarray, reference: np.ndarray | None = None, n_strata: int = 4
) -> tuple[np.ndarray, np.ndarray]:
    """Stratum of each comparison by :math:`|\\log(L_a/L_b)|`, with quantile edges of ``reference``.

    Parameters
    ----------
    abs_ratio
        :math:`|\\log(L_a/L_b)|` of the comparisons to place.
    reference
        The values whose quantiles make the edges (default: ``abs_ratio`` itself); the expert
        comparisons of a dimension, so every judge is cut at the same lengths.
    n_strata
        Number of strata (4: quartiles).

    Returns
    -------
    tuple of numpy.ndarray
        ``(stratum, edges)``: ``stratum`` in ``0 .. n_strata - 1`` (stratum *k* holds the values in
        ``(edges[k], edges[k + 1]]``, the first one including its lower edge); ``edges`` of length
        ``n_strata + 1`` from the minimum to the maximum of ``reference``.
    """
    values = np.asarray(abs_ratio, dtype=float)
    ref = values if reference is None else np.asarray(reference, dtype=float)
    if n_strata < 1:
        raise ValueError(f"n_strata must be >= 1, got {n_strata}")
    if not len(ref) or not np.isfinite(ref).all() or (ref < 0).any():
        raise ValueError("length strata need a non-empty reference of finite |log ratio| values >= 0")
    if (~np.isfinite(values)).any() or (values < 0).any():
        raise ValueError("length strata: every |log ratio| must be finite and >= 0")
    edges = np.quantile(ref, np.linspace(0.0, 1.0, n_strata + 1))
    stratum = np.searchsorted(edges[1:-1], values, side="left")
    return stratum.astype(np.int64), edges


def stratified_agreement(
    codes: np.ndarray,
    reference_codes: np.ndarray,
    stratum: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    n_strata: int,
    n_categories: int = 3,
) -> dict[str, np.ndarray]:
    """Cohen's kappa and percent agreement per (group, stratum).

    Units where either code is missing (negative) are left out.

    Returns
    -------
    dict
        ``cohen_kappa``, ``percent_agreement`` (0-100) and ``n_comparisons``, each of shape
        ``(n_groups, n_strata)``; NaN where undefined.
    """
    a = np.asarray(codes, dtype=np.int64)
    b = np.asarray(reference_codes, dtype=np.int64)
    s = np.asarray(stratum, dtype=np.int64)
    g = np.asarray(groups, dtype=np.int64)
    if not (a.shape == b.shape == s.shape == g.shape):
        raise ValueError("codes, reference codes, strata and groups must have one value per comparison")
    ok = (a >= 0) & (b >= 0)
    if (a[ok] >= n_categories).any() or (b[ok] >= n_categories).any():
        raise ValueError(f"label codes must be below n_categories={n_categories}")
    cell = g[ok] * n_strata + s[ok]
    flat = (cell * n_categories + a[ok]) * n_categories + b[ok]
    confusion = (
        np.bincount(flat, minlength=n_groups * n_strata * n_categories**2)
        .reshape(n_groups, n_strata, n_categories, n_categories)
        .astype(float)
    )
    total = confusion.sum(axis=(-2, -1))
    with np.errstate(all="ignore"):
        percent = np.where(total > 0, 100.0 * np.trace(confusion, axis1=-2, axis2=-1) / total, np.nan)
    return {
        "cohen_kappa": kappa_from_confusion(confusion),
        "percent_agreement": percent,
        "n_comparisons": total.astype(np.int64),
    }


def partial_correlation(x: np.ndarray, y: np.ndarray, control: np.ndarray) -> float:
    """Pearson's correlation of ``x`` and ``y`` with ``control`` partialled out.

    Both are residualised on ``[1, control]`` by least squares and the residuals correlated; this
    equals :math:`(r_{xy} - r_{xz} r_{yz}) / \\sqrt{(1 - r_{xz}^2)(1 - r_{yz}^2)}`. Triples with a
    NaN are dropped. NaN with fewer than four triples or a constant residual.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    z = np.asarray(control, dtype=float)
    if not (x.shape == y.shape == z.shape):
        raise ValueError(f"partial correlation: shapes differ ({x.shape}, {y.shape}, {z.shape})")
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    x, y, z = x[ok], y[ok], z[ok]
    if len(x) < 4 or np.ptp(z) == 0:
        return float("nan")
    design = np.column_stack([np.ones_like(z), z])
    coef, *_ = np.linalg.lstsq(design, np.column_stack([x, y]), rcond=None)
    resid = np.column_stack([x, y]) - design @ coef
    rx, ry = resid[:, 0], resid[:, 1]
    denominator = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    if not denominator > 1e-12 * max(1.0, float(np.abs(x).sum() + np.abs(y).sum())):
        return float("nan")
    return float(np.clip((rx * ry).sum() / denominator, -1.0, 1.0))


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r over the pairs without NaN; NaN when undefined."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan")
    return float(np.clip(stats.pearsonr(x[ok], y[ok]).statistic, -1.0, 1.0))
