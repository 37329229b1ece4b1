"""Expected figures: what repeated runs give on average, from each run's label probabilities (docs/pairwise.md)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from argassets.platform.pairwise.agreement import kappa_from_confusion
from argassets.platform.pairwise.labels import LABELS, VotingError, factorize_columns
from argassets.platform.pairwise.votes import majority_of_runs, run_agreement_pattern

__all__ = [
    "DISTINCT_COLUMNS",
    "MAJORITY_PROBABILITY_COLUMNS",
    "PROBABILITY_COLUMNS",
    "expected_label_agreement",
    "expected_vote_rows",
    "expected_votes",
    "run_outcome_distributions",
    "run_probabilities",
]

#: The judgment columns holding the renormalised label probabilities, in label order.
PROBABILITY_COLUMNS: tuple[str, ...] = ("p_a", "p_b", "p_tie")
#: Output columns: probability that the majority of the runs is A, B, Tie.
MAJORITY_PROBABILITY_COLUMNS: tuple[str, ...] = ("p_majority_a", "p_majority_b", "p_majority_tie")
#: Output columns: probability that the runs show 1, 2, 3 distinct labels.
DISTINCT_COLUMNS: tuple[str, ...] = ("p_all_equal", "p_two_equal", "p_all_unequal")
_SUM_TOLERANCE = 1e-6


def run_outcome_distributions(probabilities: np.ndarray, min_votes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Distributions of the majority and of the number of distinct labels, per pair.

    Parameters
    ----------
    probabilities
        ``(n_pairs, n_runs, 3)``: each run's probabilities of A, B, Tie (rows sum to 1); NaN
        where a pair has no probabilities.
    min_votes
        Votes a label needs for the majority (see :func:`majority_of_runs`).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``(n_pairs, 3)`` probabilities that the majority is A, B, Tie, and ``(n_pairs, 3)``
        probabilities that the runs show 1, 2 and 3 distinct labels; NaN rows where
        any run of the pair lacks probabilities.
    """
    p = np.asarray(probabilities, dtype=float)
    if p.ndim != 3 or p.shape[2] != len(LABELS):
        raise ValueError(f"probabilities must have shape (pairs, runs, {len(LABELS)}), got {p.shape}")
    n_pairs, n_runs, _ = p.shape
    sequences = np.array(list(itertools.product(range(len(LABELS)), repeat=n_runs)), dtype=np.int8)
    sequences = sequences.reshape(-1, n_runs)
    # Outcome of every sequence as a one-hot matrix, so that pairs x sequences -> pairs x labels is a product.
    majority = np.eye(len(LABELS))[majority_of_runs(sequences, min_votes=min_votes)]
    distinct = np.eye(len(LABELS))[run_agreement_pattern(sequences) - 1]  # 1, 2, 3 distinct labels
    out_majority = np.full((n_pairs, len(LABELS)), np.nan)
    out_distinct = np.full((n_pairs, len(LABELS)), np.nan)
    known = np.flatnonzero(np.isfinite(p).all(axis=(1, 2)))
    # About 20 MB of sequence weights at a time, whatever the number of pairs.
    chunk = max(1, 2_500_000 // len(sequences))
    for start in range(0, len(known), chunk):
        rows = known[start : start + chunk]
        part = p[rows]
        # weight[pair, sequence] = prod over runs of P[pair, run, label of the sequence in that run]:
        # outer products run by run, in the order of itertools.product (the first run varies slowest).
        weight = part[:, 0, :]
        for run in range(1, n_runs):
            weight = (weight[:, :, None] * part[:, run, None, :]).reshape(len(rows), -1)
        out_majority[rows] = weight @ majority
        out_distinct[rows] = weight @ distinct
    return out_majority, out_distinct


def run_probabilities(
    judgments: pd.DataFrame,
    key_columns: Sequence[str],
    *,
    probability_columns: Sequence[str] = PROBABILITY_COLUMNS,
    run_column: str = "run",
    order_column: str = "order",
    min_runs: int = 3,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Pivot the label probabilities of each key's runs: the keys and a ``(keys, runs, 3)`` array.

    Only rows in the pair's own order (``order == "ab"``, or every row without an order column)
    enter, as for the majority vote. A run without probabilities (or absent) is NaN.

    Raises
    ------
    VotingError
        A missing column, a probability outside [0, 1], or a row whose probabilities do not sum
        to 1 (within 1e-6); the message names the row.
    """
    key_columns = list(key_columns)
    needed = [*key_columns, run_column, *probability_columns]
    missing = [c for c in needed if c not in judgments.columns]
    if missing:
        raise VotingError(f"judgments: missing column(s) {', '.join(missing)}")
    keep = (
        judgments[order_column].to_numpy(dtype=object) == "ab"
        if order_column in judgments.columns
        else np.ones(len(judgments), dtype=bool)
    )
    rows = judgments.index.to_numpy()[keep]
    probs = judgments[list(probability_columns)].to_numpy(dtype=float)[keep]
    _check_probabilities(probs, rows)
    runs = judgments[run_column].to_numpy()[keep].astype(np.int64)
    inverse, uniques = factorize_columns(judgments, key_columns, rows=keep)
    n_runs = max(int(runs.max()) + 1 if len(runs) else 0, min_runs)
    out = np.full((len(uniques), n_runs, len(probability_columns)), np.nan)
    out[inverse, runs] = probs
    return uniques, out


def _check_probabilities(probs: np.ndarray, rows: np.ndarray) -> None:
    """Probabilities in [0, 1] summing to 1, all or none given per row; errors name the row."""
    given = np.isfinite(probs)
    partial = given.any(axis=1) & ~given.all(axis=1)
    complete = given.all(axis=1)
    out_of_range = complete & ((probs < 0) | (probs > 1)).any(axis=1)
    bad_sum = complete & (np.abs(np.where(given, probs, 0).sum(axis=1) - 1.0) > _SUM_TOLERANCE)
    for problem, what in (
        (partial, "gives some label probabilities but not all three"),
        (out_of_range, "has a label probability outside [0, 1]"),
        (bad_sum, "has label probabilities that do not sum to 1"),
    ):
        if problem.any():
            at = int(np.flatnonzero(problem)[0])
            raise VotingError(f"judgments row {rows[at]}: {what} ({probs[at].tolist()})", position=at)


def expected_votes(
    judgments: pd.DataFrame,
    key_columns: Sequence[str],
    *,
    names: Mapping[str, str] | None = None,
    probability_columns: Sequence[str] = PROBABILITY_COLUMNS,
    run_column: str = "run",
    order_column: str = "order",
    min_runs: int = 3,
    min_votes: int = 2,
) -> pd.DataFrame:
    """Per key: the distribution of the majority of its runs and of their number of distinct labels.

    Returns
    -------
    pandas.DataFrame
        One row per key (renamed by ``names``): :data:`MAJORITY_PROBABILITY_COLUMNS` and
        :data:`DISTINCT_COLUMNS`, NaN where a run of the key lacks probabilities.
    """
    names = dict(names or {})
    uniques, probs = run_probabilities(
        judgments,
        key_columns,
        probability_columns=probability_columns,
        run_column=run_column,
        order_column=order_column,
        min_runs=min_runs,
    )
    majority, distinct = run_outcome_distributions(probs, min_votes=min_votes)
    out = uniques.set_axis([names.get(c, c) for c in key_columns], axis=1)
    for i, column in enumerate(MAJORITY_PROBABILITY_COLUMNS):
        out[column] = majority[:, i]
    for i, column in enumerate(DISTINCT_COLUMNS):
        out[column] = distinct[:, i]
    return out


def expected_label_agreement(
    groups: np.ndarray, distributions: np.ndarray, reference: np.ndarray, n_groups: int
) -> dict[str, np.ndarray]:
    """Expected percent agreement and the kappa of the expected confusion matrix, per group.

    Parameters
    ----------
    groups
        Group of each pair (``0 .. n_groups-1``).
    distributions
        ``(n_pairs, 3)`` probabilities of the rater's label being A, B, Tie (e.g. the majority's);
        pairs with NaN are left out.
    reference
        The reference rater's codes, negative where missing (left out).

    Returns
    -------
    dict
        Arrays ``expected_cohen_kappa``, ``expected_percent_agreement`` (0-100) and
        ``n_expected`` (pairs with a distribution and a reference label).
    """
    dist = np.asarray(distributions, dtype=float)
    ref = np.asarray(reference, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    ok = np.isfinite(dist).all(axis=1) & (ref >= 0)
    c = len(LABELS)
    cell = groups[ok] * c + ref[ok]
    # confusion[g, i, j]: expected pairs where the rater says i and the reference j.
    confusion = np.stack(
        [np.bincount(cell, dist[ok, i], minlength=n_groups * c).reshape(n_groups, c) for i in range(c)], axis=1
    )
    total = confusion.sum(axis=(1, 2))
    with np.errstate(all="ignore"):
        percent = np.where(total > 0, 100.0 * np.trace(confusion, axis1=1, axis2=2) / total, np.nan)
    return {
        "expected_cohen_kappa": kappa_from_confusion(confusion),
        "expected_percent_agreement": percent,
        "n_expected": np.bincount(groups[ok], minlength=n_groups).astype(np.int64),
    }


def expected_vote_rows(
    votes: pd.DataFrame,
    *,
    distribution_columns: Sequence[str] = MAJORITY_PROBABILITY_COLUMNS,
    label_column: str = "label",
    weight_column: str = "weight",
) -> pd.DataFrame:
    """Soft-count rows: each row of ``votes`` once per label, weighted by that label's probability.

    Rows without a distribution (NaN) and labels of probability 0 are left out, so a one-hot
    distribution gives back one row per pair with weight 1 (the sampled input).
    """
    missing = [c for c in distribution_columns if c not in votes.columns]
    if missing:
        raise VotingError(f"votes: missing column(s) {', '.join(missing)}")
    base = votes.drop(columns=[*distribution_columns, label_column], errors="ignore")
    parts = []
    for label, column in zip(LABELS, distribution_columns, strict=True):
        weight = votes[column].to_numpy(dtype=float)
        keep = np.isfinite(weight) & (weight > 0)
        parts.append(base[keep].assign(**{label_column: label, weight_column: weight[keep]}))
    out = pd.concat(parts)
    out = out.sort_index(kind="stable").reset_index(drop=True)
    return out
