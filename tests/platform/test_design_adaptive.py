"""Adaptive pairwise judging: rounds by information gain, stopping rules, and the replay."""

import dataclasses
import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from argassets.platform.design.adaptive import AdaptiveSettings, plan_round, round_scores
from argassets.platform.design.replay import comparisons_to_target, full_strengths, replay_design

EMPTY = pd.DataFrame(columns=["pair_id", "round", "label"])


def _partition(
    groups: int = 3, items: int = 30, noise: float = 0.0, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every within-group pair, and a label per pair from a latent score (BT noise ``noise``;
    0 = the better item always wins, like a length baseline)."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for g in range(groups):
        score = rng.normal(size=items) * 2.0
        for i, j in combinations(range(items), 2):
            pair = f"g{g}-{i}-{j}"
            rows.append((pair, g, f"g{g}i{i}", f"g{g}i{j}"))
            if noise == 0:
                first = score[i] > score[j]
            else:
                first = rng.random() < 1 / (1 + np.exp(-(score[i] - score[j]) / noise))
            labels.append((pair, "A" if first else "B"))
    return pd.DataFrame(rows, columns=["pair_id", "group", "item_a", "item_b"]), pd.DataFrame(
        labels, columns=["pair_id", "label"]
    )


def _judge(candidates: pd.DataFrame, labels: pd.DataFrame, judged: pd.DataFrame, plan) -> pd.DataFrame:
    new = labels[labels["pair_id"].isin(plan.pair_ids)].assign(round=plan.round)
    return pd.concat([judged, new[["pair_id", "round", "label"]]], ignore_index=True)


def test_round_zero_covers_every_item_and_is_fixed_by_the_seed() -> None:
    candidates, _ = _partition()
    settings = AdaptiveSettings(first_round=0.05, cover=1, seed=3)
    plan = plan_round(candidates, EMPTY, settings)
    assert plan.round == 0 and not plan.stop
    chosen = candidates[candidates["pair_id"].isin(plan.pair_ids)]
    assert len(chosen) >= math.ceil(0.05 * len(candidates))
    assert set(chosen["item_a"]) | set(chosen["item_b"]) == set(candidates["item_a"]) | set(candidates["item_b"])
    assert plan_round(candidates, EMPTY, settings).pair_ids == plan.pair_ids
    assert plan_round(candidates, EMPTY, dataclasses.replace(settings, seed=4)).pair_ids != plan.pair_ids


def test_later_rounds_take_open_pairs_spread_over_the_items() -> None:
    candidates, labels = _partition(noise=1.0)
    settings = AdaptiveSettings(first_round=0.1, round_size=0.02, seed=0)
    judged = _judge(candidates, labels, EMPTY, plan_round(candidates, EMPTY, settings))
    plan = plan_round(candidates, judged, settings)
    assert plan.round == 1 and len(plan.pair_ids) == math.ceil(0.02 * len(candidates))
    assert not set(plan.pair_ids) & set(judged["pair_id"])
    chosen = candidates[candidates["pair_id"].isin(plan.pair_ids)]
    uses = pd.concat([chosen["item_a"], chosen["item_b"]]).value_counts()
    assert uses.max() == 1  # 27 pairs for 90 items: one pair per item before any gets two
    assert plan.share_judged == pytest.approx(judged["pair_id"].nunique() / len(candidates))


def test_stopping_rules_say_why() -> None:
    candidates, labels = _partition(groups=1, items=12)
    everything = labels.assign(round=[0] * 30 + [1] * (len(labels) - 30))
    assert plan_round(candidates, everything, AdaptiveSettings()).reason == "exhausted"
    half = everything.iloc[:40]
    budget = plan_round(candidates, half, AdaptiveSettings(max_share=0.5, stability=None))
    assert budget.stop and budget.reason == "budget" and budget.pair_ids == ()
    stable = plan_round(candidates, half, AdaptiveSettings(stability=-1.0))
    assert stable.reason == "rank_stable" and stable.stability > 0.5
    wide = plan_round(candidates, half, AdaptiveSettings(stability=None, interval_width=100.0))
    assert wide.reason == "interval_width" and wide.interval_width < 100
    agreed = plan_round(candidates, half, AdaptiveSettings(stability=None, agreement=0.0))
    assert agreed.reason == "predicted_agreement" and 0 <= agreed.predicted_agreement <= 1
    going = plan_round(candidates, half, AdaptiveSettings(stability=None))
    assert not going.stop and going.reason == "" and going.pair_ids


def test_bad_inputs_are_named() -> None:
    candidates, labels = _partition(groups=1, items=5)
    with pytest.raises(ValueError, match="judged row 0: pair 'nope' is not a candidate"):
        plan_round(candidates, pd.DataFrame({"pair_id": ["nope"], "round": [0], "label": ["A"]}))
    with pytest.raises(ValueError, match="judged row 1: round -1"):
        plan_round(candidates, labels.head(2).assign(round=[0, -1]))
    with pytest.raises(ValueError, match="pair_id 'g0-0-1' occurs twice"):
        plan_round(pd.concat([candidates, candidates.head(1)]), EMPTY)
    with pytest.raises(ValueError, match="row 0: label 'C'"):
        plan_round(candidates, pd.DataFrame({"pair_id": ["g0-0-1"], "round": [0], "label": ["C"]}))


def test_adaptive_reaches_the_full_ranking_with_fewer_comparisons_than_random_on_clean_labels() -> None:
    candidates, labels = _partition(groups=3, items=30, noise=0.0, seed=2)
    settings = AdaptiveSettings(first_round=0.05, round_size=0.025, cover=1, seed=0)
    full = full_strengths(candidates, labels, settings)
    needed = {
        design: comparisons_to_target(replay_design(candidates, labels, design, settings, 0.95, full), 0.95)
        for design in ("adaptive", "random")
    }
    assert needed["adaptive"] is not None and needed["random"] is not None
    assert needed["adaptive"] < 0.8 * needed["random"], needed


def test_the_predicted_agreement_with_the_complete_partition_is_calibrated_for_random_rounds() -> None:
    candidates, labels = _partition(groups=3, items=40, noise=1.5, seed=5)
    settings = AdaptiveSettings(first_round=0.05, round_size=0.05, seed=1)
    trajectory = replay_design(candidates, labels, "random", settings, target=0.99)
    later = trajectory[(trajectory["share"] >= 0.2) & trajectory["predicted_agreement"].notna()]
    assert len(later) >= 8
    error = (later["predicted_agreement"] - later["spearman"]).abs()
    assert error.mean() < 0.05, later[["share", "spearman", "predicted_agreement"]]


def test_round_scores_report_every_item_with_its_judgments() -> None:
    candidates, labels = _partition(groups=2, items=6)
    scores = round_scores(candidates, labels.assign(round=0))
    assert len(scores) == 12 and (scores["n_judgments"] == 5).all()
    assert scores.groupby("group")["strength"].sum().abs().max() < 1e-6
