"""Majority votes of Study A: the protocol's rule over the 3 runs of every configuration and comparison.

The votes themselves are the platform's pairwise core (:mod:`argassets.platform.pairwise.votes`);
this module names Study A's keys: a configuration (model, strategy, dimension) and a comparison,
with the comparison's topic carried along. Labels are coded ``A`` = 0, ``B`` = 1, ``Tie`` = 2 and
a missing or invalid verdict = -1 (:data:`MISSING`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.platform.pairwise.expected import (
    DISTINCT_COLUMNS,
    MAJORITY_PROBABILITY_COLUMNS,
    PROBABILITY_COLUMNS,
    expected_votes,
)
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
    "EXPECTED_VOTE_COLUMNS",
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
#: Columns of the majority-vote table from the label probabilities (NaN without them): the
#: distribution of the majority and of the number of distinct labels among the runs.
EXPECTED_VOTE_COLUMNS = [*MAJORITY_PROBABILITY_COLUMNS, *DISTINCT_COLUMNS]


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
        (label strings, ``None`` when missing), then :data:`EXPECTED_VOTE_COLUMNS` from the runs'
        ``p_a, p_b, p_tie`` (NaN where the judgments carry none; see
        :mod:`argassets.platform.pairwise.expected`), sorted by those keys.

    Raises
    ------
    VotingError
        A missing column, a negative run index, a label outside A/B/Tie, the same run of the
        same configuration and comparison twice, or label probabilities that are not a
        distribution; the message names the row.
    """
    keys = [model_column, *MAJORITY_KEY[1:]]
    names = {model_column: "model"}
    votes = pairwise_majority_votes(judgments, keys, carry_columns=["topic_id"], names=names, min_votes=min_votes)
    votes = votes.astype({"topic_id": "int64"})
    if votes.empty or not set(PROBABILITY_COLUMNS) <= set(judgments.columns):
        return votes.assign(**{c: np.nan for c in EXPECTED_VOTE_COLUMNS})
    expected = expected_votes(judgments, keys, names=names, min_votes=min_votes)
    return votes.merge(expected, on=MAJORITY_KEY, how="left", validate="one_to_one")
