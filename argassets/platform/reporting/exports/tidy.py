"""A judgments table in the tidy import format, so that an exported partition can be imported again.

The columns are those :mod:`argassets.platform.judging.engines.importer` reads: ``judge_model``,
the study's key columns, ``run``, ``raw_output`` (the stored model output, parsed again on import,
so the labels and scores come out the same) and, where the judge gave them, ``p_a, p_b, p_tie``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from argassets.platform.judging.engines.importer import PROBABILITY_COLUMNS


def tidy_judgments(judgments: pd.DataFrame, key_columns: Sequence[str], run_column: str = "run") -> pd.DataFrame:
    """The tidy rows of ``judgments`` (one row per judgment); ``run_column`` is the table's
    repetition column, written as ``run``."""
    needed = ["judge_model", *key_columns, run_column, "raw_output"]
    absent = [c for c in needed if c not in judgments.columns]
    if absent:
        raise ValueError(
            f"the judgments table lacks {', '.join(absent)} (has {', '.join(map(str, judgments.columns))})"
        )
    tidy = judgments[needed].rename(columns={run_column: "run"}).copy()
    tidy["run"] = tidy["run"].astype("int64")
    if set(PROBABILITY_COLUMNS) <= set(judgments.columns) and judgments[list(PROBABILITY_COLUMNS)].notna().any().any():
        tidy[list(PROBABILITY_COLUMNS)] = judgments[list(PROBABILITY_COLUMNS)].astype(float).to_numpy()
    return tidy.sort_values(["judge_model", *key_columns, "run"], kind="stable").reset_index(drop=True)
