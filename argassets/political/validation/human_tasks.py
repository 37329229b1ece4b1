"""The three annotation tasks of Study B's human studies, arranged for the replacement tests.

``pointwise`` (is the argument political? 1,000 arguments, 3 labels each), ``pairwise-right``
("which is more right-wing?") and ``pairwise-left`` ("which is more left-wing?"; 934 pairs, 3 labels
each per framing). Each task holds its items, the label matrix, the labels' file rows, how its rows
cluster (pointwise: the argument's debate; pairwise: the pair's two arguments) and turns every
system's predictions into the task's labels (:mod:`~.system_labels`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from argassets.political.validation.annotators import (
    EPSILONS,
    MIN_ITEMS_PER_ANNOTATOR,
    HeldOutRows,
    alternative_annotator_test,
    annotator_matrix,
    epsilon_column,
    held_out_rows,
    replacement_table,
)
from argassets.political.validation.cluster_bootstrap import LEVEL, N_RESAMPLES, SEED, ClusterDesign
from argassets.political.validation.clustered import Clustering
from argassets.political.validation.system_labels import first_is_righter, pairwise_labels, pointwise_labels

TASKS = ("pointwise", "pairwise-right", "pairwise-left")


@dataclass(frozen=True)
class AnnotationTask:
    """One task: ``items`` (meta_ids, or ``id1|id2``), its ``annotations`` (rows of
    :func:`~argassets.political.human_studies.read_annotations`), ``labels`` and ``source_rows``
    (:func:`~.annotators.annotator_matrix`), ``item_clusters`` (``(items, 1)`` debates or
    ``(items, 2)`` arguments) and the unit's name."""

    name: str
    items: tuple[str, ...]
    annotations: pd.DataFrame
    labels: np.ndarray
    source_rows: np.ndarray
    item_clusters: np.ndarray
    unit: str
    arguments: tuple[str, ...] = ()  # pairwise: the study's arguments, in score order
    pair_index: np.ndarray | None = None  # pairwise: (pairs, 2) indices into ``arguments``

    def row_clustering(self, rows: HeldOutRows) -> Clustering:
        """The clustering of the held-out rows: each row takes its item's cluster(s)."""
        return self.clustering_of(rows.item)

    def clustering_of(self, item_index: np.ndarray) -> Clustering:
        """The clustering of rows that each belong to the item ``item_index`` names."""
        codes = self.item_clusters[np.asarray(item_index)]
        return Clustering(ClusterDesign.of(*codes.T), self.unit)

    def system_labels(self, values: Sequence[Any]) -> np.ndarray:
        """A system's label per item: from P(NA) per argument (pointwise) or score lists per argument (pairwise)."""
        if self.name == "pointwise":
            return pointwise_labels(np.array([np.nan if v is None else float(v) for v in values]))
        assert self.pair_index is not None
        framing = self.name.removeprefix("pairwise-")
        return pairwise_labels(first_is_righter(list(values), self.pair_index), framing)

    def held_out(self, systems: Mapping[str, tuple[str, Sequence[Any]]]) -> HeldOutRows:
        """:func:`~.annotators.held_out_rows` of every system (in ``systems`` order)."""
        predictions = np.vstack([self.system_labels(values) for _, values in systems.values()])
        return held_out_rows(self.labels, predictions)


def pointwise_task(annotations: pd.DataFrame, items: Sequence[str], debates: Mapping[str, str]) -> AnnotationTask:
    """The pointwise task over ``items`` (meta_ids in study order), clustered by each argument's debate.

    Raises
    ------
    ValueError
        An item without a debate, and every error of :func:`~.annotators.annotator_matrix`.
    """
    rows = annotations[annotations["task"] == "pointwise"].reset_index(drop=True)
    labels, source = annotator_matrix(rows, list(items))
    missing = [item for item in items if item not in debates]
    if missing:
        raise ValueError(
            f"pointwise item {missing[0]!r} has no debate (political_study_items / political_kb_arguments)"
        )
    clusters = np.array([[debates[item]] for item in items], dtype=object)
    return AnnotationTask("pointwise", tuple(items), rows, labels, source, clusters, "debate")


def pairwise_task(
    annotations: pd.DataFrame, arguments: Sequence[str], pairs: pd.DataFrame, framing: str
) -> AnnotationTask:
    """One framing of the pairwise task over the study's ``pairs`` (``id1``, ``id2``), clustered by argument."""
    name = f"pairwise-{framing}"
    rows = annotations[annotations["task"] == name].reset_index(drop=True)
    items = list(pairs["id1"] + "|" + pairs["id2"])
    labels, source = annotator_matrix(rows, items)
    position = {meta_id: i for i, meta_id in enumerate(arguments)}
    index = np.array([(position[a], position[b]) for a, b in zip(pairs["id1"], pairs["id2"], strict=True)])
    clusters = pairs[["id1", "id2"]].to_numpy(dtype=object)
    return AnnotationTask(name, tuple(items), rows, labels, source, clusters, "argument", tuple(arguments), index)


#: The test each task gets, with the reason, when the published test cannot be run.
ITEM_LEVEL_TEST = "leave-one-annotator-out (item level)"
PAPER_TEST = "alternative annotator test"


def choose_test(annotations: pd.DataFrame, min_items: int = MIN_ITEMS_PER_ANNOTATOR) -> tuple[str, str]:
    """The published test when at least three annotators have ``min_items`` items each (the paper's
    conditions: three annotators, 30 items for its t-test), else the item-level test; and why."""
    per_annotator = annotations.groupby("participant_id").size()
    eligible = int((per_annotator >= min_items).sum())
    largest = int(per_annotator.max()) if len(per_annotator) else 0
    if eligible >= 3:
        return PAPER_TEST, f"{eligible} annotators have at least {min_items} items"
    return ITEM_LEVEL_TEST, (
        f"the published test needs {min_items} items per annotator for its per-annotator t-test; "
        f"{len(per_annotator)} participants labelled at most {largest} each"
    )


def _paper_rows(
    task: AnnotationTask, systems: Mapping[str, tuple[str, Sequence[Any]]], epsilons: Sequence[float]
) -> pd.DataFrame:
    """The published test per system: advantage probability and the verdict per margin."""
    rows = []
    for name, (kind, values) in systems.items():
        labels = task.system_labels(values)
        predictions = {item: label for item, label in zip(task.items, labels, strict=True) if np.isfinite(label)}
        verdicts = {eps: alternative_annotator_test(task.annotations, predictions, eps) for eps in epsilons}
        passed = [eps for eps, result in verdicts.items() if result.passed]
        first = next(iter(verdicts.values()))
        row: dict[str, Any] = {"system": name, "kind": kind, "n_items": len(predictions)}
        row |= {"advantage_probability": first.advantage_probability, "min_epsilon": min(passed) if passed else np.nan}
        row |= {epsilon_column(eps): result.passed for eps, result in verdicts.items()}
        rows.append(row)
    return pd.DataFrame(rows)


def task_replacement(
    task: AnnotationTask,
    systems: Mapping[str, tuple[str, Sequence[Any]]],
    epsilons: Sequence[float] = EPSILONS,
    level: float = LEVEL,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    """Can each system replace an annotator of ``task``? One row per system and a ``human:rest`` row.

    Columns: ``task``, ``test`` and ``test_reason`` (:func:`choose_test`), ``clustering`` (the
    interval's unit and method), then :func:`~.annotators.replacement_table`'s columns.
    """
    test, reason = choose_test(task.annotations)
    if test == PAPER_TEST:
        table, clustering = _paper_rows(task, systems, epsilons), "per-annotator t-tests, Benjamini-Yekutieli"
    else:
        rows = task.held_out(systems)
        row_clustering = task.row_clustering(rows)
        names = [(name, kind) for name, (kind, _) in systems.items()]
        table = replacement_table(rows, names, row_clustering, epsilons, level, n_resamples, seed)
        clustering = row_clustering.method
    verdicts = [epsilon_column(eps) for eps in epsilons]
    table[verdicts] = table[verdicts].astype("boolean")  # the human row has none: stored as NULL, not text
    return table.assign(task=task.name, test=test, test_reason=reason, clustering=clustering)
