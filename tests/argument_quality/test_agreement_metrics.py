"""Agreement metrics: hand-computed small cases, and the reference libraries on random data."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from argassets.platform.pairwise.agreement import (
    METRIC_RANGES,
    cohen_kappa,
    confusion_matrices,
    krippendorff_alpha_from_value_counts,
    krippendorff_alpha_nominal,
    label_agreement,
    percent_agreement,
    score_agreement,
)


def test_score_metrics_by_hand():
    m = score_agreement(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0]))
    # r = 3 / sqrt(2 * 42/9) = 9 / sqrt(84)
    assert m["pearson"] == pytest.approx(9 / math.sqrt(84))
    assert m["spearman"] == pytest.approx(1.0)
    assert m["kendall"] == pytest.approx(1.0)
    assert m["mae"] == pytest.approx(1 / 3)
    assert m["rmse"] == pytest.approx(math.sqrt(1 / 3))
    assert m["n_items"] == 3
    reversed_ = score_agreement(np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 3.0, 2.0, 1.0]))
    assert reversed_["spearman"] == pytest.approx(-1) and reversed_["kendall"] == pytest.approx(-1)


def test_score_metrics_drop_nan_pairs_and_are_nan_when_undefined():
    m = score_agreement(np.array([1.0, np.nan, 3.0, 5.0]), np.array([2.0, 7.0, np.nan, 6.0]))
    assert m["n_items"] == 2 and m["mae"] == pytest.approx(1.0)
    constant = score_agreement(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0]))
    assert math.isnan(constant["pearson"]) and math.isnan(constant["kendall"])
    assert constant["mae"] == pytest.approx(1.0)
    empty = score_agreement(np.array([]), np.array([]))
    assert math.isnan(empty["mae"]) and empty["n_items"] == 0
    with pytest.raises(ValueError, match="differ in shape"):
        score_agreement(np.zeros(2), np.zeros(3))


def test_label_metrics_by_hand():
    # Rater 1: A A B B; rater 2: A B B B.
    a = np.array([0, 0, 1, 1])
    b = np.array([0, 1, 1, 1])
    # p_o = 3/4; p_e = 0.5*0.25 + 0.5*0.75 = 0.5; kappa = 0.5.
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    # Coincidences: o_AA = 2, o_AB = o_BA = 1, o_BB = 4; n = 8, n_A = 3, n_B = 5;
    # alpha = 1 - (n - 1) * 2 / (n^2 - 9 - 25) = 1 - 14/30.
    assert krippendorff_alpha_nominal(np.stack([a, b])) == pytest.approx(1 - 14 / 30)
    assert percent_agreement(a, b) == pytest.approx(75.0)
    batched = label_agreement(np.zeros(4, dtype=int), a, b, 1, 3)
    assert batched["cohen_kappa"][0] == pytest.approx(0.5)
    assert batched["krippendorff_alpha"][0] == pytest.approx(1 - 14 / 30)
    assert batched["percent_agreement"][0] == pytest.approx(75.0)
    assert batched["n_comparisons"][0] == 4


def test_three_raters_with_missing_values_by_hand():
    # Unit 1: A A A; unit 2: A B (third missing); unit 3: B B B; unit 4: A only (not pairable).
    data = np.array([[0, 0, 1, 0], [0, 1, 1, -1], [0, -1, 1, -1]])
    # Coincidences: unit 1 adds o_AA = 3*2/2 = 3; unit 2 adds o_AB = o_BA = 1; unit 3 adds o_BB = 3.
    # n = 8, n_A = 4, n_B = 4: alpha = 1 - 7 * 2 / (64 - 16 - 16) = 1 - 14/32.
    assert krippendorff_alpha_nominal(data) == pytest.approx(1 - 14 / 32)
    reference = krippendorff.alpha(np.where(data < 0, np.nan, data).astype(float), level_of_measurement="nominal")
    assert krippendorff_alpha_nominal(data) == pytest.approx(reference)


@pytest.mark.parametrize("seed", range(5))
def test_against_the_libraries_on_random_data(seed):
    rng = np.random.default_rng(seed)
    n = 300
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.4, a, rng.integers(0, 3, n))
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert krippendorff_alpha_nominal(np.stack([a, b])) == pytest.approx(
        krippendorff.alpha(np.stack([a, b]).astype(float), level_of_measurement="nominal"), abs=1e-12
    )
    assert percent_agreement(a, b) == pytest.approx(100 * np.mean(a == b))
    raters = rng.integers(0, 3, (3, n)).astype(float)
    raters[rng.random(raters.shape) < 0.15] = np.nan
    assert krippendorff_alpha_nominal(raters) == pytest.approx(
        krippendorff.alpha(raters, level_of_measurement="nominal"), abs=1e-12
    )
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    m = score_agreement(x, y)
    assert m["pearson"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert m["spearman"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert m["kendall"] == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)
    assert m["mae"] == pytest.approx(np.mean(np.abs(x - y)))
    assert m["rmse"] == pytest.approx(np.sqrt(np.mean((x - y) ** 2)))


def test_batched_label_metrics_equal_the_per_group_ones():
    rng = np.random.default_rng(9)
    groups = rng.integers(0, 7, 2000)
    a = rng.integers(-1, 3, 2000)  # -1 = no verdict, left out
    b = rng.integers(0, 3, 2000)
    batched = label_agreement(groups, a, b, 8, 3)
    for g in range(7):
        keep = (groups == g) & (a >= 0)
        assert batched["cohen_kappa"][g] == pytest.approx(cohen_kappa_score(a[keep], b[keep]))
        assert batched["krippendorff_alpha"][g] == pytest.approx(
            krippendorff.alpha(np.stack([a[keep], b[keep]]).astype(float), level_of_measurement="nominal")
        )
        assert batched["n_comparisons"][g] == keep.sum()
    # Group 7 has no units: every metric undefined.
    assert math.isnan(batched["cohen_kappa"][7]) and math.isnan(batched["percent_agreement"][7])
    assert confusion_matrices(groups, a, b, 8)[0].sum() == ((groups == 0) & (a >= 0)).sum()


def test_grouped_alpha_from_value_counts_equals_the_package():
    rng = np.random.default_rng(1)
    data = rng.integers(0, 3, (3, 500)).astype(float)
    data[rng.random(data.shape) < 0.1] = np.nan
    groups = rng.integers(0, 4, 500)
    counts = np.stack([(data == k).sum(axis=0) for k in range(3)], axis=1)
    alphas = krippendorff_alpha_from_value_counts(counts, groups, 4)
    for g in range(4):
        assert alphas[g] == pytest.approx(krippendorff.alpha(data[:, groups == g], level_of_measurement="nominal"))


def test_undefined_agreement_is_nan_not_an_error():
    same = np.array([2, 2, 2, 2])
    assert math.isnan(krippendorff_alpha_nominal(np.stack([same, same])))  # one category: no expected disagreement
    assert math.isnan(cohen_kappa(same, same))
    assert math.isnan(percent_agreement(np.array([-1]), np.array([0])))


def test_metric_ranges_are_the_mathematical_ones():
    assert METRIC_RANGES["pearson"] == (-1.0, 1.0)
    assert METRIC_RANGES["percent_agreement"] == (0.0, 100.0)
    assert METRIC_RANGES["mae"][0] == 0.0 and math.isinf(METRIC_RANGES["rmse"][1])
    # Systematic disagreement gets close to the lower bound of alpha, never below -1.
    a = np.array([0, 1] * 50)
    assert -1.0 <= krippendorff_alpha_nominal(np.stack([a, 1 - a])) < -0.9
    assert cohen_kappa(a, 1 - a) == pytest.approx(-1.0)
