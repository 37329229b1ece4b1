"""Per-argument statistics of a model's repetitions (mean, variance, NA count, probability of NA)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def scores_to_json(scores: Iterable[float]) -> str:
    """Valid scores as JSON text (integers written without a decimal point), e.g. ``[40, 50]``."""
    return json.dumps([int(s) if float(s).is_integer() else float(s) for s in scores])


def scores_from_json(text: str) -> list[float]:
    """Inverse of :func:`scores_to_json`; raises ``ValueError`` on anything but a list of numbers."""
    value = json.loads(text)
    if not isinstance(value, list) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise ValueError(f"not a JSON list of numbers: {text[:80]!r}")
    return [float(v) for v in value]


def count_scores(texts: pd.Series) -> np.ndarray:
    """How many scores each :func:`scores_to_json` text holds, without parsing it (``"[]"`` holds none).

    The values have no comma of their own, so a list holds one more value than commas.
    """
    text = pa.array(texts.astype(str).to_numpy(dtype=object), pa.string())
    inner = pc.utf8_trim_whitespace(pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(text), 1, -1))
    commas = np.asarray(pc.count_substring(inner, ","), dtype=np.int64)
    return np.where(np.asarray(pc.equal(inner, "")), 0, commas + 1).astype(np.int64)


def summarise_scores(scores: Sequence[float]) -> tuple[float, float, float]:
    """Mean, population variance (``ddof = 0``, as published) and standard deviation; NaN when empty."""
    if len(scores) == 0:
        return math.nan, math.nan, math.nan
    values = np.asarray(scores, dtype=float)
    mean = float(values.mean())
    var = float(((values - mean) ** 2).mean())
    return mean, var, math.sqrt(var)


#: The columns of ``political_predictions`` that :func:`model_stats` reads (with the model column).
PREDICTION_STATS_COLUMNS = ["judge_model", "argument_id", "repetition", "score", "is_na", "is_valid"]

STATS_COLUMNS = [
    "system",
    "argument_id",
    "scores",
    "mean",
    "var",
    "std",
    "na_count",
    "invalid_count",
    "n_repetitions",
    "prob_na",
]


def model_stats(predictions: pd.DataFrame, system_column: str = "judge_model") -> pd.DataFrame:
    """Per argument and model: valid scores, mean, variance, std, NA count, probability of NA.

    Parameters
    ----------
    predictions
        ``political_predictions`` rows (``argument_id``, ``repetition``, ``score``, ``is_na``,
        ``is_valid`` and the model column).
    system_column
        Column naming the model (written to ``system``).

    Returns
    -------
    pandas.DataFrame
        ``system``, ``argument_id``, ``scores`` (JSON list of the valid scores in repetition
        order), ``mean``, ``var`` (population, ``ddof = 0``), ``std``, ``na_count``,
        ``invalid_count``, ``n_repetitions`` (every repetition made, invalid ones included) and
        ``prob_na = na_count / n_repetitions``.
    """
    required = {system_column, "argument_id", "repetition", "score", "is_na", "is_valid"}
    missing = required - set(predictions.columns)
    if missing:
        raise ValueError(f"political_predictions lacks column(s) {sorted(missing)}")
    if predictions.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in STATS_COLUMNS})
    frame = predictions[[system_column, "argument_id", "repetition", "score", "is_na", "is_valid"]].sort_values(
        [system_column, "argument_id", "repetition"], kind="stable"
    )
    keys = [system_column, "argument_id"]
    is_na = frame["is_na"].astype(bool)
    is_valid = frame["is_valid"].astype(bool)
    counts = (
        frame.assign(_na=is_na.astype("int64"), _invalid=(~is_valid).astype("int64"))
        .groupby(keys, sort=True)
        .agg(na_count=("_na", "sum"), invalid_count=("_invalid", "sum"), n_repetitions=("repetition", "size"))
    )
    scored = frame[is_valid & ~is_na]
    values = scored["score"].astype(float)
    by = [scored[system_column], scored["argument_id"]]
    groups = values.groupby(by, sort=True)
    moments = pd.DataFrame({"mean": groups.mean(), "var": groups.var(ddof=0)})
    # rows are sorted by the keys, so each group is a contiguous run
    moments["inner"] = join_runs(_score_texts(values.to_numpy()), groups.size().to_numpy())
    out = counts.join(moments, how="left").reset_index().rename(columns={system_column: "system"})
    out["scores"] = "[" + out["inner"].fillna("") + "]"
    out["std"] = np.sqrt(out["var"])
    out["prob_na"] = out["na_count"] / out["n_repetitions"]
    out = out[STATS_COLUMNS]
    return out.astype({"na_count": "int64", "invalid_count": "int64", "n_repetitions": "int64"})


_INTEGER_TEXT = np.array([str(i) for i in range(101)], dtype=object)


def join_runs(texts: Sequence[str], lengths: Sequence[int]) -> list[str]:
    """``", "``-joined consecutive runs of ``texts`` of the given lengths."""
    out = []
    start = 0
    for length in lengths:
        out.append(", ".join(texts[start : start + int(length)]))
        start += int(length)
    return out


def _score_texts(values: np.ndarray) -> list[str]:
    """Each score as :func:`scores_to_json` writes it (integers without a decimal point)."""
    values = np.asarray(values, dtype=float)
    integral = (values == np.round(values)) & (values >= 0) & (values <= 100)
    texts = np.empty(len(values), dtype=object)
    texts[integral] = _INTEGER_TEXT[values[integral].astype(int)]
    for position in np.flatnonzero(~integral):
        texts[position] = json.dumps(
            int(values[position]) if float(values[position]).is_integer() else float(values[position])
        )
    return texts.tolist()
