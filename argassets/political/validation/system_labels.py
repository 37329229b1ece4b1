"""A system's answer to the annotators' question, in the annotators' labels.

Pointwise ("does the argument have a political leaning?", 1 = yes, 0 = no): 1 when the system's
probability of NA is strictly below 0.5 (:func:`~.pointwise.predicts_political`), NaN when it has
no prediction for the argument.

Pairwise ("which statement is more right-wing?" right-framed, "... more left-wing?" left-framed;
1 = the first, 2 = the second, 0 = equal): the system's share of repetition combinations that put
the first argument in a higher decile than the second, ties counting half, ``p = W_12 / (W_12 +
W_21)`` as in the paper's pairwise F1 (:mod:`~.win_matrices`). Right-framed: 1 when ``p > 0.5``,
2 when ``p < 0.5``, 0 when ``p = 0.5`` (as often as not, or every combination tied); left-framed
the mirror (1 when ``p < 0.5``). NaN when either argument has no valid score.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from argassets.political.validation.pointwise import predicts_political
from argassets.political.validation.win_matrices import WIN_KERNEL, bin_histograms

#: The framings of the pairwise study and the label meaning "the first is further that way".
FRAMINGS = ("right", "left")


def pointwise_labels(prob_na: np.ndarray | Sequence[float]) -> np.ndarray:
    """1.0 (political) when P(NA) < 0.5, 0.0 otherwise, NaN where P(NA) is missing."""
    p = np.asarray(prob_na, dtype=float)
    return np.where(np.isnan(p), np.nan, predicts_political(p).astype(float))


def first_is_righter(score_lists: Sequence[Sequence[float] | None], pairs: np.ndarray) -> np.ndarray:
    """Per pair ``(i, j)`` of item indices: ``p = W_ij / (W_ij + W_ji)``, NaN without scores."""
    histograms = bin_histograms([list(s) if s is not None else [] for s in score_lists])
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    first, second = histograms[index[:, 0]], histograms[index[:, 1]]
    wins = np.einsum("pa,ab,pb->p", first, WIN_KERNEL, second)
    total = first.sum(axis=1) * second.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, wins / total, np.nan)


def pairwise_labels(share: np.ndarray, framing: str) -> np.ndarray:
    """The label of each pair from :func:`first_is_righter`'s share, in the framing's terms."""
    if framing not in FRAMINGS:
        raise ValueError(f"unknown framing {framing!r} (expected one of {FRAMINGS})")
    p = np.asarray(share, dtype=float)
    toward_first = p > 0.5 if framing == "right" else p < 0.5
    toward_second = p < 0.5 if framing == "right" else p > 0.5
    labels = np.where(toward_first, 1.0, np.where(toward_second, 2.0, 0.0))
    return np.where(np.isnan(p), np.nan, labels)
