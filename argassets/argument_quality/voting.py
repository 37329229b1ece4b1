"""Majority votes of Study A: the protocol's rule over the 3 runs of every configuration and comparison.

The votes themselves are the platform's pairwise core (:mod:`argassets.platform.pairwise.votes`);
this module names Study A's keys: a configuration (model, strategy, dimension) and a comparison,
with the comparison's topic carried along. Labels are coded ``A`` = 0, ``B`` = 1, ``Tie`` = 2 and
a missing or invalid verdict = -1 (:data:`MISSING`).
"""

from __future__ import annotations

import pandas as pd

from argassets.platform.pairwise.labels import (
    LABELS,
    MISSING,
    VotingError,
    decode_labels,
    encode_labels,
    factorize_columns,
)
from argassets.platform.pairwise.votes import majority_of_runs, plurality_vote, run_agreement_pattern
from argassets.platform.pairwise.votes import majority_votes as pairwise_majority_votes

__all__ = [
    "LABELS",
    "MAJORITY_KEY",
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

#: Columns of the majority-vote table (the run label columns ``label_run<i>`` come after ``topic_id``).
MAJORITY_KEY = ["model", "strategy", "dimension", "comparison_id"]


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
    votes = pairwise_majority_votes(
        judgments,
        [model_column, *MAJORITY_KEY[1:]],
        carry_columns=["topic_id"],
        names={model_column: "model"},
        min_votes=min_votes,
    )
    return votes.astype({"topic_id": "int64"})
