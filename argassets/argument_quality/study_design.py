"""Study A's next pairwise study: which Webis arguments to compare, and how the experts' own
study (the pilot) says how many judgments a pair needs.

Arguments are compared only within their topic (as the corpus does). Pairs are drawn at random
(``pairs_per_argument`` per argument, on average) or as round 0 of the platform's adaptive
design over every within-topic pair (:func:`~argassets.platform.design.adaptive.plan_round`; its
later rounds need the first round's results). The pilot is the expert comparisons of one
dimension: the spread of their BT strengths net of estimation error, and their share of ties.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from argassets.argument_quality.prompts import DIMENSION_ADVERBS, DIMENSIONS
from argassets.platform.design.adaptive import AdaptiveSettings, ComparisonGraph, plan_round
from argassets.platform.design.simulation import AnnotatorPool, pool_from_pilot
from argassets.platform.design.tasks import Question
from argassets.platform.pairwise.bradley_terry import fit_strengths
from argassets.platform.pairwise.labels import encode_labels
from argassets.platform.pairwise.matrices import count_matrices
from argassets.platform.pairwise.scores import DEFAULT_SETTINGS

__all__ = ["QUESTIONS", "argument_key", "design_pairs", "expert_pilot", "within_topic_candidates"]

#: One question per quality dimension, answered A, B or Tie (the experts' labels).
QUESTIONS: tuple[Question, ...] = tuple(
    Question(
        name=dimension,
        prompt=f"Which argument is {DIMENSION_ADVERBS[dimension]} stronger?",
        labels={"A": "Argument A", "B": "Argument B", "Tie": "Equally strong"},
    )
    for dimension in DIMENSIONS
)


def argument_key(topic: int, discussion: int, argument: int) -> str:
    """An argument's id in a design (a (discussion, argument) pair can occur in two topics)."""
    return f"t{int(topic)}-d{int(discussion)}-a{int(argument)}"


def within_topic_candidates(arguments: pd.DataFrame) -> pd.DataFrame:
    """Every pair of argumentative texts of one topic: ``pair_id``, ``group`` (topic), ``item_a``, ``item_b``."""
    keep = arguments[arguments["is_argument"].astype(bool)]
    rows = []
    for topic, group in keep.groupby("topic_id", sort=True):
        keys = sorted(
            argument_key(topic, d, a) for d, a in zip(group["discussion_id"], group["argument_id"], strict=True)
        )
        rows += [(int(topic), a, b) for a, b in combinations(keys, 2)]
    frame = pd.DataFrame(rows, columns=["group", "item_a", "item_b"])
    frame.insert(0, "pair_id", np.arange(len(frame), dtype=np.int64))
    return frame


def design_pairs(candidates: pd.DataFrame, method: str, pairs_per_argument: float, seed: int) -> pd.DataFrame:
    """``item_1``, ``item_2``, ``topic_id``, ``kind``: about ``pairs_per_argument`` pairs per argument."""
    n_arguments = len(pd.unique(pd.concat([candidates["item_a"], candidates["item_b"]])))
    wanted = min(len(candidates), int(round(pairs_per_argument * n_arguments / 2)))
    if method == "random":
        chosen = np.random.default_rng(seed).choice(len(candidates), size=wanted, replace=False)
    elif method == "adaptive":
        settings = AdaptiveSettings(first_round=wanted / len(candidates), seed=seed)
        plan = plan_round(candidates, pd.DataFrame(columns=["pair_id", "round", "label"]), settings)
        chosen = np.asarray(plan.pair_ids, dtype=np.int64)
    else:
        raise ValueError(f"pair method must be 'random' or 'adaptive', got {method!r}")
    picked = candidates.iloc[np.sort(chosen)]
    return pd.DataFrame(
        {
            "item_1": picked["item_a"].to_numpy(),
            "item_2": picked["item_b"].to_numpy(),
            "topic_id": picked["group"].to_numpy(np.int64),
            "kind": method,
        }
    )


def expert_pilot(comparisons: pd.DataFrame, dimension: str) -> AnnotatorPool:
    """Simulated annotators like the experts of ``dimension`` (the platform's BT settings)."""
    rows = comparisons[comparisons["dimension"] == dimension]
    if rows.empty:
        raise ValueError(f"no expert comparisons of dimension {dimension!r}")
    candidates = pd.DataFrame(
        {
            "pair_id": rows["comparison_id"].to_numpy(),
            "group": rows["topic_id"].to_numpy(),
            "item_a": [
                argument_key(t, d, a)
                for t, d, a in zip(rows["topic_id"], rows["discussion_id_a"], rows["argument_id_a"], strict=True)
            ],
            "item_b": [
                argument_key(t, d, a)
                for t, d, a in zip(rows["topic_id"], rows["discussion_id_b"], rows["argument_id_b"], strict=True)
            ],
        }
    )
    graph = ComparisonGraph.build(candidates)
    codes = encode_labels(rows["label"])
    counts = count_matrices(
        graph.width, graph.group, graph.n_groups, graph.item_a, graph.item_b, codes, DEFAULT_SETTINGS.ties
    )
    theta = fit_strengths(counts, DEFAULT_SETTINGS.alpha)
    return pool_from_pilot(theta, counts, float((codes == 2).mean()))
