"""A design replayed on a complete set of labels: how many comparisons it needs.

Every candidate pair already has its label(s) (an expert study, or a judge that judged the whole
partition). A design reveals them round by round, as if they were being judged; after each round
the strengths are fitted on what was revealed and compared with the strengths of the full data by
Spearman's rho (items pooled over groups, strengths centred per group, as Study A compares its
scores). ``random`` reveals uniformly random pairs in rounds of the same sizes as ``adaptive``
(:func:`~.adaptive.plan_round`, its stopping rules switched off so the replay sees every round;
the rank stability each round would have been judged on is recorded beside it).
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

TRAJECTORY_COLUMNS = ["round", "judged_pairs", "share", "spearman", "stability", "interval_width"]


def full_strengths(candidates: pd.DataFrame, labels: pd.DataFrame, settings: AdaptiveSettings) -> pd.DataFrame:
    """The strengths of the complete data (every label revealed)."""
    return round_scores(candidates, labels.assign(round=0), settings)


def _revealed(labels: pd.DataFrame, rounds: dict[object, int]) -> pd.DataFrame:
    """The labels of the pairs revealed so far, each with its round."""
    shown = labels[labels["pair_id"].isin(rounds.keys())]
    return shown.assign(round=shown["pair_id"].map(rounds).astype(np.int64))


def _random_round(pair_ids: np.ndarray, revealed: dict, size: int, rng: np.random.Generator) -> list:
    hidden = [p for p in pair_ids if p not in revealed]
    take = rng.permutation(len(hidden))[: min(size, len(hidden))]
    return [hidden[k] for k in take]


def replay_design(
    candidates: pd.DataFrame,
    labels: pd.DataFrame,
    design: Design,
    settings: AdaptiveSettings,
    target: float,
    full: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Reveal ``labels`` (``pair_id``, ``label``) round by round until Spearman's rho with the
    full-data strengths reaches ``target`` (or everything is revealed).

    Returns :data:`TRAJECTORY_COLUMNS`, one row per round after it was revealed.
    """
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    unknown = set(labels["pair_id"]) - set(candidates["pair_id"])
    if unknown:
        raise ValueError(f"labels for pair {sorted(map(str, unknown))[0]!r}, which is not a candidate")
    full = full_strengths(candidates, labels, settings) if full is None else full
    open_settings = dataclasses.replace(settings, stability=None, interval_width=None)
    pair_ids = candidates["pair_id"].to_numpy()
    total = len(pair_ids)
    rng = np.random.default_rng([settings.seed, 7])
    revealed: dict[object, int] = {}
    rows = []
    for round_index in range(total + 1):
        shown = _revealed(labels, revealed)
        plan = plan_round(candidates, shown, open_settings)
        if design == "adaptive":
            chosen = list(plan.pair_ids)
        else:
            share = settings.first_round if round_index == 0 else settings.round_size
            chosen = _random_round(pair_ids, revealed, math.ceil(share * total), rng)
        if not chosen:
            break
        revealed.update({p: round_index for p in chosen})
        scores = round_scores(candidates, _revealed(labels, revealed), settings)
        rho = float(stats.spearmanr(scores["strength"], full["strength"])[0])
        rows.append((round_index, len(revealed), len(revealed) / total, rho, plan.stability, plan.interval_width))
        if rho >= target:
            break
    return pd.DataFrame(rows, columns=TRAJECTORY_COLUMNS)


def comparisons_to_target(trajectory: pd.DataFrame, target: float) -> int | None:
    """Pairs revealed when rho first reached ``target``; ``None`` when it never did."""
    met = trajectory[trajectory["spearman"] >= target]
    return int(met["judged_pairs"].iloc[0]) if len(met) else None
