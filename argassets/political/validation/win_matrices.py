"""Pairwise validation: decile bins of scores and win matrices of systems and humans."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

#: Decile bins of the 0-100 scale.
N_BINS = 10


def decile_bins(scores: np.ndarray | Sequence[float]) -> np.ndarray:
    """Decile binning rule: ``bin = max(ceil(s / 10) - 1, 0)``, so [0, 10] -> 0, (10, 20] -> 1, ...

    Raises ``ValueError`` for scores outside 0-100.
    """
    values = np.asarray(scores, dtype=float)
    if values.size and (np.isnan(values).any() or values.min() < 0 or values.max() > 100):
        raise ValueError("decile_bins needs scores in 0-100")
    return np.maximum(np.ceil(values / 10.0) - 1, 0).astype(np.int64)


def bin_histograms(score_lists: Sequence[Sequence[float]]) -> np.ndarray:
    """Per-argument histogram over the 10 decile bins of its valid scores (items x bins)."""
    histograms = np.zeros((len(score_lists), N_BINS), dtype=float)
    for row, scores in enumerate(score_lists):
        if len(scores):
            histograms[row] = np.bincount(decile_bins(scores), minlength=N_BINS)
    return histograms


#: Win-matrix rule w(a, b) between two bins: 1 if a > b, 0.5 if equal, 0 if a < b.
WIN_KERNEL: np.ndarray = (np.arange(N_BINS)[:, None] > np.arange(N_BINS)[None, :]).astype(float) + 0.5 * np.eye(N_BINS)


def pair_mask(n_items: int, pairs: np.ndarray | Sequence[tuple[int, int]]) -> np.ndarray:
    """Symmetric boolean mask of the annotated pairs (item indices), both orientations set."""
    mask = np.zeros((n_items, n_items), dtype=bool)
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    mask[index[:, 0], index[:, 1]] = True
    mask[index[:, 1], index[:, 0]] = True
    return mask


def win_matrix(histograms: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Model win matrix over the annotated pairs: ``W = (H K H^T) * M``.

    ``W[i, j]`` is the number of repetition combinations in which item ``i`` lands in a higher
    bin than item ``j``, ties counting 0.5; so ``W[i, j] + W[j, i] = n_i n_j`` on every
    annotated pair and 0 elsewhere (win matrices only over annotated pairs of the set).
    """
    return (histograms @ WIN_KERNEL @ histograms.T) * mask


def win_matrix_loop(score_lists: Sequence[Sequence[float]], pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """Reference implementation of :func:`win_matrix`: loop over pairs and repetition combinations."""
    n = len(score_lists)
    bins = [[max(math.ceil(s / 10) - 1, 0) for s in scores] for scores in score_lists]
    matrix = np.zeros((n, n), dtype=float)
    for i, j in pairs:
        for a in bins[i]:
            for b in bins[j]:
                if a > b:
                    matrix[i, j] += 1.0
                elif a < b:
                    matrix[j, i] += 1.0
                else:
                    matrix[i, j] += 0.5
                    matrix[j, i] += 0.5
    return matrix


def human_win_matrices(
    n_items: int,
    index: Mapping[str, int],
    votes: pd.DataFrame,
) -> dict[str, np.ndarray]:
    """Human win matrices (``W[i, j]`` = votes that ``i`` is the more right-wing).

    Human label rule: label 1 = the first statement, 2 = the second, 0 = equal (0.5 to each side).
    A right-framed vote for the first statement is a win of the first; a left-framed vote ("more
    left-wing") is counted the same way and the left-framed matrix is then transposed, so that it
    too counts right-wing wins. ``W(H) = W(H_left)^T + W(H_right)``: six votes per pair.

    Parameters
    ----------
    n_items
        Number of items.
    index
        ``meta_id`` -> row.
    votes
        ``framing`` (``left``/``right``), ``meta_id1``, ``meta_id2``, ``label``.

    Returns
    -------
    dict
        ``left`` (already transposed), ``right`` and ``human`` (their sum).
    """
    raw = {"left": np.zeros((n_items, n_items)), "right": np.zeros((n_items, n_items))}
    for framing, first, second, label in zip(
        votes["framing"], votes["meta_id1"], votes["meta_id2"], votes["label"], strict=True
    ):
        if framing not in raw:
            raise ValueError(f"unknown framing {framing!r} (expected 'left' or 'right')")
        i, j = index[first], index[second]
        matrix = raw[framing]
        if label == 1:
            matrix[i, j] += 1.0
        elif label == 2:
            matrix[j, i] += 1.0
        elif label == 0:
            matrix[i, j] += 0.5
            matrix[j, i] += 0.5
        else:
            raise ValueError(f"vote on ({first}, {second}): label {label!r} is not 0, 1 or 2")
    left = raw["left"].T.copy()
    right = raw["right"]
    return {"left": left, "right": right, "human": left + right}
