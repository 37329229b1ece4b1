"""Bradley-Terry strengths of Study A's arguments from pairwise labels, per topic.

Under the Bradley-Terry model, argument :math:`i` beats argument :math:`j` with probability
:math:`e^{\\theta_i} / (e^{\\theta_i} + e^{\\theta_j})`. Comparisons exist only within a topic, so
the topic is the stratum of the platform's pairwise BT scores
(:func:`argassets.platform.pairwise.scores.bt_scores`), and an argument is identified by
(topic, discussion, argument).

Ties enter the count matrix as :data:`TIE_HANDLING` says; ``win_each`` (a tie is one win for each
side, the default) reproduces the corpus's published scores best, see ``docs/aggregation.md``.
``bt_score`` is the log-strength centred to mean 0 within its topic, and ``bt_z`` the scores
z-normalised over all arguments of one configuration and dimension with the population standard
deviation, as the published scores are.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from argassets.platform.pairwise.matrices import TIE_HANDLING, TieHandling, comparison_components, count_matrices
from argassets.platform.pairwise.scores import DEFAULT_SETTINGS, BTSettings, PairColumns
from argassets.platform.pairwise.scores import bt_scores as pairwise_bt_scores

__all__ = [
    "BTSettings",
    "DEFAULT_SETTINGS",
    "ITEM_COLUMNS",
    "TIE_HANDLING",
    "TieHandling",
    "bt_scores",
    "comparison_components",
    "count_matrices",
]

#: Item key columns of one side of a comparison, and of the output.
ITEM_COLUMNS = ("topic_id", "discussion_id", "argument_id")

#: An argument on either side of a Webis comparison; comparisons stay within a topic.
ARGUMENT_PAIRS = PairColumns(
    item_a=("topic_id", "discussion_id_a", "argument_id_a"),
    item_b=("topic_id", "discussion_id_b", "argument_id_b"),
    item=ITEM_COLUMNS,
    stratum="topic_id",
)


def bt_scores(
    comparisons: pd.DataFrame,
    group_columns: Sequence[str],
    settings: BTSettings = DEFAULT_SETTINGS,
    *,
    label_column: str = "label",
    weight_column: str | None = None,
    n_bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """BT scores per group (e.g. configuration) and topic, z-normalised per group.

    Parameters
    ----------
    comparisons
        One row per labelled comparison: the ``group_columns``, ``topic_id``,
        ``discussion_id_a``, ``argument_id_a``, ``discussion_id_b``, ``argument_id_b`` and the
        label (``A``/``B``/``Tie``; rows with a missing label are ignored).
    group_columns
        Columns that identify one independent set of scores (e.g. ``["dimension"]`` for the
        experts, ``["model", "strategy", "dimension"]`` for LLM configurations).
    settings, label_column, weight_column, n_bootstrap, seed, confidence
        As :func:`argassets.platform.pairwise.scores.bt_scores` (the topic is the stratum).

    Returns
    -------
    pandas.DataFrame
        One row per (group, topic, argument) compared at least once: the group columns,
        ``topic_id, discussion_id, argument_id`` (``int64``), ``bt_score``, ``bt_z``,
        ``n_comparisons``, ``component`` and, with a bootstrap, ``ci_low, ci_high``.
    """
    scores = pairwise_bt_scores(
        comparisons,
        group_columns,
        settings,
        columns=ARGUMENT_PAIRS,
        label_column=label_column,
        weight_column=weight_column,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )
    return scores.astype({c: "int64" for c in ITEM_COLUMNS})
