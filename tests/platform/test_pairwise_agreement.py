"""The pairwise core's agreement metrics: hand-computed cases and the one Krippendorff's alpha."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest

from argassets.platform.pairwise.agreement import (
    confusion_matrices,
    krippendorff_alpha,
    krippendorff_alpha_from_confusion,
    krippendorff_alpha_from_value_counts,
    krippendorff_alpha_nominal,
    label_agreement,
    score_agreement,
)


def test_alpha_by_hand_from_value_counts_confusion_and_raw_codes():
    # Rater 1: A A B B; rater 2: A B B B. Coincidences o_AA = 2, o_AB = o_BA = 1, o_BB = 4; n = 8,
    # n_A = 3, n_B = 5: alpha = 1 - (n - 1) * 2 / (n^2 - 9 - 25) = 1 - 14/30.
    a, b = np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1])
    expected = 1 - 14 / 30
    assert krippendorff_alpha_nominal(np.stack([a, b])) == pytest.approx(expected, abs=1e-12)
    confusion = confusion_matrices(np.zeros(4, dtype=int), a, b, 1, 3)
    assert krippendorff_alpha_from_confusion(confusion)[0] == pytest.approx(expected, abs=1e-12)
    counts = np.array([[2, 0, 0], [1, 1, 0], [0, 2, 0], [0, 2, 0]])
    assert krippendorff_alpha(counts) == pytest.approx(expected, abs=1e-12)
    assert label_agreement(np.zeros(4, dtype=int), a, b, 1)["krippendorff_alpha"][0] == pytest.approx(expected)


def test_alpha_per_group_equals_alpha_of_each_group_alone():
    rng = np.random.default_rng(4)
    counts = rng.multinomial(3, [0.5, 0.3, 0.2], size=400)
    counts[rng.random(400) < 0.1] = [1, 0, 0]  # single ratings: not pairable
    groups = rng.integers(0, 5, 400)
    per_group = krippendorff_alpha_from_value_counts(counts, groups, 6)
    for g in range(5):
        assert per_group[g] == pytest.approx(krippendorff_alpha(counts[groups == g]), abs=1e-12)
    assert math.isnan(per_group[5])  # no units


def test_undefined_alpha_is_nan():
    assert math.isnan(krippendorff_alpha(np.array([[2, 0, 0], [2, 0, 0]])))  # one category
    assert math.isnan(krippendorff_alpha(np.array([[1, 0, 0], [0, 1, 0]])))  # nobody rated twice
    assert math.isnan(krippendorff_alpha_from_confusion(np.zeros((2, 3, 3)))[1])
    assert krippendorff_alpha_from_confusion(np.zeros((2, 4, 3, 3))).shape == (2, 4)


def test_score_agreement_known_answer_and_shape_error():
    m = score_agreement(np.array([1.0, 2.0, 3.0, np.nan]), np.array([1.0, 2.0, 4.0, 0.0]))
    assert m["pearson"] == pytest.approx(9 / math.sqrt(84)) and m["kendall"] == pytest.approx(1.0)
    assert m["mae"] == pytest.approx(1 / 3) and m["n_items"] == 3
    with pytest.raises(ValueError, match="differ in shape"):
        score_agreement(np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="below n_categories=3"):
        confusion_matrices(np.zeros(1, dtype=int), np.array([3]), np.array([0]), 1)


@pytest.mark.parametrize("agreement", [0.05, 0.5, 0.95])
def test_alpha_from_confusion_equals_the_package_on_the_raw_units(agreement):
    # High agreement merges nearly every unit, low agreement keeps most as they are: both are exact.
    rng = np.random.default_rng(int(agreement * 100))
    for n in (2, 7, 60, 900):
        a = rng.integers(0, 3, n)
        b = np.where(rng.random(n) < agreement, a, rng.integers(0, 3, n))
        confusion = confusion_matrices(np.zeros(n, dtype=int), a, b, 1)
        expected = (
            krippendorff.alpha(np.stack([a, b]).astype(float), level_of_measurement="nominal")
            if len(set(a) | set(b)) > 1
            else np.nan
        )
        np.testing.assert_allclose(krippendorff_alpha_from_confusion(confusion), [expected], atol=1e-12)
