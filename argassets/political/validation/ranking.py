"""Pairwise validation: Bradley-Terry strengths and rank agreement with the humans."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import f1_score

from argassets.platform.pairwise.bradley_terry import fit_strengths

#: Regularisation of the Bradley-Terry fit (``choix.ilsr_pairwise_dense(W, alpha=BT_ALPHA)``).
BT_ALPHA = 0.01

#: Human-confident pair: ``|W_H / votes - 0.5| >= 1/3`` (5 or 6 of 6 votes one way).
HUMAN_CONFIDENCE_MARGIN = 1.0 / 3.0

#: E3-confident pair: ``|W_ij / (W_ij + W_ji) - 0.5| > 0.25`` (strictly).
E3_CONFIDENCE_MARGIN = 0.25

#: Slack for the two confidence comparisons, so that 5/6 - 1/2 counts as 1/3 whatever the rounding.
_EPS = 1e-9


def bt_strengths(matrix: np.ndarray, alpha: float = BT_ALPHA, max_iter: int = 100) -> np.ndarray:
    """Bradley-Terry strengths: ``choix.ilsr_pairwise_dense(W, alpha=alpha)`` over all items.

    ``W[i, j]`` counts wins of ``i`` over ``j``; larger strength = more right-wing. Items without
    comparisons keep the regularised common value. If ILSR has not converged after ``max_iter``
    iterations it continues under the retry rule of :func:`argassets.platform.pairwise.bradley_terry.fit_strengths`.
    """
    return fit_strengths(np.asarray(matrix, dtype=float), alpha, max_iter=max_iter, engine="choix")


def ranks(strengths: np.ndarray) -> np.ndarray:
    """Ranks of the strengths (1 = most left), ties sharing their average rank."""
    return rankdata(np.asarray(strengths, dtype=float), method="average")


def footrule_similarity(r_model: np.ndarray, r_human: np.ndarray) -> float:
    """Normalised footrule: ``d_footrule = 1 - sum |r_m - r_h| / (n^2 / 2)``.

    ``n^2 / 2`` is the largest footrule distance for even ``n`` (a reversed ranking), so identical
    rankings give 1 and a reversal gives 0.
    """
    a, b = np.asarray(r_model, dtype=float), np.asarray(r_human, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("footrule needs two rank vectors of the same length")
    n = a.size
    return float(1.0 - np.abs(a - b).sum() / (n * n / 2.0))


def kendall_tau_similarity(x: np.ndarray, y: np.ndarray) -> float:
    """Normalised Kendall distance: ``d_tau = 1 - discordant / C(n, 2)``.

    A pair is discordant (weight 1) when the two rankings order it oppositely; a pair tied in
    exactly one of the rankings counts 1/2 (Fagin et al.'s ``K^(1/2)`` for partial rankings), so
    the all-tied random baseline scores 0.5 and a reversal 0. Pairs tied in both count 0.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("d_tau needs two vectors of the same length")
    n = a.size
    if n < 2:
        return math.nan
    upper = np.triu_indices(n, k=1)
    sa = np.sign(a[:, None] - a[None, :])[upper]
    sb = np.sign(b[:, None] - b[None, :])[upper]
    discordant = np.sum(sa * sb < 0) + 0.5 * np.sum((sa == 0) != (sb == 0))
    return float(1.0 - discordant / (n * (n - 1) / 2.0))


def ordinal_alpha(r_model: np.ndarray, r_human: np.ndarray) -> float:
    """Ordinal Krippendorff alpha between two rank vectors (two raters); NaN when undefined."""
    data = np.vstack([np.asarray(r_model, dtype=float), np.asarray(r_human, dtype=float)])
    if np.unique(data).size < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))


def pairwise_macro_f1(
    human: np.ndarray,
    predicted_first_wins: np.ndarray,
    pairs: np.ndarray,
    votes_per_pair: float = 6.0,
) -> float:
    """Macro-F1 over the pairs in file orientation, averaging only the classes present.

    gold = ``W_H(id1, id2) / votes >= 0.5``; the prediction is given (see
    :func:`matrix_predictions`). scikit-learn's ``f1_score(average="macro")`` averages the labels
    present in gold or prediction.
    """
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if index.shape[0] == 0:
        return math.nan
    gold = human[index[:, 0], index[:, 1]] / votes_per_pair >= 0.5
    return float(f1_score(gold, np.asarray(predicted_first_wins, dtype=bool), average="macro"))


def matrix_predictions(matrix: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Prediction per pair: ``W(id1, id2) / (W(id1, id2) + W(id2, id1)) >= 0.5``.

    A pair where the system has no valid score for one side (0 / 0) counts as a tie (0.5), hence
    as "first wins", like an even split.
    """
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    forward = matrix[index[:, 0], index[:, 1]]
    total = forward + matrix[index[:, 1], index[:, 0]]
    ratio = np.divide(forward, total, out=np.full(forward.shape, 0.5), where=total > 0)
    return ratio >= 0.5


def strength_predictions(strengths: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Prediction per pair from strengths (baselines): BT probability ``sigma(t_1 - t_2) >= 0.5``."""
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return strengths[index[:, 0]] >= strengths[index[:, 1]]


def confidence_subsets(
    human: np.ndarray,
    e3: np.ndarray,
    pairs: np.ndarray,
    votes_per_pair: float = 6.0,
) -> dict[str, np.ndarray]:
    """Boolean masks over the pairs for ``all`` and the (E3, human) confidence cells.

    Human-confident: ``|W_H(id1, id2) / votes - 0.5| >= 1/3``. E3-confident:
    ``|W(id1, id2) / (W(id1, id2) + W(id2, id1)) - 0.5| > 0.25`` for the E3 win matrix (a pair E3
    cannot score is not confident). ``P10`` = E3-confident and not human-confident, and so on.
    """
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    human_share = human[index[:, 0], index[:, 1]] / votes_per_pair
    human_confident = np.abs(human_share - 0.5) >= HUMAN_CONFIDENCE_MARGIN - _EPS
    forward = e3[index[:, 0], index[:, 1]]
    total = forward + e3[index[:, 1], index[:, 0]]
    share = np.divide(forward, total, out=np.full(forward.shape, 0.5), where=total > 0)
    e3_confident = (np.abs(share - 0.5) > E3_CONFIDENCE_MARGIN + _EPS) & (total > 0)
    return {
        "all": np.ones(index.shape[0], dtype=bool),
        "P11": e3_confident & human_confident,
        "P10": e3_confident & ~human_confident,
        "P01": ~e3_confident & human_confident,
        "P00": ~e3_confident & ~human_confident,
    }
