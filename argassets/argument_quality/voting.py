"""Majority votes over repeated LLM judgments, vectorised.

Labels are coded as small integers so that every operation is an array operation: ``A`` = 0,
``B`` = 1, ``Tie`` = 2 and a missing or invalid verdict = -1 (:data:`MISSING`).

Two voting rules are used:

- :func:`majority_of_runs`, the protocol's rule for the 3 runs of one configuration: ``A`` if at
  least two runs say ``A``, ``B`` if at least two say ``B``, otherwise ``Tie``. An invalid run is
  no vote; a comparison without any valid run has no verdict (:data:`MISSING`).
- :func:`plurality_vote`, for ensembles of any size: the label with strictly the most votes, and
  ``Tie`` when two labels share the most votes. For three voters who all voted it equals the
  protocol's rule.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "LABELS",
    "MISSING",
    "VotingError",
    "decode_labels",
    "encode_labels",
    "factorize_columns",
    "majority_of_runs",
    "majority_votes",
    "plurality_vote",
    "run_agreement_pattern",
]

LABELS: tuple[str, ...] = ("A", "B", "Tie")
A, B, TIE = 0, 1, 2
MISSING = -1
_CODE = {label: code for code, label in enumerate(LABELS)}

#: Columns of the majority-vote table (the run label columns ``label_run<i>`` come after ``topic_id``).
MAJORITY_KEY = ["model", "strategy", "dimension", "comparison_id"]


class VotingError(ValueError):
    """Judgments that cannot be voted on; the message names the offending row.

    ``position`` is the 0-based position of the offending value when one is known.
    """

    def __init__(self, message: str, position: int | None = None):
        super().__init__(message)
        self.position = position


def _factorize_sorted(values: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values, sort=True)``, but sorting only the (few) uniques."""
    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        series = values.cat.remove_unused_categories()
        codes = series.cat.codes.to_numpy().astype(np.int64)
        uniques = np.asarray(series.cat.categories)
    else:
        codes, uniques = pd.factorize(values, sort=False)
        codes = codes.astype(np.int64)
        uniques = np.asarray(uniques)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], uniques[order]


def _unique_inverse(keys: np.ndarray, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys in ``[0, bound)``; without sorting when
    the range is small enough for a presence table."""
    if bound <= 64_000_000:
        present = np.zeros(int(bound), dtype=bool)
        present[keys] = True
        rank = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present), rank[keys]
    return np.unique(keys, return_inverse=True)


def factorize_columns(
    frame: pd.DataFrame, columns: Sequence[str], rows: np.ndarray | None = None
) -> tuple[np.ndarray, pd.DataFrame]:
    """Code the distinct rows of ``frame[columns]`` as 0..k-1, in sorted order, fast.

    Each column is factorised on its own and the codes are combined arithmetically, which avoids
    building Python tuples for millions of rows.

    Parameters
    ----------
    frame, columns
        The table and the key columns.
    rows
        Optional boolean mask or index of the rows to code (the others are ignored).

    Returns
    -------
    tuple
        ``(codes, uniques)``: an ``int64`` code per (selected) row and a frame of the ``k``
        distinct rows.
    """
    columns = list(columns)
    n = len(frame) if rows is None else int(np.count_nonzero(rows) if np.asarray(rows).dtype == bool else len(rows))
    if not columns:
        return np.zeros(n, dtype=np.int64), pd.DataFrame(index=[0])
    parts: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for column in columns:
        series = frame[column]
        if rows is not None and not isinstance(series.dtype, pd.CategoricalDtype):
            codes, uniques = _factorize_sorted(series.to_numpy()[rows])
        else:
            codes, uniques = _factorize_sorted(series)
            codes = codes if rows is None else codes[rows]
        parts.append(codes)
        values.append(uniques)
    combined = parts[0]
    for part, uniq in zip(parts[1:], values[1:], strict=True):
        combined = combined * len(uniq) + part
    keys, inverse = _unique_inverse(combined, int(np.prod([max(len(v), 1) for v in values], dtype=float)))
    decoded = {}
    rest = keys
    for column, uniq in reversed(list(zip(columns, values, strict=True))):
        decoded[column] = uniq[rest % len(uniq)] if len(uniq) else uniq
        rest = rest // max(len(uniq), 1)
    uniques = pd.DataFrame({c: decoded[c] for c in columns})
    return inverse.astype(np.int64), uniques


def encode_labels(labels: Sequence[object] | np.ndarray | pd.Series) -> np.ndarray:
    """Code labels ``A``/``B``/``Tie`` as 0/1/2 and missing values (None, NaN) as -1.

    Parameters
    ----------
    labels
        Label strings; ``None`` or NaN for a missing verdict.

    Returns
    -------
    numpy.ndarray
        ``int8`` codes, same length.

    Raises
    ------
    VotingError
        A value that is neither a label nor missing; the message names its position.
    """
    values = labels.to_numpy(dtype=object) if isinstance(labels, pd.Series) else np.asarray(labels, dtype=object)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    table = np.full(len(uniques) + 1, MISSING, dtype=np.int8)  # the last slot: missing (code -1)
    for i, value in enumerate(uniques):
        if value not in _CODE:
            index = int(np.flatnonzero(codes == i)[0])
            raise VotingError(
                f"row {index}: label {value!r} is not one of {', '.join(LABELS)} (or missing)", position=index
            )
        table[i] = _CODE[value]
    return table[codes]


def decode_labels(codes: np.ndarray) -> np.ndarray:
    """Inverse of :func:`encode_labels`: an object array of label strings, ``None`` where missing."""
    table = np.array([*LABELS, None], dtype=object)
    codes = np.asarray(codes)
    return table[np.where(codes < 0, len(LABELS), codes)]


def majority_of_runs(runs: np.ndarray, min_votes: int = 2) -> np.ndarray:
    """The protocol's majority vote over the runs of each comparison.

    ``A`` if at least ``min_votes`` runs say ``A`` (and more say ``A`` than ``B``), ``B`` likewise,
    otherwise ``Tie``; :data:`MISSING` when no run is valid.

    Parameters
    ----------
    runs
        ``(n_comparisons, n_runs)`` label codes, -1 for an invalid or missing run.
    min_votes
        Votes a label needs (2 of 3 in the protocol).

    Returns
    -------
    numpy.ndarray
        ``int8`` majority codes, one per comparison.
    """
    runs = np.asarray(runs)
    if runs.ndim != 2:
        raise ValueError(f"runs must be a 2-d array (comparisons x runs), got shape {runs.shape}")
    n_a = (runs == A).sum(axis=1)
    n_b = (runs == B).sum(axis=1)
    out = np.full(runs.shape[0], TIE, dtype=np.int8)
    out[(n_a >= min_votes) & (n_a > n_b)] = A
    out[(n_b >= min_votes) & (n_b > n_a)] = B
    out[(runs >= 0).sum(axis=1) == 0] = MISSING
    return out


def plurality_vote(votes: np.ndarray) -> np.ndarray:
    """Plurality over voters: the label with strictly the most votes, ``Tie`` on a shared maximum.

    Parameters
    ----------
    votes
        ``(n_items, n_voters)`` label codes, -1 for no vote.

    Returns
    -------
    numpy.ndarray
        ``int8`` codes; :data:`MISSING` where nobody voted.
    """
    votes = np.asarray(votes)
    if votes.ndim != 2:
        raise ValueError(f"votes must be a 2-d array (items x voters), got shape {votes.shape}")
    counts = np.stack([(votes == code).sum(axis=1) for code in range(len(LABELS))], axis=1)
    top = counts.max(axis=1)
    winners = (counts == top[:, None]).sum(axis=1)
    out = np.where(winners == 1, counts.argmax(axis=1), TIE).astype(np.int8)
    out[top == 0] = MISSING
    return out


def run_agreement_pattern(runs: np.ndarray) -> np.ndarray:
    """How many distinct labels the runs of each comparison gave (1 = all equal), -1 if a run is missing.

    For 3 runs: 1 = all equal, 2 = two equal, 3 = all unequal.
    """
    runs = np.asarray(runs)
    present = np.stack([(runs == code).any(axis=1) for code in range(len(LABELS))], axis=1)
    distinct = present.sum(axis=1).astype(np.int8)
    distinct[(runs < 0).any(axis=1)] = -1
    return distinct


def majority_votes(
    judgments: pd.DataFrame,
    *,
    model_column: str = "judge_model",
    min_votes: int = 2,
) -> pd.DataFrame:
    """Pivot the runs of every (model, strategy, dimension, comparison) and take the majority.

    Only judgments in the comparison's own order (``order == "ab"``, or every row when there is no
    ``order`` column) enter; swapped-order judgments belong to the position-bias report.

    Parameters
    ----------
    judgments
        Rows of ``aq_judgments``: ``judge_model``, ``comparison_id``, ``dimension``, ``strategy``,
        ``topic_id``, ``run`` and ``label`` (null when invalid); optionally ``order``.
    model_column
        Column naming the model.
    min_votes
        See :func:`majority_of_runs`.

    Returns
    -------
    pandas.DataFrame
        One row per (model, strategy, dimension, comparison): ``model, strategy, dimension,
        comparison_id, topic_id, label_run0 .. label_run<R-1>, n_valid_runs, majority_label``
        (label strings, ``None`` when missing), sorted by those keys.

    Raises
    ------
    VotingError
        A missing column, a negative run index, a label outside A/B/Tie, or the same run of the
        same configuration and comparison twice; the message names the row.
    """
    required = [model_column, "strategy", "dimension", "comparison_id", "topic_id", "run", "label"]
    missing = [c for c in required if c not in judgments.columns]
    if missing:
        raise VotingError(f"judgments: missing column(s) {', '.join(missing)}")
    columns = [*MAJORITY_KEY, "topic_id", *(f"label_run{i}" for i in range(3)), "n_valid_runs", "majority_label"]
    keep = None
    if "order" in judgments.columns:
        keep = judgments["order"].to_numpy(dtype=object) == "ab"
    n_rows = len(judgments) if keep is None else int(keep.sum())
    if n_rows == 0:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns}).astype(
            {"topic_id": "int64", "n_valid_runs": "int64"}
        )

    def column(name: str) -> np.ndarray:
        values = judgments[name].to_numpy()
        return values if keep is None else values[keep]

    row_labels = judgments.index.to_numpy() if keep is None else judgments.index.to_numpy()[keep]
    runs_index = column("run").astype(np.int64)
    if (runs_index < 0).any():
        bad = int(np.flatnonzero(runs_index < 0)[0])
        raise VotingError(f"judgments row {row_labels[bad]}: negative run index {runs_index[bad]}")
    labels = column("label")
    try:
        codes = encode_labels(labels)
    except VotingError as exc:
        row = row_labels[exc.position]
        raise VotingError(
            f"judgments row {row}: label {labels[exc.position]!r} is not one of {', '.join(LABELS)} (or missing)",
            position=exc.position,
        ) from None
    n_runs = max(int(runs_index.max()) + 1, 3)

    key_columns = [model_column, "strategy", "dimension", "comparison_id"]
    inverse, uniques = factorize_columns(judgments, key_columns, rows=keep)
    n_keys = len(uniques)
    slot = inverse * n_runs + runs_index
    counts = np.bincount(slot, minlength=n_keys * n_runs)
    if (counts > 1).any():
        dup_slot = int(np.flatnonzero(counts > 1)[0])
        rows = np.flatnonzero(slot == dup_slot)
        first, second = row_labels[rows[0]], row_labels[rows[1]]
        key = uniques.iloc[dup_slot // n_runs]
        raise VotingError(
            f"judgments rows {first} and {second}: the same run ({int(runs_index[rows[0]])}) of "
            f"model {key[model_column]!r}, strategy {key['strategy']!r}, comparison "
            f"{key['comparison_id']!r} occurs twice"
        )
    flat = np.full(n_keys * n_runs, MISSING, dtype=np.int8)
    flat[slot] = codes
    runs = flat.reshape(n_keys, n_runs)
    topic = np.zeros(n_keys, dtype=np.int64)
    topic[inverse] = column("topic_id").astype(np.int64)
    out = uniques.set_axis(MAJORITY_KEY, axis=1)
    out["topic_id"] = topic
    for i in range(n_runs):
        out[f"label_run{i}"] = decode_labels(runs[:, i])
    out["n_valid_runs"] = (runs >= 0).sum(axis=1).astype(np.int64)
    out["majority_label"] = decode_labels(majority_of_runs(runs, min_votes=min_votes))
    return out
