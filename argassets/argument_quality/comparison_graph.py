"""Properties of the expert comparison graph (components, self- and cross-topic comparisons)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.platform.pairwise.graphs import components


def comparison_components(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Connected components of the comparison graph of every topic and dimension.

    Nodes are the arguments that occur in a comparison, edges the comparisons (undirected). A
    Bradley-Terry model puts all arguments of a topic on one scale only when the graph is connected.

    Returns
    -------
    pandas.DataFrame
        ``topic_id, dimension, arguments, comparisons, components, largest_component``.
    """
    rows = []
    for (topic, dimension), group in comparisons.groupby(["topic_id", "dimension"], sort=True):
        side_a = list(zip(group["discussion_id_a"], group["argument_id_a"], strict=True))
        side_b = list(zip(group["discussion_id_b"], group["argument_id_b"], strict=True))
        nodes = {key: i for i, key in enumerate(sorted(set(side_a) | set(side_b)))}
        i = np.array([nodes[k] for k in side_a], dtype=np.int64)
        j = np.array([nodes[k] for k in side_b], dtype=np.int64)
        count, membership = components(len(nodes), i, j)
        largest = int(np.bincount(membership).max()) if len(nodes) else 0
        rows.append((int(topic), str(dimension), len(nodes), len(group), int(count), largest))
    return pd.DataFrame(
        rows,
        columns=["topic_id", "dimension", "arguments", "comparisons", "components", "largest_component"],
    )


def cross_topic_comparisons(comparisons: pd.DataFrame, arguments: pd.DataFrame) -> pd.DataFrame:
    """Comparisons whose arguments are not both arguments of the comparison's topic."""
    known = set(zip(arguments["topic_id"], arguments["discussion_id"], arguments["argument_id"], strict=True))
    in_a = [
        (t, d, a) in known
        for t, d, a in zip(
            comparisons["topic_id"], comparisons["discussion_id_a"], comparisons["argument_id_a"], strict=True
        )
    ]
    in_b = [
        (t, d, a) in known
        for t, d, a in zip(
            comparisons["topic_id"], comparisons["discussion_id_b"], comparisons["argument_id_b"], strict=True
        )
    ]
    bad = ~(np.array(in_a, dtype=bool) & np.array(in_b, dtype=bool))
    return comparisons[bad]


def self_comparisons(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Comparisons of an argument with itself."""
    same = (comparisons["discussion_id_a"] == comparisons["discussion_id_b"]) & (
        comparisons["argument_id_a"] == comparisons["argument_id_b"]
    )
    return comparisons[same]
