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

from argassets.platform.release_manifest import PUBLISHED_NODE_IDS, ReleaseIncomplete, check_node_ids

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


def published_argument_id(node_id: int) -> str:
    """The key of a published prediction row (``paper:<nodeID>``)."""
    return f"{PUBLISHED_ID_PREFIX}{int(node_id)}"


def _parse_int_list(text: str, where: str) -> list[int]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: not a JSON list of integers: {str(text)[:60]!r}") from None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"{where}: not a JSON list of integers: {str(text)[:60]!r}")
    return value


def read_published_tsv(path: str | Path, expected_node_ids: range | None = PUBLISHED_NODE_IDS) -> pd.DataFrame:
    """Read one published per-model prediction file.

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
    rows = []
    seen: set[int] = set()
    for number, line in enumerate(lines[1:], start=2):
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
        scores = _parse_int_list(fields[1], where)
        if na_count < 0:
            raise ValueError(f"{where}: negative NA_count {na_count}")
        rows.append((node_id, scores, mean, var, std, na_count, prob_na))
    frame = pd.DataFrame(rows, columns=["node_id", "scores", "mean", "var", "std", "na_count", "prob_na"])
    if expected_node_ids is not None:
        try:
            check_node_ids(frame["node_id"], path, expected_node_ids)
        except ReleaseIncomplete as exc:
            raise ValueError(str(exc)) from None
    return frame.sort_values("node_id").reset_index(drop=True)


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
        argument_ids = keyed["argument_id"].astype(str).tolist()
        published = keyed
    else:
        argument_ids = [published_argument_id(n) for n in published["node_id"]]
    keys: list[str] = []
    node_ids: list[int] = []
    repetitions: list[int] = []
    raws: list[str] = []
    scores: list[float] = []
    is_na: list[bool] = []
    is_valid: list[bool] = []
    for key, node_id, values, na_count in zip(
        argument_ids, published["node_id"], published["scores"], published["na_count"], strict=True
    ):
        total = len(values) + int(na_count)
        if total > n_repetitions:
            raise ValueError(
                f"published predictions of '{judge_model}': nodeID {node_id} has {len(values)} scores and "
                f"{na_count} NA answers, more than {n_repetitions} repetitions"
            )
        answers: list[tuple[str, float, bool, bool]] = []
        for value in values:
            if 0 <= value <= 100:
                answers.append((str(value), float(value), False, True))
            else:
                answers.append((str(value), np.nan, False, False))
        answers.extend(("NA", np.nan, True, True) for _ in range(int(na_count)))
        answers.extend(("", np.nan, False, False) for _ in range(n_repetitions - total))
        for repetition, (raw, score, na, valid) in enumerate(answers):
            keys.append(key)
            node_ids.append(int(node_id))
            repetitions.append(repetition)
            raws.append(raw)
            scores.append(score)
            is_na.append(na)
            is_valid.append(valid)
    return pd.DataFrame(
        {
            "judge_model": judge_model,
            "argument_id": keys,
            "published_index": pd.array(node_ids, dtype="Int64"),
            "repetition": np.asarray(repetitions, dtype="int64"),
            "raw_output": raws,
            "score": np.asarray(scores, dtype=float),
            "is_na": np.asarray(is_na, dtype=bool),
            "is_valid": np.asarray(is_valid, dtype=bool),
        }
    )


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
