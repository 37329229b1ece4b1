"""Whose judgment does a system match? Agreement with annotators grouped by stated affiliation.

Every label of a participant who stated Left, Centre or Right is one row; a system agrees with it
when it gives the same label. Per system and group: the share of that group's labels it agrees
with (``agreement``); between two groups the difference (``difference``) and the difference less
the same difference of the *other annotators* (``difference_vs_humans``): a system that agrees
less with Right annotators only because everybody does shows a ``difference`` but no
``difference_vs_humans``. The human rows: ``human:rest`` (a label against the item's other
annotators, any group) and ``human:<group>`` (against the item's annotators of that group), so the
``agreement`` rows of ``human:Left`` are the groups against each other.

Intervals are paired (one clustered resampling for every row of a task, :mod:`~.clustered`); the
test of a difference is the two-sided normal test with the same clustered standard error (the
replicates' for the debates' bootstrap, the dyadic one for pairs), its p-values adjusted over a
task's tests (Holm, or Benjamini-Hochberg). A permutation of the affiliations among participants
would test the same null exactly, but with some 300 tests a task its p-values (no smaller than
1 / (permutations + 1)) could not survive any adjustment (docs/human_replacement.md).

Participants whose demographic fields read ``CONSENT_REVOKED`` are left out of every row here
(their affiliation is unknown and is not to be inferred); their labels stay in the paper's
figures and in the replacement test, which do not use the demographics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from argassets.political.human_studies import AFFILIATIONS, CONSENT_REVOKED
from argassets.political.validation.cluster_bootstrap import LEVEL, N_RESAMPLES, SEED
from argassets.political.validation.clustered import Clustering, clustered_intervals
from argassets.political.validation.human_tasks import AnnotationTask

GROUP_PAIRS: tuple[tuple[str, str], ...] = (("Left", "Centre"), ("Left", "Right"), ("Centre", "Right"))
#: The adjustments on offer for a task's p-values.
ADJUSTMENTS = {"holm": "holm", "bh": "fdr_bh"}

AFFILIATION_COLUMNS = [
    "task",
    "system",
    "kind",
    "measure",
    "group",
    "estimate",
    "low",
    "high",
    "n_rows",
    "n_participants",
    "p_value",
    "p_adjusted",
]


def kept_annotations(task: AnnotationTask) -> tuple[pd.DataFrame, int, int]:
    """The task's labels by participants who stated an affiliation, with ``item_index``; and how many
    labels and participants were left out for ``CONSENT_REVOKED``."""
    rows = task.annotations
    revoked = rows["affiliation"] == CONSENT_REVOKED
    position = {item: i for i, item in enumerate(task.items)}
    kept = rows[~revoked].assign(item_index=lambda f: f["item"].map(position).astype("int64"))
    return kept.reset_index(drop=True), int(revoked.sum()), int(rows.loc[revoked, "participant_id"].nunique())


def _human_agreement(kept: pd.DataFrame, others_group: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Per label: the share of the item's other kept annotators (of ``others_group``, or any) who
    gave the same label, and whether there was any."""
    item, label = kept["item_index"].to_numpy(), kept["label"].to_numpy()
    same = item[:, None] == item[None, :]
    np.fill_diagonal(same, False)
    if others_group is not None:
        same &= (kept["affiliation"].to_numpy() == others_group)[None, :]
    others = same.sum(axis=1)
    agree = (same & (label[:, None] == label[None, :])).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(others > 0, agree / np.maximum(others, 1), 0.0), others > 0


def _row_values(
    task: AnnotationTask, kept: pd.DataFrame, systems: Mapping[str, tuple[str, Sequence[Any]]]
) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    """Per system-like row (systems, ``human:rest``, ``human:<group>``): agreement per kept label and presence."""
    item, label = kept["item_index"].to_numpy(), kept["label"].to_numpy()
    names, values, present = [], [], []
    for name, (kind, predictions) in systems.items():
        answer = task.system_labels(predictions)[item]
        names.append((name, kind))
        values.append(np.where(np.isnan(answer), 0.0, (answer == label).astype(float)))
        present.append(~np.isnan(answer))
    for others in (None, *AFFILIATIONS):
        agreement, has = _human_agreement(kept, others)
        names.append((f"human:{others or 'rest'}", "human"))
        values.append(agreement)
        present.append(has)
    return names, np.vstack(values), np.vstack(present)


def _outputs(values: np.ndarray, present: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One output per (system-like row, group): the row's values on that group's labels."""
    masks = [present[s] & (groups == g) for s in range(values.shape[0]) for g in AFFILIATIONS]
    return np.repeat(values, len(AFFILIATIONS), axis=0), np.vstack(masks)


def _contrasts(n_rows: int, rest_row: int) -> tuple[np.ndarray, list[tuple[int, str, str]]]:
    """Weights of every row's group differences, and of their differences to ``human:rest``'s."""
    width = n_rows * len(AFFILIATIONS)
    weights, labels = [], []
    for measure in ("difference", "difference_vs_humans"):
        for s in range(n_rows):
            if measure == "difference_vs_humans" and s >= rest_row:
                continue  # systems only: the human rows follow them
            for first, second in GROUP_PAIRS:
                w = np.zeros(width)
                a, b = AFFILIATIONS.index(first), AFFILIATIONS.index(second)
                w[s * 3 + a], w[s * 3 + b] = 1.0, -1.0
                if measure == "difference_vs_humans":
                    w[rest_row * 3 + a] -= 1.0
                    w[rest_row * 3 + b] += 1.0
                weights.append(w)
                labels.append((s, measure, f"{first}-{second}"))
    return np.vstack(weights), labels


def _intervals(
    outputs: np.ndarray,
    masks: np.ndarray,
    weights: np.ndarray,
    clustering: Clustering,
    level: float,
    n_resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Estimate, interval bounds and standard error of every output and contrast; NaN for an output
    without labels (e.g. a group that never shares an item with another of its own) and for the
    contrasts that use it."""
    filled = masks.any(axis=1)
    usable = ~(weights[:, ~filled] != 0).any(axis=1)
    intervals = clustered_intervals(
        outputs[filled], masks[filled], clustering, level, n_resamples, seed, weights[usable][:, filled]
    )
    kept = np.concatenate([filled, usable])
    results = []
    for values in (intervals.estimate, intervals.low, intervals.high, intervals.se):
        full = np.full(kept.size, np.nan)
        full[kept] = values
        results.append(full)
    return results[0], results[1], results[2], results[3]


def _described(
    names: list[tuple[str, str]],
    contrast_labels: list[tuple[int, str, str]],
    masks: np.ndarray,
    present: np.ndarray,
    kept: pd.DataFrame,
) -> pd.DataFrame:
    """What each output is: system, kind, measure, group (or pair of groups), output index ``k``,
    and the labels and participants behind it."""
    groups, participants = kept["affiliation"].to_numpy(), kept["participant_id"].to_numpy()
    rows = []
    for k, (s, group) in enumerate((s, g) for s in range(len(names)) for g in AFFILIATIONS):
        used = masks[k]
        rows.append((*names[s], "agreement", group, k, int(used.sum()), int(np.unique(participants[used]).size)))
    for j, (s, measure, pair) in enumerate(contrast_labels):
        first, second = (AFFILIATIONS.index(g) for g in pair.split("-"))
        used = present[s] & ((groups == first) | (groups == second))
        rows.append(
            (*names[s], measure, pair, len(masks) + j, int(used.sum()), int(np.unique(participants[used]).size))
        )
    return pd.DataFrame(rows, columns=["system", "kind", "measure", "group", "k", "n_rows", "n_participants"])


def affiliation_table(
    task: AnnotationTask,
    systems: Mapping[str, tuple[str, Sequence[Any]]],
    level: float = LEVEL,
    n_resamples: int = N_RESAMPLES,
    adjustment: str = "holm",
    seed: int = SEED,
) -> pd.DataFrame:
    """:data:`AFFILIATION_COLUMNS` for one task: agreement per group, the differences between groups
    with their p-values (systems and ``human:rest``), adjusted over the task (``holm`` or ``bh``)."""
    if adjustment not in ADJUSTMENTS:
        raise ValueError(f"adjustment {adjustment!r} is not one of {sorted(ADJUSTMENTS)}")
    kept, _, _ = kept_annotations(task)
    names, values, present = _row_values(task, kept, systems)
    outputs, masks = _outputs(values, present, kept["affiliation"].to_numpy())
    rest_row = len(systems)
    weights, contrast_labels = _contrasts(len(names), rest_row)
    clustering = task.clustering_of(kept["item_index"].to_numpy())
    estimate, low, high, se = _intervals(outputs, masks, weights, clustering, level, n_resamples, seed)
    table = _described(names, contrast_labels, masks, present, kept)
    k = table["k"].to_numpy()
    table["estimate"], table["low"], table["high"] = estimate[k], low[k], high[k]
    tested = (table["measure"] != "agreement") & (
        ~table["system"].str.startswith("human:") | (table["system"] == "human:rest")
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        p = 2 * stats.norm.sf(np.abs(estimate[k]) / se[k])
    table["p_value"] = np.where(tested, p, np.nan)
    table["p_adjusted"] = np.nan
    usable = tested & table["p_value"].notna()
    if usable.any():
        table.loc[usable, "p_adjusted"] = multipletests(table.loc[usable, "p_value"], method=ADJUSTMENTS[adjustment])[1]
    return table.assign(task=task.name)[AFFILIATION_COLUMNS]
