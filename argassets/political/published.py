"""The published per-model political prediction files (TSV), read and expanded to predictions.

The published political-position data: per-model prediction files and the human study files.

Two sources, both from "Validating Political Position Predictions of Arguments" (MIT):

- ``political/predictions/<model>.tsv``: one row per argument of the paper's knowledge base,
  columns ``nodeID``, ``array_of_pol_pos`` (the valid scores), ``mean``, ``var``, ``std``,
  ``NA_count``, ``prob_of_NA``. The header separates its names with a tab *and* spaces
  (``nodeID \t array_of_pol_pos \t ...``); so do the rows. :func:`read_published_tsv` reads it.
- ``political/human/``: the pointwise study (``pointwise_sample_1000.csv`` with the texts,
  ``pointwise_results_merged.csv`` with three labels per item and every published model's and
  ensemble's probability of NA) and the pairwise study (``pairwise_sample_100.csv`` with the texts
  and every published model's and ensemble's 5-repetition score arrays, ``pairwise_pairs_934.csv``,
  ``pairwise_{left,right}_framed.csv`` with three human labels per pair and framing).

How published ``nodeID`` values relate to this platform's knowledge base
------------------------------------------------------------------------
``nodeID`` is a 0-based row index into the paper's own KB export (23,300 rows in every file;
``uuid`` in ``pairwise_sample_100.csv`` is an index into a 23,228-row variant: it trails
``prediction_index`` by 0-72). ``prediction_index`` in ``pairwise_sample_100.csv`` equals
``nodeID``. The order of the paper's KB cannot be rebuilt from QT30, but the released prompts
(``political/prompts/prompts.jsonl.xz``) carry every row's texts: :mod:`argassets.political.published_index`
joins each row to the KB argument that received its prompt, and :func:`published_tsv_to_predictions`
keys a file's rows by KB ``argument_id`` through that index (``nodeID`` kept as ``published_index``).
Without the index, rows keep the key ``paper:<nodeID>`` (:func:`published_argument_id`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from argassets.platform.registry.model_entry import JudgmentsFile, ModelEntry
from argassets.platform.release_manifest import ReleaseIncomplete, check_node_ids
from argassets.political.release_facts import PUBLISHED_NODE_IDS

PUBLISHED_TSV_COLUMNS = ("nodeID", "array_of_pol_pos", "mean", "var", "std", "NA_count", "prob_of_NA")

#: Key of a published prediction row: the paper's KB index, never confused with our argument ids.
PUBLISHED_ID_PREFIX = "paper:"

#: The six published TSV files and the column prefix of the same model in the study files.
PUBLISHED_TSV_STUDY_PREFIX: dict[str, str] = {
    "claude_35_haiku": "claude_3_5_haiku_2024102",
    "deepseek_r1": "deepseek_r1",
    "gpt4o": "gpt_4o_2024_08_06",
    "llama32_3b": "llama3_2_3b",
    "llama33_70b": "llama_3_3_70b_instruct",
    "mistral_7b": "mistral_7b",
}


#: The registry's import ``format`` of the published per-model files.
PUBLISHED_TSV_FORMAT = "published_tsv"


def published_predictions_file(entry: ModelEntry) -> JudgmentsFile | None:
    """The published per-model TSV file ``entry`` imports; ``None`` when it judges or imports another format."""
    imported = entry.judgments_file
    return imported if imported is not None and imported.format == PUBLISHED_TSV_FORMAT else None


def published_argument_id(node_id: int) -> str:
    """The key of a published prediction row (``paper:<nodeID>``)."""
    return f"{PUBLISHED_ID_PREFIX}{int(node_id)}"


def parse_int_list(text: str, where: str) -> list[int]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: not a JSON list of integers: {str(text)[:60]!r}") from None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"{where}: not a JSON list of integers: {str(text)[:60]!r}")
    return value


def read_published_tsv(path: str | Path, expected_node_ids: range | None = PUBLISHED_NODE_IDS) -> pd.DataFrame:
    """Read one published per-model prediction file.

    A well-formed file is parsed column-wise with pyarrow (about a tenth of a second); any line
    that the column-wise reader does not accept sends the file to the line-by-line reader, whose
    error names the line. Both give the same frame for every file the column-wise reader accepts.

    Parameters
    ----------
    path
        A ``political/predictions/*.tsv`` file (fields separated by a tab with optional spaces
        around it, in the header too).
    expected_node_ids
        The ``nodeID`` values the file must hold, each once and none missing (default: the release's
        0..23,299, so a file truncated at a line boundary fails naming the file); ``None`` for
        files that hold a subset (the ensembles).

    Returns
    -------
    pandas.DataFrame
        ``node_id`` (int), ``scores`` (list of int, as published, out-of-range values included),
        ``mean``, ``var``, ``std`` (float, NaN when no score), ``na_count`` (int), ``prob_na``
        (float), sorted by ``node_id``.

    Raises
    ------
    ValueError
        A missing column, a malformed row, a repeated ``nodeID``; the message names the file and
        the line.
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise ValueError(f"{path}: empty file")
    header = [name.strip() for name in lines[0].split("\t")]
    if tuple(header) != PUBLISHED_TSV_COLUMNS:
        raise ValueError(f"{path}: line 1: expected columns {list(PUBLISHED_TSV_COLUMNS)}, found {header}")
    frame = parse_rows_columnwise(lines[1:])
    if frame is None:
        frame = parse_rows_by_line(path, lines[1:])
    if expected_node_ids is not None:
        try:
            check_node_ids(frame["node_id"], path, expected_node_ids)
        except ReleaseIncomplete as exc:
            raise ValueError(str(exc)) from None
    return frame.sort_values("node_id").reset_index(drop=True)


_FRAME_COLUMNS = ["node_id", "scores", "mean", "var", "std", "na_count", "prob_na"]

# What the column-wise reader accepts, a subset of what the line-by-line reader accepts (Python's
# int() and float(), json.loads of a list of integers), so that both read it to the same values.
_UNSIGNED = r"[0-9]+"
_JSON_INT = r"-?(?:0|[1-9][0-9]*)"
_FLOAT = r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|nan|-?inf"
_INT_LIST = rf"\[ *(?:{_JSON_INT} *(?:, *{_JSON_INT} *)*)?\]"
_FIELD_PATTERNS = (_UNSIGNED, _INT_LIST, _FLOAT, _FLOAT, _FLOAT, _UNSIGNED, _FLOAT)


def parse_rows_columnwise(lines: list[str]) -> pd.DataFrame | None:
    """The data lines of a well-formed file as the frame of :func:`read_published_tsv` (unsorted),
    or ``None`` when a line is not one the line-by-line reader reads to the same values, or a
    ``nodeID`` repeats (so that reader names the line)."""
    body = pa.array(lines, pa.string())
    body = body.filter(pc.not_equal(body, ""))  # blank lines are skipped, as line by line
    if not len(body):
        return None
    fields = pc.split_pattern(body, "\t")
    if not pc.all(pc.equal(pc.list_value_length(fields), len(PUBLISHED_TSV_COLUMNS))).as_py():
        return None
    columns = [pc.utf8_trim(pc.list_element(fields, i), " ") for i in range(len(PUBLISHED_TSV_COLUMNS))]
    for column, pattern in zip(columns, _FIELD_PATTERNS, strict=True):
        if not pc.all(pc.match_substring_regex(column, f"^(?:{pattern})$")).as_py():
            return None
    try:
        return _typed_columns(columns)
    except pa.ArrowInvalid:  # an integer beyond int64, which Python's int() reads
        return None


def _typed_columns(columns: list[pa.Array]) -> pd.DataFrame | None:
    """The seven validated text columns as typed columns; ``None`` when a ``nodeID`` repeats."""
    inner = pc.utf8_trim(pc.utf8_slice_codeunits(columns[1], 1, -1), " ")
    empty = pc.equal(inner, "")
    split = pc.split_pattern_regex(pc.if_else(empty, pa.scalar(None, pa.string()), inner), " *, *")
    lengths = np.asarray(pc.fill_null(pc.list_value_length(split), 0), dtype=np.int64)
    values = pc.cast(pc.list_flatten(split), pa.int64()).to_pylist()
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    node_ids = np.asarray(pc.cast(columns[0], pa.int64()), dtype=np.int64)
    if len(np.unique(node_ids)) != len(node_ids):
        return None
    return pd.DataFrame(
        {
            "node_id": node_ids,
            "scores": pd.Series([values[a:b] for a, b in zip(starts, ends, strict=True)], dtype=object),
            "mean": np.asarray(pc.cast(columns[2], pa.float64()), dtype=float),
            "var": np.asarray(pc.cast(columns[3], pa.float64()), dtype=float),
            "std": np.asarray(pc.cast(columns[4], pa.float64()), dtype=float),
            "na_count": np.asarray(pc.cast(columns[5], pa.int64()), dtype=np.int64),
            "prob_na": np.asarray(pc.cast(columns[6], pa.float64()), dtype=float),
        },
        columns=_FRAME_COLUMNS,
    )


def parse_rows_by_line(path: Path, lines: list[str]) -> pd.DataFrame:
    """The data lines parsed one by one (unsorted); the first malformed line raises, naming it."""
    rows = []
    seen: set[int] = set()
    for number, line in enumerate(lines, start=2):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) != len(PUBLISHED_TSV_COLUMNS):
            raise ValueError(f"{where}: expected {len(PUBLISHED_TSV_COLUMNS)} fields, found {len(fields)}")
        try:
            node_id = int(fields[0])
            mean, var, std = (float(fields[i]) for i in (2, 3, 4))
            na_count = int(fields[5])
            prob_na = float(fields[6])
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if node_id in seen:
            raise ValueError(f"{where}: nodeID {node_id} occurs twice")
        seen.add(node_id)
        scores = parse_int_list(fields[1], where)
        if na_count < 0:
            raise ValueError(f"{where}: negative NA_count {na_count}")
        rows.append((node_id, scores, mean, var, std, na_count, prob_na))
    return pd.DataFrame(rows, columns=_FRAME_COLUMNS)


def _keyed_by_argument(
    published: pd.DataFrame, judge_model: str, argument_rows: pd.DataFrame | None
) -> tuple[pd.DataFrame, np.ndarray]:
    """The published rows and the argument id of each: KB arguments when ``argument_rows`` is
    given (one row per argument), else ``paper:<nodeID>``."""
    if argument_rows is not None:
        have = set(published["node_id"].astype(int))
        lacking = sorted(set(argument_rows["published_index"].astype(int)) - have)
        if lacking:
            raise ValueError(
                f"published predictions of '{judge_model}' lack nodeID {lacking[0]} "
                f"({len(lacking)} rows that KB arguments carry are missing; is the file truncated?)"
            )
        keyed = argument_rows[["argument_id", "published_index"]].merge(
            published, left_on="published_index", right_on="node_id", how="left", sort=False
        )
        argument_ids = keyed["argument_id"].astype(str).to_numpy(dtype=object)
        return keyed, argument_ids
    return published, np.array([published_argument_id(n) for n in published["node_id"]], dtype=object)


def _answer_counts(published: pd.DataFrame, judge_model: str, n_repetitions: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores and NA answers per row; more of them than ``n_repetitions`` is an error naming the nodeID."""
    n_scores = published["scores"].map(len).to_numpy(dtype=np.int64)
    na_counts = published["na_count"].to_numpy(dtype=np.int64)
    too_many = np.flatnonzero(n_scores + na_counts > n_repetitions)
    if len(too_many):
        first = too_many[0]
        raise ValueError(
            f"published predictions of '{judge_model}': nodeID {published['node_id'].iloc[first]} has "
            f"{n_scores[first]} scores and {published['na_count'].iloc[first]} NA answers, more than "
            f"{n_repetitions} repetitions"
        )
    return n_scores, na_counts


def published_tsv_to_predictions(
    published: pd.DataFrame,
    judge_model: str,
    n_repetitions: int = 5,
    argument_rows: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Expand published per-argument rows into one prediction row per repetition.

    The published files keep only the valid scores and the NA count, not the raw answers or their
    order, so each argument becomes: its published scores in array order, then its NA answers, then
    invalid rows up to ``n_repetitions`` when scores + NAs fall short. A published value outside
    0-100 (``mistral_7b.tsv`` has ``-1``) is kept as an **invalid** row whose ``raw_output`` is the
    value, so it is counted and never treated as a score. ``raw_output`` is the published value as
    text (``"45"``, ``"NA"``), or empty for a missing repetition.

    Parameters
    ----------
    published
        :func:`read_published_tsv` output.
    judge_model
        The registry name (partition key).
    n_repetitions
        Repetitions per argument of the protocol.
    argument_rows
        Which released row each KB argument carries (``argument_id``, ``published_index``: see
        :func:`argassets.political.published_index.argument_published_rows`). When given, rows are keyed
        by KB ``argument_id`` (one argument per line of ``argument_rows``, ``published_index``
        kept as provenance) and released rows no argument carries are left out; when ``None``,
        by ``paper:<nodeID>``.

    Returns
    -------
    pandas.DataFrame
        ``judge_model``, ``argument_id``, ``published_index``, ``repetition``, ``raw_output``,
        ``score``, ``is_na``, ``is_valid``.

    Raises
    ------
    ValueError
        When an argument has more scores and NAs than ``n_repetitions`` (names the ``nodeID``), or
        ``argument_rows`` names a ``nodeID`` the file lacks.
    """
    published, argument_ids = _keyed_by_argument(published, judge_model, argument_rows)
    # Every row becomes exactly n_repetitions answers: its scores, its NAs, then missing ones.
    n_scores, na_counts = _answer_counts(published, judge_model, n_repetitions)
    return pd.DataFrame(
        {
            "judge_model": judge_model,
            "argument_id": np.repeat(argument_ids, n_repetitions),
            "published_index": pd.array(
                np.repeat(published["node_id"].to_numpy(dtype=np.int64), n_repetitions), dtype="Int64"
            ),
            **_repetitions(published, n_scores, na_counts, n_repetitions),
        }
    )


def _repetitions(
    published: pd.DataFrame, n_scores: np.ndarray, na_counts: np.ndarray, n_repetitions: int
) -> dict[str, np.ndarray]:
    """Per row and repetition: its scores in array order, then its NAs, then missing (invalid) ones."""
    n_rows = len(published)
    published_values = [value for row in published["scores"] for value in row]
    values = np.asarray(published_values, dtype=float)
    repetition = np.tile(np.arange(n_repetitions, dtype=np.int64), n_rows)
    row_scores = np.repeat(n_scores, n_repetitions)
    is_score = repetition < row_scores
    is_na = ~is_score & (repetition < row_scores + np.repeat(na_counts, n_repetitions))
    in_range = (values >= 0) & (values <= 100)
    score = np.full(n_rows * n_repetitions, np.nan)
    score[np.flatnonzero(is_score)[in_range]] = values[in_range]
    is_valid = is_na.copy()
    is_valid[is_score] = in_range
    raw = np.where(is_na, "NA", "").astype(object)
    raw[is_score] = [str(value) for value in published_values]
    return {"repetition": repetition, "raw_output": raw, "score": score, "is_na": is_na, "is_valid": is_valid}


def published_file_counts(published: pd.DataFrame, n_repetitions: int = 5) -> tuple[int, int, int]:
    """``(n_scores, n_na, n_invalid)`` over every row of a published file.

    Scores are the published values within 0-100; invalid answers are the values outside it plus
    the repetitions missing from a row (as :func:`published_tsv_to_predictions` counts them).
    """
    lengths = published["scores"].map(len)
    in_range = published["scores"].map(lambda values: sum(0 <= v <= 100 for v in values))
    n_na = int(published["na_count"].sum())
    n_scores = int(in_range.sum())
    missing = int((n_repetitions - lengths - published["na_count"]).clip(lower=0).sum())
    return n_scores, n_na, int((lengths - in_range).sum()) + missing
