"""Study A's tables reduced to per-topic sufficient statistics, for the clustered intervals.

The unit resampled in Study A is the **topic** (docs/uncertainty.md): comparisons pair two
arguments of one topic, the BT scores are fitted within topics, and an argument takes part in
some twenty comparisons, so neither comparisons nor arguments are independent; topics are. Every
table here is keyed by configuration (model, strategy, dimension) and holds one slice per topic,
so that a bootstrap resample of topics is a weighted sum (:mod:`argassets.platform.stats`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.argument_quality.bradley_terry import ITEM_COLUMNS
from argassets.argument_quality.bt_scores import CONFIG_COLUMNS
from argassets.platform.pairwise.expected import DISTINCT_COLUMNS, MAJORITY_PROBABILITY_COLUMNS
from argassets.platform.pairwise.labels import LABELS, encode_labels
from argassets.platform.pairwise.votes import run_agreement_pattern
from argassets.platform.stats.cluster_metrics import ScoreClusters, coincidence_from_value_counts

__all__ = ["TOPIC", "ConfigurationTables", "Topics", "agreement_tables", "run_tables"]

TOPIC = "topic_id"
Key = tuple[str, str, str]


@dataclass(frozen=True)
class Topics:
    """The topics resampled (sorted ids) and the code of each."""

    ids: tuple[int, ...]

    @classmethod
    def of(cls, *frames: pd.DataFrame) -> Topics:
        ids = sorted({int(t) for frame in frames if TOPIC in frame.columns for t in frame[TOPIC].dropna().unique()})
        return cls(tuple(ids))

    def codes(self, values: pd.Series) -> np.ndarray:
        position = {t: i for i, t in enumerate(self.ids)}
        return np.array([position[int(t)] for t in values], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class ConfigurationTables:
    """One configuration's per-topic tables (``None`` where it has no such data).

    ``labels`` and ``expected``: ``(topics, 3, 3)`` confusion of its labels (rows) against the
    reference's (columns), sampled and expected; ``scores``: its BT z-scores against the
    reference scores; ``runs``: per topic the complete comparisons, those with 1, 2 and 3
    distinct labels, the comparisons with run probabilities and their sums
    (``(topics, 8)``), and the coincidence matrices of the runs as raters (``coincidence``).
    """

    topics_with_data: int
    labels: np.ndarray | None = None
    expected: np.ndarray | None = None
    scores: ScoreClusters | None = None
    runs: np.ndarray | None = None
    coincidence: np.ndarray | None = None


def _keys(frame: pd.DataFrame) -> list[Key]:
    return [tuple(str(v) for v in row) for row in frame[CONFIG_COLUMNS].itertuples(index=False, name=None)]  # type: ignore[misc]


def _per_group(
    groups: np.ndarray,
    topics: np.ndarray,
    cells: np.ndarray,
    n_cells: int,
    n_groups: int,
    n_topics: int,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    flat = (groups * n_topics + topics) * n_cells + cells
    counts = np.bincount(flat, weights=weights, minlength=n_groups * n_topics * n_cells)
    return counts.reshape(n_groups, n_topics, n_cells)


def _label_tables(
    majority: pd.DataFrame, reference_labels: pd.DataFrame, topics: Topics
) -> dict[Key, tuple[np.ndarray, np.ndarray | None, int]]:
    """Per configuration: per-topic confusion of its majority labels against ``reference_labels``
    (``dimension, comparison_id, reference_label``, and ``topic_id`` when the labels lack it),
    expected confusion (or ``None``), topics with data."""
    # A comparison's topic comes with the majority labels, else with the reference (an ensemble's labels).
    own_topic = TOPIC in majority.columns
    wanted = [*CONFIG_COLUMNS, "comparison_id", "majority_label", *([TOPIC] if own_topic else [])]
    probabilities = list(MAJORITY_PROBABILITY_COLUMNS)
    has_probabilities = set(probabilities) <= set(majority.columns)
    part = majority[wanted + (probabilities if has_probabilities else [])].astype({"comparison_id": str})
    keep = ["dimension", "comparison_id", "reference_label", *([] if own_topic else [TOPIC])]
    if not own_topic and TOPIC not in reference_labels.columns:
        raise ValueError("agreement intervals: neither the labels nor the reference labels carry topic_id")
    reference = reference_labels[keep].astype({"comparison_id": str})
    joined = part.merge(reference, on=["dimension", "comparison_id"], how="inner")
    if joined.empty:
        return {}
    codes, uniques = pd.MultiIndex.from_frame(joined[CONFIG_COLUMNS].astype(str)).factorize()
    groups, t = np.asarray(codes, dtype=np.int64), topics.codes(joined[TOPIC])
    mine = encode_labels(joined["majority_label"].reset_index(drop=True))
    theirs = encode_labels(joined["reference_label"].reset_index(drop=True))
    c, k, n = len(LABELS), len(uniques), len(topics)
    both = (mine >= 0) & (theirs >= 0)
    sampled = _per_group(groups[both], t[both], mine[both] * c + theirs[both], c * c, k, n).reshape(k, n, c, c)
    expected: np.ndarray | None = None
    if has_probabilities:
        dist = joined[probabilities].to_numpy(dtype=float)
        ok = np.isfinite(dist).all(axis=1) & (theirs >= 0)
        expected = np.stack(
            [_per_group(groups[ok], t[ok], theirs[ok], c, k, n, dist[ok, i]) for i in range(c)], axis=2
        )  # (k, topics, rater label, reference label)
    with_data = np.bincount(groups * n + t, minlength=k * n).reshape(k, n)
    out: dict[Key, tuple[np.ndarray, np.ndarray | None, int]] = {}
    for g, key in enumerate(_keys(uniques.to_frame(index=False, name=CONFIG_COLUMNS))):
        # As the report: expected figures over the comparisons that have probabilities, if any.
        expected_of = expected[g] if expected is not None and expected[g].sum() > 0 else None
        out[key] = (sampled[g], expected_of, int((with_data[g] > 0).sum()))
    return out


def _score_tables(scores: pd.DataFrame, reference_scores: pd.DataFrame, topics: Topics) -> dict[Key, ScoreClusters]:
    """Per configuration: its ``bt_z`` against ``reference_scores`` (``dimension``, item keys, ``reference_z``)."""
    joined = scores[[*CONFIG_COLUMNS, *ITEM_COLUMNS, "bt_z"]].merge(
        reference_scores[["dimension", *ITEM_COLUMNS, "reference_z"]], on=["dimension", *ITEM_COLUMNS], how="inner"
    )
    out = {}
    for key, part in joined.groupby(CONFIG_COLUMNS, sort=False):
        out[tuple(str(v) for v in key)] = ScoreClusters.build(
            part["bt_z"].to_numpy(dtype=float),
            part["reference_z"].to_numpy(dtype=float),
            topics.codes(part[TOPIC]),
            len(topics),
        )
    return out  # type: ignore[return-value]


def agreement_tables(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    reference_scores: pd.DataFrame,
    reference_labels: pd.DataFrame,
    topics: Topics,
) -> dict[Key, ConfigurationTables]:
    """Per configuration of ``majority``: the per-topic tables of its agreement with a reference.

    ``reference_scores``: ``dimension``, item keys, ``reference_z``; ``reference_labels``:
    ``dimension, comparison_id, reference_label``.
    """
    labels = _label_tables(majority, reference_labels, topics)
    score_tables = _score_tables(scores, reference_scores, topics)
    out = {}
    for key in sorted(set(labels) | set(score_tables)):
        sampled, expected, with_data = labels.get(key, (None, None, 0))
        table = score_tables.get(key)
        score_topics = int((table.moments[:, 0] > 0).sum()) if table is not None else 0
        out[key] = ConfigurationTables(max(with_data, score_topics), sampled, expected, table)
    return out


def run_tables(majority: pd.DataFrame, topics: Topics) -> dict[Key, ConfigurationTables]:
    """Per configuration: per-topic counts of the runs' agreement pattern and their coincidences."""
    run_columns = sorted(
        [c for c in majority.columns if c.startswith("label_run")], key=lambda c: int(c[len("label_run") :])
    )
    if majority.empty or not run_columns:
        return {}
    codes, uniques = pd.MultiIndex.from_frame(majority[CONFIG_COLUMNS].astype(str)).factorize()
    groups, t = np.asarray(codes, dtype=np.int64), topics.codes(majority[TOPIC])
    k, n = len(uniques), len(topics)
    runs = np.stack([encode_labels(majority[c].reset_index(drop=True)) for c in run_columns], axis=1)
    distinct = run_agreement_pattern(runs)
    complete = distinct > 0
    counts = _per_group(groups[complete], t[complete], distinct[complete].astype(np.int64), 4, k, n)
    counts[:, :, 0] = counts[:, :, 1:].sum(axis=2)  # complete comparisons per topic
    if set(DISTINCT_COLUMNS) <= set(majority.columns):
        probabilities = majority[list(DISTINCT_COLUMNS)].to_numpy(dtype=float)
    else:
        probabilities = np.full((len(majority), len(DISTINCT_COLUMNS)), np.nan)
    known = np.isfinite(probabilities).all(axis=1)
    expected = np.stack(
        [_per_group(groups[known], t[known], np.zeros(int(known.sum()), dtype=np.int64), 1, k, n)[:, :, 0]]
        + [
            _per_group(
                groups[known], t[known], np.zeros(int(known.sum()), dtype=np.int64), 1, k, n, probabilities[known, i]
            )[:, :, 0]
            for i in range(3)
        ],
        axis=2,
    )
    value_counts = np.stack([(runs == code).sum(axis=1) for code in range(len(LABELS))], axis=1)
    with_data = np.bincount(groups * n + t, minlength=k * n).reshape(k, n)
    out = {}
    for g, key in enumerate(_keys(uniques.to_frame(index=False, name=CONFIG_COLUMNS))):
        mine = groups == g
        coincidence = coincidence_from_value_counts(value_counts[mine], t[mine], n)
        out[key] = ConfigurationTables(
            int((with_data[g] > 0).sum()),
            runs=np.concatenate([counts[g], expected[g]], axis=1),
            coincidence=coincidence,
        )
    return out
