"""Validation of political-position predictions against the two human studies.

Pointwise (is the argument political?)
    A system predicts "political" when its probability of NA is **strictly below 0.5**
    (:data:`NA_THRESHOLD`, :func:`predicts_political`). Against the human majority it gets macro-F1,
    micro-F1, precision and recall of the political class, balanced accuracy, and nominal
    Krippendorff alpha (the system and the majority as two raters) (:func:`pointwise_metrics`).

Pairwise (which argument is more right-wing?)
    Scores are binned into deciles, ``bin = max(ceil(s / 10) - 1, 0)`` (:func:`decile_bins`; 0 and
    10 share bin 0). A system's win matrix counts, over every combination of an argument's valid
    scores with the other argument's, 1 when the first bin is greater, 0.5 when equal and 0 when
    less, **only over the annotated pairs of the set evaluated** (zero elsewhere). With ``H`` the
    per-argument histogram over bins and ``K`` the 10x10 kernel ``K[a, b] = w(a, b)``, that matrix
    is ``(H K H^T) * M`` for the pair mask ``M`` (:func:`win_matrix`); :func:`win_matrix_loop` is
    the direct double loop over repetitions, kept as the reference.

    Humans: per pair three right-framed ("which is more right-wing?") and three left-framed
    ("which is more left-wing?") labels, 1 = first, 2 = second, 0 = equal (0.5 to each); the
    left-framed matrix is transposed, and ``W(H) = W(H_left)^T + W(H_right)``, six votes per pair
    (:func:`human_win_matrices`).

    Bradley-Terry strengths come from ``choix.ilsr_pairwise_dense(W, alpha=0.01)`` over all 100
    items (:func:`bt_strengths`), ranks are the ranks of the strengths (ties share their average
    rank). Against the aggregate human ranking: ``d_footrule = 1 - sum |r_m - r_h| / (n^2 / 2)``,
    ``d_tau = 1 - discordant / C(n, 2)``, ordinal Krippendorff alpha between the two rank vectors,
    and macro-F1 over the pairs in file orientation (gold ``W_H(id1, id2) / 6 >= 0.5``, prediction
    ``W_m(id1, id2) / (W_m(id1, id2) + W_m(id2, id1)) >= 0.5``), averaging the classes present.

Nothing is rounded here; reports round for display only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import choix
import krippendorff
import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.stats import rankdata
from sklearn.metrics import balanced_accuracy_score, f1_score, precision_score, recall_score

__all__ = [
    "BT_ALPHA",
    "E3_CONFIDENCE_MARGIN",
    "HUMAN_CONFIDENCE_MARGIN",
    "N_BINS",
    "NA_THRESHOLD",
    "POINTWISE_PARTITIONS",
    "SUBSETS",
    "WIN_KERNEL",
    "PairwiseDesign",
    "bin_histograms",
    "bt_strengths",
    "confidence_subsets",
    "connection_entropy",
    "decile_bins",
    "distinct_label_shares",
    "evaluate_pairwise",
    "evaluate_pointwise",
    "graph_components",
    "interannotator_agreement",
    "item_keys",
    "plot_f1_vs_alpha",
    "system_item_values",
    "matrix_predictions",
    "strength_predictions",
    "PAIRWISE_COLUMNS",
    "POINTWISE_COLUMNS",
    "footrule_similarity",
    "human_win_matrices",
    "kendall_tau_similarity",
    "nominal_alpha",
    "ordinal_alpha",
    "pair_mask",
    "pairwise_macro_f1",
    "pointwise_metrics",
    "pointwise_partitions",
    "predicts_political",
    "ranks",
    "win_matrix",
    "win_matrix_loop",
]

#: A system predicts "political" when its probability of NA is strictly below this.
NA_THRESHOLD = 0.5
#: Decile bins of the 0-100 scale.
N_BINS = 10
#: Regularisation of the Bradley-Terry fit (``choix.ilsr_pairwise_dense(W, alpha=BT_ALPHA)``).
BT_ALPHA = 0.01
#: Human-confident pair: ``|W_H / votes - 0.5| >= 1/3`` (5 or 6 of 6 votes one way).
HUMAN_CONFIDENCE_MARGIN = 1.0 / 3.0
#: E3-confident pair: ``|W_ij / (W_ij + W_ji) - 0.5| > 0.25`` (strictly).
E3_CONFIDENCE_MARGIN = 0.25
#: Slack for the two confidence comparisons, so that 5/6 - 1/2 counts as 1/3 whatever the rounding.
_EPS = 1e-9
#: Pointwise partitions: name -> ``n_type`` values.
POINTWISE_PARTITIONS: dict[str, tuple[str, ...]] = {
    "full": ("low", "mid", "high"),
    "confident": ("low", "high"),
    "ambiguous": ("mid",),
}
#: Pairwise subsets in report order: all pairs, then (E3-confident, human-confident) cells.
SUBSETS: tuple[str, ...] = ("all", "P11", "P10", "P01", "P00")

# ----------------------------------------------------------------------------------------------
# Pointwise


def predicts_political(prob_na: np.ndarray | Sequence[float]) -> np.ndarray:
    """NA threshold rule: political when the probability of NA is strictly below 0.5."""
    return np.asarray(prob_na, dtype=float) < NA_THRESHOLD


def nominal_alpha(reliability_data: np.ndarray) -> float:
    """Nominal Krippendorff alpha (raters x items, NaN = missing); NaN when undefined.

    Alpha is undefined when the pooled values hold a single category (no expected disagreement);
    then NaN is returned rather than an error.
    """
    data = np.asarray(reliability_data, dtype=float)
    values = data[~np.isnan(data)]
    if values.size == 0 or np.unique(values).size < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def pointwise_metrics(gold: np.ndarray | Sequence[int], predicted: np.ndarray | Sequence[int]) -> dict[str, float]:
    """Agreement of binary political predictions with the human majority.

    Parameters
    ----------
    gold
        Human majority, 1 = political.
    predicted
        System prediction, 1 = political (see :func:`predicts_political`).

    Returns
    -------
    dict
        ``macro_f1``, ``micro_f1`` (= accuracy for one binary label), ``precision`` and ``recall``
        of the political class (0 when there is no positive prediction / gold), balanced accuracy,
        ``alpha_nominal`` (system and majority as two raters), ``n``.
    """
    y = np.asarray(gold, dtype=int)
    p = np.asarray(predicted, dtype=int)
    if y.shape != p.shape:
        raise ValueError(f"gold and predictions differ in length ({y.size} vs {p.size})")
    if y.size == 0:
        return {k: math.nan for k in ("macro_f1", "micro_f1", "precision", "recall", "balanced_accuracy", "alpha_nominal")} | {"n": 0}
    return {
        "macro_f1": float(f1_score(y, p, average="macro")),
        "micro_f1": float(f1_score(y, p, average="micro")),
        "precision": float(precision_score(y, p, pos_label=1, zero_division=0)),
        "recall": float(recall_score(y, p, pos_label=1, zero_division=0)),
        "balanced_accuracy": float(balanced_accuracy_score(y, p)) if np.unique(y).size > 1 else math.nan,
        "alpha_nominal": nominal_alpha(np.vstack([y, p])),
        "n": int(y.size),
    }


def pointwise_partitions(n_type: pd.Series) -> dict[str, np.ndarray]:
    """Boolean masks of the pointwise partitions (full 1,000 / confident 800 / ambiguous 200)."""
    return {name: n_type.isin(types).to_numpy() for name, types in POINTWISE_PARTITIONS.items()}


# ----------------------------------------------------------------------------------------------
# Pairwise: bins and win matrices


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
WIN_KERNEL: np.ndarray = (
    (np.arange(N_BINS)[:, None] > np.arange(N_BINS)[None, :]).astype(float) + 0.5 * np.eye(N_BINS)
)


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
    for framing, first, second, label in zip(votes["framing"], votes["meta_id1"], votes["meta_id2"], votes["label"], strict=True):
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


# ----------------------------------------------------------------------------------------------
# Pairwise: Bradley-Terry and rank agreement


def bt_strengths(matrix: np.ndarray, alpha: float = BT_ALPHA, max_iter: int = 100) -> np.ndarray:
    """Bradley-Terry strengths: ``choix.ilsr_pairwise_dense(W, alpha=alpha)`` over all items.

    ``W[i, j]`` counts wins of ``i`` over ``j``; larger strength = more right-wing. Items without
    comparisons keep the regularised common value. If ILSR has not converged after ``max_iter``
    iterations it is retried once with ten times as many (choix raises on non-convergence).
    """
    comparisons = np.asarray(matrix, dtype=float)
    try:
        return choix.ilsr_pairwise_dense(comparisons, alpha=alpha, max_iter=max_iter)
    except RuntimeError:
        return choix.ilsr_pairwise_dense(comparisons, alpha=alpha, max_iter=10 * max_iter)


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


# ----------------------------------------------------------------------------------------------
# Design of the pairwise study


def connection_entropy(pairs: np.ndarray, item_bins: np.ndarray) -> np.ndarray:
    """Per item, the Shannon entropy (base 2) of the bins of the items it is paired with.

    Ideal for 8 non-empty bins: ``log2(8) = 3`` (partners spread evenly over every bin).
    """
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    bins = np.asarray(item_bins, dtype=np.int64)
    counts = np.zeros((bins.size, N_BINS))
    np.add.at(counts, (index[:, 0], bins[index[:, 1]]), 1.0)
    np.add.at(counts, (index[:, 1], bins[index[:, 0]]), 1.0)
    totals = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(p), 0.0)
    return terms.sum(axis=1)


def graph_components(n_items: int, pairs: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of the comparison graph: (count, label per item)."""
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    graph = csr_matrix((np.ones(index.shape[0]), (index[:, 0], index[:, 1])), shape=(n_items, n_items))
    return connected_components(graph, directed=False)


def distinct_label_shares(votes: pd.DataFrame) -> pd.DataFrame:
    """Share of pairs with 1, 2 or 3 distinct labels among their votes, per framing.

    Returns ``framing``, ``distinct_labels``, ``n_pairs``, ``share``.
    """
    rows = []
    for framing, group in votes.groupby("framing", sort=True):
        distinct = group.groupby(["meta_id1", "meta_id2"])["label"].nunique()
        total = len(distinct)
        for k in (1, 2, 3):
            n = int((distinct == k).sum())
            rows.append((framing, k, n, n / total if total else math.nan))
    return pd.DataFrame(rows, columns=["framing", "distinct_labels", "n_pairs", "share"])


# ----------------------------------------------------------------------------------------------
# Putting it together


@dataclass(frozen=True)
class PairwiseDesign:
    """The pairwise study as arrays: items, pairs in file orientation, human matrices, subsets.

    Build it with :meth:`build`. ``subsets`` maps a subset name to the boolean mask over
    ``pairs``; ``masks`` to the symmetric item mask of that subset's pairs.
    """

    meta_ids: tuple[str, ...]
    pairs: np.ndarray
    human: Mapping[str, np.ndarray]
    subsets: Mapping[str, np.ndarray]
    masks: Mapping[str, np.ndarray]
    votes_per_pair: float

    @classmethod
    def build(
        cls,
        meta_ids: Sequence[str],
        pairs: pd.DataFrame,
        votes: pd.DataFrame,
        e3_scores: Sequence[Sequence[float]],
        votes_per_pair: float = 6.0,
    ) -> PairwiseDesign:
        """Arrange the study: ``pairs`` (``id1``, ``id2``) in file orientation, ``votes`` as in
        :func:`human_win_matrices`, and the E3 scores per item (aligned with ``meta_ids``) that
        define the E3-confident pairs."""
        index = {meta_id: row for row, meta_id in enumerate(meta_ids)}
        pair_index = np.array([(index[a], index[b]) for a, b in zip(pairs["id1"], pairs["id2"], strict=True)], dtype=np.int64)
        n = len(meta_ids)
        human = human_win_matrices(n, index, votes)
        e3 = win_matrix(bin_histograms(e3_scores), pair_mask(n, pair_index))
        subsets = confidence_subsets(human["human"], e3, pair_index, votes_per_pair)
        masks = {name: pair_mask(n, pair_index[selected]) for name, selected in subsets.items()}
        return cls(tuple(meta_ids), pair_index.reshape(-1, 2), human, subsets, masks, votes_per_pair)

    @property
    def n_items(self) -> int:
        return len(self.meta_ids)

    def subset_pairs(self, subset: str) -> np.ndarray:
        return self.pairs[self.subsets[subset]]

    def human_ranks(self, subset: str, framing: str = "human") -> tuple[np.ndarray, np.ndarray]:
        """(strengths, ranks) of a human matrix restricted to the subset's pairs."""
        strengths = bt_strengths(self.human[framing] * self.masks[subset])
        return strengths, ranks(strengths)


PAIRWISE_COLUMNS = [
    "system",
    "kind",
    "subset",
    "d_footrule",
    "d_tau",
    "alpha_ordinal",
    "macro_f1",
    "n_pairs",
    "n_items_scored",
]


def evaluate_pairwise(
    design: PairwiseDesign,
    systems: Mapping[str, tuple[str, Sequence[Sequence[float] | None]]],
) -> pd.DataFrame:
    """Pairwise validation rows for every system and subset, with the context rows.

    Parameters
    ----------
    design
        :meth:`PairwiseDesign.build` output.
    systems
        ``name -> (kind, scores per item aligned with design.meta_ids)``; ``None`` or an empty list
        means the system has no valid score for that item.

    Returns
    -------
    pandas.DataFrame
        :data:`PAIRWISE_COLUMNS`: per system and subset ``d_footrule``, ``d_tau``,
        ``alpha_ordinal``, ``macro_f1`` and ``n_pairs``; context rows ``human:left``,
        ``human:right`` (each framing's ranking vs the aggregate; F1 with 3 votes per pair),
        ``baseline:random`` (all strengths equal) and ``baseline:worst`` (human strengths negated).
    """
    rows = []
    histograms = {
        name: (kind, bin_histograms([list(s) if s is not None else [] for s in scores]), sum(1 for s in scores if s))
        for name, (kind, scores) in systems.items()
    }
    n = design.n_items
    for subset in SUBSETS:
        pairs = design.subset_pairs(subset)
        mask = design.masks[subset]
        human_strengths, human_r = design.human_ranks(subset)
        human_matrix = design.human["human"] * mask

        def row(name: str, kind: str, strengths: np.ndarray, predictions: np.ndarray, scored: int) -> tuple:
            r = ranks(strengths)
            return (
                name,
                kind,
                subset,
                footrule_similarity(r, human_r),
                kendall_tau_similarity(r, human_r),
                ordinal_alpha(r, human_r),
                pairwise_macro_f1(human_matrix, predictions, pairs, design.votes_per_pair),
                int(pairs.shape[0]),
                scored,
            )

        for name, (kind, hist, scored) in histograms.items():
            matrix = win_matrix(hist, mask)
            rows.append(row(name, kind, bt_strengths(matrix), matrix_predictions(matrix, pairs), scored))
        for framing in ("left", "right"):
            matrix = design.human[framing] * mask
            rows.append(row(f"human:{framing}", "human", bt_strengths(matrix), matrix_predictions(matrix, pairs), n))
        flat = np.zeros(n)
        rows.append(row("baseline:random", "baseline", flat, strength_predictions(flat, pairs), n))
        worst = -human_strengths
        rows.append(row("baseline:worst", "baseline", worst, strength_predictions(worst, pairs), n))
    return pd.DataFrame(rows, columns=PAIRWISE_COLUMNS)


def interannotator_agreement(design: PairwiseDesign, votes: pd.DataFrame) -> pd.DataFrame:
    """Human agreement in the pairwise study.

    Rows: ``alpha_ordinal_left_vs_right`` per subset (ordinal alpha between the rankings from the
    left-framed and the right-framed matrices restricted to the subset's pairs), and the share of
    pairs with 1, 2 or 3 distinct labels per framing (all pairs).

    Returns ``statistic``, ``subset``, ``framing``, ``distinct_labels``, ``n_pairs``, ``value``.
    """
    rows = []
    for subset in SUBSETS:
        _, left = design.human_ranks(subset, "left")
        _, right = design.human_ranks(subset, "right")
        rows.append(("alpha_ordinal_left_vs_right", subset, "both", None, int(design.subsets[subset].sum()), ordinal_alpha(left, right)))
    for record in distinct_label_shares(votes).itertuples(index=False):
        rows.append(("share_of_pairs", "all", record.framing, int(record.distinct_labels), int(record.n_pairs), float(record.share)))
    out = pd.DataFrame(rows, columns=["statistic", "subset", "framing", "distinct_labels", "n_pairs", "value"])
    out["distinct_labels"] = pd.array(out["distinct_labels"].tolist(), dtype="Int64")
    return out


POINTWISE_COLUMNS = [
    "system",
    "kind",
    "partition",
    "macro_f1",
    "micro_f1",
    "precision",
    "recall",
    "balanced_accuracy",
    "alpha_nominal",
    "n",
]


def evaluate_pointwise(
    items: pd.DataFrame,
    systems: Mapping[str, tuple[str, np.ndarray]],
    inter_model_groups: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Pointwise validation rows per system and partition, plus agreement rows.

    Parameters
    ----------
    items
        Pointwise items (``a1_label``..``a3_label``, ``judgements_maj``, ``n_type``).
    systems
        ``name -> (kind, prob_na per item)`` aligned with ``items``; NaN = no prediction for that
        item (the item is left out of that system's rows, and ``n`` says how many remain).
    inter_model_groups
        ``row name -> system names`` whose predictions are compared with one another by nominal
        alpha (one rater per system, missing predictions allowed), e.g. ``inter-model:platform``.

    Returns
    -------
    pandas.DataFrame
        :data:`POINTWISE_COLUMNS`. ``human:inter-annotator`` rows carry the nominal alpha of the three
        crowd labels, inter-model rows the alpha among systems; their other metrics are NaN.
    """
    masks = pointwise_partitions(items["n_type"])
    gold = items["judgements_maj"].to_numpy(dtype=int)
    labels = items[["a1_label", "a2_label", "a3_label"]].to_numpy(dtype=float).T
    predictions = {}
    for name, (kind, prob_na) in systems.items():
        values = np.asarray(prob_na, dtype=float)
        if values.shape != gold.shape:
            raise ValueError(f"system {name!r}: {values.size} probabilities for {gold.size} items")
        predictions[name] = (kind, values, np.where(np.isnan(values), np.nan, predicts_political(values).astype(float)))
    rows = []
    blank = {k: math.nan for k in POINTWISE_COLUMNS[3:9]}
    for partition, mask in masks.items():
        for name, (kind, values, predicted) in predictions.items():
            keep = mask & ~np.isnan(values)
            if not keep.any():
                continue
            metrics = pointwise_metrics(gold[keep], predicted[keep].astype(int))
            rows.append({"system": name, "kind": kind, "partition": partition, **metrics})
        rows.append(
            {"system": "human:inter-annotator", "kind": "human", "partition": partition, **blank,
             "alpha_nominal": nominal_alpha(labels[:, mask]), "n": int(mask.sum())}
        )
        for group, names in (inter_model_groups or {}).items():
            members = [predictions[name][2] for name in names if name in predictions]
            if len(members) < 2:
                continue
            data = np.vstack(members)[:, mask]
            rows.append(
                {"system": group, "kind": "inter-model", "partition": partition, **blank,
                 "alpha_nominal": nominal_alpha(data), "n": int((~np.isnan(data)).any(axis=0).sum())}
            )
    out = pd.DataFrame(rows, columns=POINTWISE_COLUMNS)
    out["n"] = out["n"].astype("int64")
    return out


# ----------------------------------------------------------------------------------------------
# Joining systems to the study items, and the report figure


def item_keys(matches: pd.DataFrame, study: str, meta_ids: Sequence[str]) -> list[list[str]]:
    """Per study item, the prediction keys that stand for it, in order of preference.

    The KB argument matched by text (``political_study_items.argument_id``), then, for pairwise
    items, the published KB index ``paper:<prediction_index>`` under which published-TSV imports
    are stored.
    """
    from argassets.lib.published_predictions import published_argument_id

    rows = matches[matches["study"] == study].set_index("meta_id")
    keys = []
    for meta_id in meta_ids:
        if meta_id not in rows.index:
            raise ValueError(f"{study} item {meta_id!r} is missing from political_study_items")
        row = rows.loc[meta_id]
        candidates = []
        if isinstance(row["argument_id"], str):
            candidates.append(row["argument_id"])
        if "published_index" in row and pd.notna(row["published_index"]):
            candidates.append(published_argument_id(int(row["published_index"])))
        keys.append(candidates)
    return keys


def system_item_values(
    stats: pd.DataFrame, keys: Sequence[Sequence[str]], column: str
) -> dict[str, list[object]]:
    """Per system of ``stats``, the value of ``column`` for each study item (``None`` if unscored).

    ``column`` is ``scores`` (returned as a list of floats) or ``prob_na``.
    """
    from argassets.lib.political import scores_from_json

    out: dict[str, list[object]] = {}
    for system, group in stats.groupby("system", sort=True):
        lookup = dict(zip(group["argument_id"], group[column], strict=True))
        values: list[object] = []
        for candidates in keys:
            found = next((lookup[k] for k in candidates if k in lookup), None)
            if found is not None and column == "scores":
                found = scores_from_json(found)
            values.append(found)
        if any(v is not None for v in values):
            out[str(system)] = values
    return out


def plot_f1_vs_alpha(report: pd.DataFrame, title: str = "Pairwise validation") -> bytes:
    """The paper's main figure: macro-F1 against ordinal alpha for every row, one panel per subset.

    Returns PNG bytes. Points are coloured by ``kind``; each is labelled with its system name.
    """
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"model": "tab:blue", "ensemble": "tab:red", "published": "tab:gray",
               "published-ensemble": "tab:brown", "human": "tab:green", "baseline": "black"}
    subsets = [s for s in SUBSETS if s in set(report["subset"])]
    columns = min(3, len(subsets))
    rows_of_panels = -(-len(subsets) // columns)
    figure, grid = plt.subplots(rows_of_panels, columns, figsize=(5.2 * columns, 4.6 * rows_of_panels), squeeze=False)
    axes = grid.ravel()
    for axis in axes[len(subsets):]:
        axis.set_visible(False)
    for axis, subset in zip(axes, subsets, strict=False):
        rows = report[report["subset"] == subset]
        for kind, group in rows.groupby("kind"):
            axis.scatter(group["alpha_ordinal"], group["macro_f1"], s=18, c=colours.get(kind, "tab:purple"), label=kind)
            for record in group.itertuples(index=False):
                if np.isfinite(record.alpha_ordinal) and np.isfinite(record.macro_f1):
                    label = record.system.removeprefix("published:")
                    axis.annotate(label, (record.alpha_ordinal, record.macro_f1), fontsize=5, alpha=0.8,
                                  xytext=(2, 2), textcoords="offset points")
        n_pairs = int(rows["n_pairs"].iloc[0]) if len(rows) else 0
        axis.set_title(f"{subset} ({n_pairs} pairs)")
        axis.set_xlabel("ordinal Krippendorff alpha (ranks vs humans)")
        axis.grid(alpha=0.3)
        axis.set_ylabel("macro-F1 over pairs")
    axes[0].legend(fontsize=7, loc="lower right")
    figure.suptitle(title)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return buffer.getvalue()
