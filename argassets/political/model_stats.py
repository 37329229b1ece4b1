"""Per-argument statistics of a model's repetitions (mean, variance, NA count, probability of NA)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd


def scores_to_json(scores: Iterable[float]) -> str:
    """Valid scores as JSON text (integers written without a decimal point), e.g. ``[40, 50]``."""
    return json.dumps([int(s) if float(s).is_integer() else float(s) for s in scores])


def scores_from_json(text: str) -> list[float]:
    """Inverse of :func:`scores_to_json`; raises ``ValueError`` on anything but a list of numbers."""
    value = json.loads(text)
    if not isinstance(value, list) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise ValueError(f"not a JSON list of numbers: {text[:80]!r}")
    return [float(v) for v in value]


def summarise_scores(scores: Sequence[float]) -> tuple[float, float, float]:
    """Mean, population variance (``ddof = 0``, as published) and standard deviation; NaN when empty."""
    if len(scores) == 0:
        return math.nan, math.nan, math.nan
    values = np.asarray(scores, dtype=float)
    mean = float(values.mean())
    var = float(((values - mean) ** 2).mean())
    return mean, var, math.sqrt(var)


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
    grouped = values.groupby([scored[system_column], scored["argument_id"]], sort=True)
    moments = pd.DataFrame({"mean": grouped.mean(), "var": grouped.var(ddof=0), "lists": grouped.agg(list)})
    out = counts.join(moments, how="left").reset_index().rename(columns={system_column: "system"})
    out["scores"] = [scores_to_json(v) if isinstance(v, list) else "[]" for v in out["lists"]]
    out["std"] = np.sqrt(out["var"])
    out["prob_na"] = out["na_count"] / out["n_repetitions"]
    out = out[STATS_COLUMNS]
    return out.astype({"na_count": "int64", "invalid_count": "int64", "n_repetitions": "int64"})
