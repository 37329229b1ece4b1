"""A design replayed on a complete set of labels: how many comparisons it needs.

Every candidate pair already has its label(s) (an expert study, or a judge that judged the whole
partition). A design reveals them round by round, as if they were being judged; after each round
the strengths are fitted on what was revealed and compared with the strengths of the full data by
Spearman's rho (items pooled over groups, strengths centred per group, as Study A compares its
scores). Both designs are :func:`~.adaptive.plan_round` with its stopping rules switched off so the
replay sees every round: ``adaptive`` by information gain, ``random`` with ``selection="random"``
(uniform rounds of the same sizes); the figures each stopping rule would read are recorded beside
each round.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from argassets.platform.design.adaptive import AdaptiveSettings, plan_round, round_scores

__all__ = ["DESIGNS", "comparisons_to_target", "full_strengths", "replay_design"]

Design = Literal["random", "adaptive"]
DESIGNS: tuple[str, ...] = ("random", "adaptive")

TRAJECTORY_COLUMNS = [
    "round",
    "judged_pairs",
    "share",
    "spearman",
    "stability",
    "interval_width",
    "predicted_agreement",
]


def full_strengths(candidates: pd.DataFrame, labels: pd.DataFrame, settings: AdaptiveSettings) -> pd.DataFrame:
    """The strengths of the complete data (every label revealed)."""
    return round_scores(candidates, labels.assign(round=0), settings)


def _revealed(labels: pd.DataFrame, rounds: dict[object, int]) -> pd.DataFrame:
    """The labels of the pairs revealed so far, each with its round."""
    shown = labels[labels["pair_id"].isin(rounds.keys())]
    return shown.assign(round=shown["pair_id"].map(rounds).astype(np.int64))


def replay_design(
    candidates: pd.DataFrame,
    labels: pd.DataFrame,
    design: Design,
    settings: AdaptiveSettings,
    target: float,
    full: pd.DataFrame | None = None,
    beyond: float = 0.0,
) -> pd.DataFrame:
    """Reveal ``labels`` (``pair_id``, ``label``) round by round until Spearman's rho with the
    full-data strengths reaches ``target`` and ``beyond`` more of the pool is revealed (or
    everything is).

    Returns :data:`TRAJECTORY_COLUMNS`, one row per round after it was revealed; the stopping
    figures of a row are those :func:`plan_round` computes on that state.
    """
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    unknown = set(labels["pair_id"]) - set(candidates["pair_id"])
    if unknown:
        raise ValueError(f"labels for pair {sorted(map(str, unknown))[0]!r}, which is not a candidate")
    full = full_strengths(candidates, labels, settings) if full is None else full
    selection = "information" if design == "adaptive" else "random"
    open_settings = dataclasses.replace(
        settings, selection=selection, stability=None, interval_width=None, agreement=None
    )
    total = len(candidates)
    revealed: dict[object, int] = {}
    rows: list[list] = []
    reached: float | None = None
    while True:
        plan = plan_round(candidates, _revealed(labels, revealed), open_settings)
        if rows:
            rows[-1][4:] = [plan.stability, plan.interval_width, plan.predicted_agreement]
        if not plan.pair_ids or (reached is not None and len(revealed) / total >= reached + beyond):
            break
        revealed.update({p: plan.round for p in plan.pair_ids})
        scores = round_scores(candidates, _revealed(labels, revealed), settings)
        rho = float(stats.spearmanr(scores["strength"], full["strength"])[0])
        rows.append([plan.round, len(revealed), len(revealed) / total, rho, math.nan, math.nan, math.nan])
        if reached is None and rho >= target:
            reached = len(revealed) / total
    return pd.DataFrame(rows, columns=TRAJECTORY_COLUMNS)


def comparisons_to_target(trajectory: pd.DataFrame, target: float) -> int | None:
    """Pairs revealed when rho first reached ``target``; ``None`` when it never did."""
    met = trajectory[trajectory["spearman"] >= target]
    return int(met["judged_pairs"].iloc[0]) if len(met) else None
