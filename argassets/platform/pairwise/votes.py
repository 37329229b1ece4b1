"""Votes over pairwise verdicts: the majority of repeated runs, and plurality over voters (docs/pairwise.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from argassets.platform.pairwise.labels import (
    LABELS,
    MISSING,
    TIE,
    A,
    B,
    VotingError,
    decode_labels,
    encode_labels,
    factorize_columns,
)

__all__ = ["majority_of_runs", "majority_votes", "plurality_vote", "run_agreement_pattern"]


def majority_of_runs(runs: np.ndarray, min_votes: int = 2) -> np.ndarray:
    """The majority vote over the runs of each pair.

    ``A`` if at least ``min_votes`` runs say ``A`` (and more say ``A`` than ``B``), ``B`` likewise,
    otherwise ``Tie``; :data:`MISSING` when no run is valid.

    Parameters
    ----------
    runs
        ``(n_pairs, n_runs)`` label codes, -1 for an invalid or missing run.
    min_votes
        Votes a label needs (2 of 3 in Study A's protocol).

    Returns
    -------
    numpy.ndarray
        ``int8`` majority codes, one per pair.
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
    """How many distinct labels the runs of each pair gave (1 = all equal), -1 if a run is missing.

    For 3 runs: 1 = all equal, 2 = two equal, 3 = all unequal.
    """
    runs = np.asarray(runs)
    present = np.stack([(runs == code).any(axis=1) for code in range(len(LABELS))], axis=1)
    distinct = present.sum(axis=1).astype(np.int8)
    distinct[(runs < 0).any(axis=1)] = -1
    return distinct


def _encode_or_name_row(labels: np.ndarray, row_labels: np.ndarray) -> np.ndarray:
    """:func:`encode_labels`, with the error naming the row of the judgments table."""
    try:
        return encode_labels(labels)
    except VotingError as exc:
        assert exc.position is not None
        row = row_labels[exc.position]
        raise VotingError(
            f"judgments row {row}: label {labels[exc.position]!r} is not one of {', '.join(LABELS)} (or missing)",
            position=exc.position,
        ) from None


def _run_indices(runs: np.ndarray, row_labels: np.ndarray) -> np.ndarray:
    """Run indices as integers; a negative one is an error naming its row."""
    runs_index = runs.astype(np.int64)
    if (runs_index < 0).any():
        bad = int(np.flatnonzero(runs_index < 0)[0])
        raise VotingError(f"judgments row {row_labels[bad]}: negative run index {runs_index[bad]}")
    return runs_index


def _empty_votes(columns: list[str]) -> pd.DataFrame:
    """The votes table without rows: ``columns`` and the vote columns, with their dtypes."""
    columns = [*columns, "n_valid_runs", "majority_label"]
    frame = pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    return frame.astype({"n_valid_runs": "int64"})


def majority_votes(
    judgments: pd.DataFrame,
    key_columns: Sequence[str],
    *,
    carry_columns: Sequence[str] = (),
    names: Mapping[str, str] | None = None,
    run_column: str = "run",
    label_column: str = "label",
    order_column: str = "order",
    min_runs: int = 3,
    min_votes: int = 2,
) -> pd.DataFrame:
    """Pivot the runs of every key (e.g. judge, facet, pair) and take their majority.

    Only verdicts in the pair's own order (``order == "ab"``, or every row when there is no order
    column) enter; swapped-order verdicts belong to the position-bias report.

    Parameters
    ----------
    judgments
        One row per verdict: the ``key_columns``, ``carry_columns``, the run index and the label
        (``A``/``B``/``Tie``, null when invalid); optionally the order column.
    key_columns, carry_columns
        Columns that identify one voted item (its runs are pivoted); columns with one value per
        key, copied to the output (e.g. the pair's stratum).
    names
        Output names of key columns that differ from the input names (also used in errors).
    run_column, label_column, order_column
        Names of the run index, the label and the presentation order.
    min_runs, min_votes
        Run columns the output has at least (``label_run0 .. label_run<R-1>``); see :func:`majority_of_runs`.

    Returns
    -------
    pandas.DataFrame
        One row per key: the keys (renamed by ``names``), the carried columns,
        ``label_run0 .. label_run<R-1>``, ``n_valid_runs``, ``majority_label`` (label strings,
        ``None`` when missing), sorted by the keys.

    Raises
    ------
    VotingError
        A missing column, a negative run index, a label outside A/B/Tie, or a run given twice (naming the row).
    """
    key_columns, carry_columns = list(key_columns), list(carry_columns)
    _require_columns(judgments, [*key_columns, *carry_columns, run_column, label_column])
    out_keys = [dict(names or {}).get(c, c) for c in key_columns]
    keep = judgments[order_column].to_numpy(dtype=object) == "ab" if order_column in judgments.columns else None
    if (len(judgments) if keep is None else int(keep.sum())) == 0:
        return _empty_votes([*out_keys, *carry_columns, *(f"label_run{i}" for i in range(min_runs))])
    row_labels = judgments.index.to_numpy() if keep is None else judgments.index.to_numpy()[keep]
    runs_index = _run_indices(_selected(judgments, run_column, keep), row_labels)
    codes = _encode_or_name_row(_selected(judgments, label_column, keep), row_labels)
    n_runs = max(int(runs_index.max()) + 1, min_runs)
    inverse, uniques = factorize_columns(judgments, key_columns, rows=keep)
    runs = _pivot_runs(inverse, runs_index, codes, len(uniques), n_runs, row_labels, uniques, out_keys)
    out = uniques.set_axis(out_keys, axis=1)
    for name in carry_columns:
        out[name] = _carried(_selected(judgments, name, keep), inverse, len(uniques))
    return _with_votes(out, runs, min_votes)


def _carried(values: np.ndarray, inverse: np.ndarray, n_keys: int) -> np.ndarray:
    """Per key, the value of its rows (one per key, so the last row's)."""
    carried = np.empty(n_keys, dtype=values.dtype)
    carried[inverse] = values
    return carried


def _require_columns(judgments: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in judgments.columns]
    if missing:
        raise VotingError(f"judgments: missing column(s) {', '.join(missing)}")


def _selected(judgments: pd.DataFrame, name: str, keep: np.ndarray | None) -> np.ndarray:
    """The values of column ``name`` on the rows that vote (``keep``; every row when None)."""
    values = judgments[name].to_numpy()
    return values if keep is None else values[keep]


def _with_votes(out: pd.DataFrame, runs: np.ndarray, min_votes: int) -> pd.DataFrame:
    """``out`` with the label of every run, the number of valid runs and the majority label."""
    for i in range(runs.shape[1]):
        out[f"label_run{i}"] = decode_labels(runs[:, i])
    out["n_valid_runs"] = (runs >= 0).sum(axis=1).astype(np.int64)
    out["majority_label"] = decode_labels(majority_of_runs(runs, min_votes=min_votes))
    return out


def _pivot_runs(
    inverse: np.ndarray,
    runs_index: np.ndarray,
    codes: np.ndarray,
    n_keys: int,
    n_runs: int,
    row_labels: np.ndarray,
    uniques: pd.DataFrame,
    out_keys: list[str],
) -> np.ndarray:
    """``(n_keys, n_runs)`` codes, MISSING where a run is absent; a run given twice is an error."""
    slot = inverse * n_runs + runs_index
    counts = np.bincount(slot, minlength=n_keys * n_runs)
    if (counts > 1).any():
        dup_slot = int(np.flatnonzero(counts > 1)[0])
        rows = np.flatnonzero(slot == dup_slot)
        first, second = row_labels[rows[0]], row_labels[rows[1]]
        key = uniques.iloc[dup_slot // n_runs].to_numpy()
        described = ", ".join(f"{name} {value!r}" for name, value in zip(out_keys, key, strict=True))
        raise VotingError(
            f"judgments rows {first} and {second}: the same run ({int(runs_index[rows[0]])}) of {described} occurs twice"
        )
    flat = np.full(n_keys * n_runs, MISSING, dtype=np.int8)
    flat[slot] = codes
    return flat.reshape(n_keys, n_runs)
