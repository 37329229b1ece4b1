"""Judgments made elsewhere, read from a tidy CSV or Parquet file (format: docs/judgments.md, "Importing judgments")."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, utc_now
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.study import ImportKeys

__all__ = ["PROBABILITY_COLUMNS", "ImportFormatError", "ImportJudge", "load_tidy_judgments"]

#: Optional columns: the label probabilities of a pairwise judgment (A, B, Tie).
PROBABILITY_COLUMNS: tuple[str, ...] = ("p_a", "p_b", "p_tie")
_SUM_TOLERANCE = 1e-6


class ImportFormatError(ValueError):
    """An import file that does not follow the tidy format; names the file and row."""


def _where(path: Path, index: int) -> str:
    line = f" (line {index + 2})" if path.suffix.lower() in (".csv", ".tsv") else ""
    return f"{path}: row {index}{line}"


def _read(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise ImportFormatError(f"{path}: import file not found")
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            frame = pd.read_parquet(path)
        elif suffix in (".csv", ".tsv"):
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
            frame = frame.replace({"": None})
        else:
            raise ImportFormatError(f"{path}: unknown import format '{suffix}' (use .csv, .tsv or .parquet)")
    except (ValueError, OSError) as exc:
        if isinstance(exc, ImportFormatError):
            raise
        raise ImportFormatError(f"{path}: cannot be read: {exc}") from None
    return frame


def _key_set(path: Path, frame: pd.DataFrame, key_sets: Sequence[ImportKeys]) -> ImportKeys:
    """The key set whose item column the file has (the first that matches, in study order)."""
    if not key_sets:
        raise ImportFormatError(f"{path}: no study's import keys were given (the studies of the importing entry)")
    for keys in key_sets:
        if keys.item_column in frame.columns:
            return keys
    wanted = " or ".join(f"'{keys.item_column}'" for keys in key_sets)
    raise ImportFormatError(f"{path}: needs a {wanted} column (the item of a study this judge takes part in)")


def _probabilities(path: Path, frame: pd.DataFrame) -> pd.DataFrame | None:
    """The validated ``p_a, p_b, p_tie`` columns (``None`` when the file has none of them)."""
    present = [c for c in PROBABILITY_COLUMNS if c in frame.columns]
    if not present:
        return None
    if len(present) < len(PROBABILITY_COLUMNS):
        absent = [c for c in PROBABILITY_COLUMNS if c not in present]
        raise ImportFormatError(f"{path}: has {', '.join(present)} but not {', '.join(absent)} (all three or none)")
    raw = frame[list(PROBABILITY_COLUMNS)]
    values = raw.apply(pd.to_numeric, errors="coerce").astype(float)
    for column in PROBABILITY_COLUMNS:
        unreadable = values[column].isna() & raw[column].notna()
        if unreadable.any():
            index = int(frame.index[np.flatnonzero(unreadable.to_numpy())[0]])
            raise ImportFormatError(f"{_where(path, index)}: '{column}' is not a number: {raw[column].loc[index]!r}")
    given = values.notna()
    partial = given.any(axis=1) & ~given.all(axis=1)
    outside = ((values < 0) | (values > 1)).any(axis=1)
    bad_sum = given.all(axis=1) & ((values.sum(axis=1) - 1.0).abs() > _SUM_TOLERANCE)
    for problem, what in (
        (partial, "gives some of p_a, p_b, p_tie but not all three"),
        (outside, "has a probability outside [0, 1]"),
        (bad_sum, "has p_a + p_b + p_tie different from 1"),
    ):
        if problem.any():
            index = int(frame.index[np.flatnonzero(problem.to_numpy())[0]])
            shown = ", ".join(f"{c}={values[c].loc[index]!r}" for c in PROBABILITY_COLUMNS)
            raise ImportFormatError(f"{_where(path, index)}: {what} ({shown})")
    return values


def load_tidy_judgments(
    path: str | os.PathLike[str], model_name: str | None = None, *, key_sets: Sequence[ImportKeys]
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Read and validate a tidy judgment file.

    ``key_sets`` are the import keys of the studies the file may hold (the entry's studies').

    Returns
    -------
    (pandas.DataFrame, tuple of str)
        Columns = the key columns, ``run`` (int), ``text`` (the raw output, else the label) and,
        when the file has them, ``p_a, p_b, p_tie`` (float, NaN where a row leaves them empty);
        and the key columns used (those of the study the file belongs to).

    Raises
    ------
    ImportFormatError
        Missing file or column, a bad value, no row for ``model_name``, or a judgment given twice;
        the message names the file and row.
    """
    path = Path(path)
    frame = _read(path)
    key_set = _key_set(path, frame, key_sets)
    keys = key_set.columns
    frame = frame.assign(**{c: v for c, v in key_set.defaults.items() if c not in frame.columns})
    _check_columns(path, frame, keys)
    frame = _rows_of(path, frame.reset_index(drop=True), model_name)
    _check_keys(path, frame, key_set)
    tidy = pd.DataFrame({c: frame[c].astype(str) for c in keys})
    tidy["run"] = _runs(path, frame)
    tidy["text"] = _texts(path, frame)
    probabilities = _probabilities(path, frame)
    if probabilities is not None:
        tidy[list(PROBABILITY_COLUMNS)] = probabilities
    _check_unique(path, tidy, [*keys, "run"])
    return tidy.reset_index(drop=True), keys


def _check_columns(path: Path, frame: pd.DataFrame, keys: tuple[str, ...]) -> None:
    missing = [c for c in [*keys, "run"] if c not in frame.columns]
    if "raw_output" not in frame.columns and "label" not in frame.columns:
        missing.append("raw_output or label")
    if missing:
        raise ImportFormatError(f"{path}: missing column(s) {', '.join(repr(c) for c in missing)}")


def _rows_of(path: Path, frame: pd.DataFrame, model_name: str | None) -> pd.DataFrame:
    """The rows of ``model_name`` when the file names its judges, else every row."""
    if "judge_model" not in frame.columns or model_name is None:
        return frame
    mine = frame["judge_model"].astype(str) == model_name
    if not mine.any():
        found = sorted(frame["judge_model"].dropna().astype(str).unique())[:10]
        raise ImportFormatError(f"{path}: no rows with judge_model = {model_name!r} (found: {found})")
    return frame[mine]


def _first_row(frame: pd.DataFrame, bad: pd.Series) -> int:
    return int(frame.index[np.flatnonzero(bad.to_numpy())[0]])


def _check_keys(path: Path, frame: pd.DataFrame, key_set: ImportKeys) -> None:
    for column in key_set.columns:
        values = frame[column]
        bad = values.isna()
        if column in key_set.allowed:
            bad |= ~values.astype(str).isin(key_set.allowed[column])
        if bad.any():
            index = _first_row(frame, bad)
            allowed = f" (allowed: {sorted(key_set.allowed[column])})" if column in key_set.allowed else ""
            raise ImportFormatError(f"{_where(path, index)}: bad '{column}' value {values.loc[index]!r}{allowed}")


def _runs(path: Path, frame: pd.DataFrame) -> pd.Series:
    runs = pd.to_numeric(frame["run"], errors="coerce")
    bad = runs.isna() | (runs < 0) | (runs != runs.round())
    if bad.any():
        index = _first_row(frame, bad)
        raise ImportFormatError(
            f"{_where(path, index)}: 'run' must be an integer >= 0, got {frame['run'].loc[index]!r}"
        )
    return runs.astype("int64")


def _texts(path: Path, frame: pd.DataFrame) -> pd.Series:
    """The raw output, else the label, of every row."""
    text = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    if "raw_output" in frame.columns:
        text = frame["raw_output"].where(frame["raw_output"].notna(), None)
    if "label" in frame.columns:
        text = text.where(text.notna(), frame["label"])
    if text.isna().any():
        raise ImportFormatError(
            f"{_where(path, _first_row(frame, text.isna()))}: neither 'raw_output' nor 'label' is given"
        )
    return text.astype(str)


def _check_unique(path: Path, tidy: pd.DataFrame, columns: list[str]) -> None:
    duplicated = tidy.duplicated(columns, keep=False)
    if duplicated.any():
        rows = list(tidy.index[duplicated.to_numpy()])
        first = tidy.loc[rows[0], columns].tolist()
        same = [r for r in rows if tidy.loc[r, columns].tolist() == first]
        raise ImportFormatError(
            f"{_where(path, same[1])}: judgment {dict(zip(columns, first, strict=True))} "
            f"given twice (first in row {same[0]})"
        )


class ImportJudge:
    """Answers requests from a tidy judgment file (see the module docstring).

    Requests are matched by the key columns read from ``ChatRequest.context`` (``order`` defaults
    to ``ab``). A request the file does not answer is an error listing what is missing.
    """

    backend = "import"
    is_baseline = False
    #: Computes nothing: the order it gets the prompts in saves nothing (judging/prefix_order.py).
    prefix_order = False

    def __init__(self, path: str | os.PathLike[str], model_name: str | None = None, *, key_sets: Sequence[ImportKeys]):
        self.path = Path(path)
        self.model_name = model_name
        self.key_sets = key_sets
        self._table: dict[tuple[str, ...], str] | None = None
        self._probabilities: dict[tuple[str, ...], tuple[float, float, float]] = {}
        self._keys: tuple[str, ...] = ()

    def table(self) -> dict[tuple[str, ...], str]:
        if self._table is None:
            tidy, self._keys = load_tidy_judgments(self.path, self.model_name, key_sets=self.key_sets)
            columns = [*self._keys, "run"]
            self._table = {
                tuple(str(v) for v in key): text
                for key, text in zip(tidy[columns].itertuples(index=False, name=None), tidy["text"], strict=True)
            }
            if set(PROBABILITY_COLUMNS) <= set(tidy.columns):
                given = tidy.dropna(subset=list(PROBABILITY_COLUMNS))
                self._probabilities = {
                    tuple(str(v) for v in key): (float(p_a), float(p_b), float(p_tie))
                    for key, p_a, p_b, p_tie in zip(
                        given[columns].itertuples(index=False, name=None),
                        *(given[c] for c in PROBABILITY_COLUMNS),
                        strict=True,
                    )
                }
        return self._table

    def label_probabilities(self, key: tuple[str, ...], request: ChatRequest) -> dict[str, float] | None:
        """The row's ``p_a, p_b, p_tie`` as ``A, B, Tie`` (as presented) for a pairwise request, else ``None``."""
        given = self._probabilities.get(key)
        if given is None or set(request.choices or ()) != set(LABELS):
            return None
        return dict(zip(LABELS, given, strict=True))

    def close(self) -> None:
        """Nothing to free."""

    def _defaults(self) -> dict[str, str]:
        """Key values a request may leave out (the file's study's defaults)."""
        return next((dict(k.defaults) for k in self.key_sets if k.columns == self._keys), {})

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        table = self.table()
        at = utc_now()
        out, missing = [], []
        for request in requests:
            context = {**self._defaults(), **request.context}
            row = []
            for run in runs:
                started = time.perf_counter()
                try:
                    key = tuple(str(context[c]) for c in self._keys) + (str(int(run)),)
                except KeyError as exc:
                    raise ValueError(f"request {request.key!r} has no {exc.args[0]!r} in its context") from None
                if key not in table:
                    missing.append(key)
                    continue
                probabilities = self.label_probabilities(key, request)
                row.append(
                    Completion(
                        table[key], int(run), None, time.perf_counter() - started, at, at, label_probs=probabilities
                    )
                )
            out.append(row)
        if missing:
            shown = "; ".join(", ".join(k) for k in missing[:5])
            raise ValueError(
                f"{self.path}: {len(missing)} judgment(s) missing for this partition's scope, e.g. {shown} "
                f"(columns: {', '.join([*self._keys, 'run'])})"
            )
        return out
