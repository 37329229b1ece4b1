"""Pairwise verdicts as small integer codes, and keyed tables coded as integers, fast.

A verdict on a pair (item A, item B) is ``A`` = 0 (A preferred), ``B`` = 1, ``Tie`` = 2, or
:data:`MISSING` = -1 (no valid verdict). Coding labels and key columns as integers lets every
pairwise step (votes, count matrices, agreement) run as array operations over millions of rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "A",
    "B",
    "LABELS",
    "MISSING",
    "TIE",
    "VotingError",
    "decode_labels",
    "encode_labels",
    "factorize_columns",
]

LABELS: tuple[str, ...] = ("A", "B", "Tie")
A, B, TIE = 0, 1, 2
MISSING = -1
_CODE = {label: code for code, label in enumerate(LABELS)}


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
