"""The reliability battery's counts: triads, transitivity with ties, run agreement, ties, share intervals, flags."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from argassets.platform.pairwise.reliability import (
    flagged,
    preferences,
    repetition_counts,
    share_intervals,
    tie_counts,
    transitivity_counts,
    triads_of,
)
from argassets.platform.stats.intervals import BootstrapSettings


def test_triads_are_the_fully_judged_ones_within_a_cluster() -> None:
    # Cluster 0: a complete tournament of 5 items (10 triads); cluster 1: a path, no triad.
    pairs = list(itertools.combinations(range(5), 2))
    first = np.array([a for a, _ in pairs] + [10, 11])
    second = np.array([b for _, b in pairs] + [11, 12])
    cluster = np.array([0] * len(pairs) + [1, 1])
    triads = triads_of(first, second, cluster, what="test")
    assert len(triads) == 10
    assert set(triads.cluster) == {0}
    items = {frozenset(np.concatenate([first[p], second[p]])) for p in triads.pairs}
    assert items == {frozenset(t) for t in itertools.combinations(range(5), 3)}


def test_triads_refuse_a_pair_given_twice_or_an_item_with_itself() -> None:
    with pytest.raises(ValueError, match="corpus: cluster 3 has a pair of items judged twice"):
        triads_of(np.array([1, 2, 1]), np.array([2, 1, 3]), np.array([3, 3, 3]), what="corpus")
    with pytest.raises(ValueError, match="corpus: pair 1 pairs an item with itself"):
        triads_of(np.array([1, 2]), np.array([2, 2]), np.array([0, 0]), what="corpus")


def _cycle_counts(p_01: float, p_12: float, p_02: float) -> tuple[int, int]:
    """(WST violations, strict cycles) of the triad 0, 1, 2 given each pair's preference for its first item."""
    # Pairs given in mixed orientation, so the reversal bookkeeping is exercised.
    first, second = np.array([0, 2, 0]), np.array([1, 1, 2])
    preference = np.array([[p_01, 1.0 - p_12, p_02]])
    counts = transitivity_counts(preference, triads_of(first, second, np.zeros(3, dtype=int), what="t"), 1)
    assert counts["triads"][0, 0] == 1
    return int(counts["violations"][0, 0]), int(counts["cycles"][0, 0])


@pytest.mark.parametrize(
    ("p_01", "p_12", "p_02", "expected"),
    [
        (1.0, 1.0, 1.0, (0, 0)),  # 0 > 1 > 2 and 0 > 2: transitive
        (1.0, 1.0, 0.0, (1, 1)),  # 0 > 1 > 2 > 0: a strict cycle
        (0.5, 0.5, 0.5, (0, 0)),  # indifference everywhere
        (1.0, 0.5, 0.5, (1, 0)),  # 0 > 1, 1 ~ 2, 2 ~ 0: indifference is not transitive here
        (2 / 3, 2 / 3, 1 / 3, (1, 1)),  # majorities of three runs in a cycle
    ],
)
def test_weak_stochastic_transitivity_with_ties(
    p_01: float, p_12: float, p_02: float, expected: tuple[int, int]
) -> None:
    assert _cycle_counts(p_01, p_12, p_02) == expected


def test_an_unjudged_pair_leaves_its_triad_out() -> None:
    first, second = np.array([0, 1, 0]), np.array([1, 2, 2])
    counts = transitivity_counts(
        np.array([[1.0, 1.0, np.nan]]), triads_of(first, second, np.zeros(3, int), what="t"), 1
    )
    assert counts["triads"].sum() == 0 and counts["violations"].sum() == 0


def test_preferences_ties_and_run_agreement_from_codes() -> None:
    codes = np.array([[0, 0, 0], [0, 1, 2], [2, 2, -1], [-1, -1, -1]])
    np.testing.assert_allclose(preferences(codes), [1.0, 0.5, 0.5, np.nan])
    ties, valid = tie_counts(codes)
    assert ties.tolist() == [0, 1, 2, 0] and valid.tolist() == [3, 3, 2, 0]
    agree, complete = repetition_counts(codes)
    assert agree.tolist() == [1, 0, 0, 0] and complete.tolist() == [1, 1, 0, 0]
    assert repetition_counts(codes[:, :1])[1].sum() == 0  # one run measures nothing


def test_share_intervals_give_the_pooled_share_and_cover_it() -> None:
    rng = np.random.default_rng(3)
    den = rng.integers(20, 40, size=(2, 15)).astype(float)
    num = rng.binomial(den.astype(int), [[0.2], [0.7]]).astype(float)
    den[1, :], num[1, :] = 0, 0  # a row without data: no figure
    frame = share_intervals(num, den, ["a", "b"], BootstrapSettings(n_resamples=300), what="test")
    assert frame.loc[0, "estimate"] == pytest.approx(num[0].sum() / den[0].sum())
    assert frame.loc[0, "low"] < frame.loc[0, "estimate"] < frame.loc[0, "high"]
    assert np.isnan(frame.loc[1, "estimate"]) and frame.loc[1, "interval_method"].startswith("none")
    assert frame["n"].tolist() == [int(den[0].sum()), 0]
    with pytest.raises(ValueError, match="test: numerator"):
        share_intervals(num, den[:, :3], ["a", "b"], what="test")


def test_flags_need_the_whole_interval_past_the_tolerance() -> None:
    metric = np.array(["position_consistency"] * 2 + ["wst_violation_share"] * 2 + ["longer_share"] * 3 + ["tie_share"])
    low = np.array([0.5, 0.85, 0.06, 0.01, 0.61, 0.2, 0.45, 0.9])
    high = np.array([0.8, 0.95, 0.09, 0.08, 0.7, 0.39, 0.55, 1.0])
    assert flagged(metric, low, high).tolist() == [True, False, True, False, True, True, False, False]
    assert not flagged(np.array(["run_agreement"]), np.array([np.nan]), np.array([np.nan])).any()
