"""Validation metrics on hand-computed cases and against straightforward reference implementations."""

from __future__ import annotations

import itertools
import math

import krippendorff
import numpy as np
import pandas as pd
import pytest

from argassets.political.validation.design import connection_entropy, distinct_label_shares
from argassets.political.validation.pointwise import (
    agreed_political,
    pointwise_metrics,
    predicts_political,
    threshold_political,
)
from argassets.political.validation.ranking import (
    bt_strengths,
    confidence_subsets,
    footrule_similarity,
    kendall_tau_similarity,
    matrix_predictions,
    ordinal_alpha,
    pairwise_macro_f1,
    ranks,
)
from argassets.political.validation.win_matrices import (
    WIN_KERNEL,
    bin_histograms,
    decile_bins,
    human_win_matrices,
    pair_mask,
    win_matrix,
    win_matrix_loop,
)

# ---------------------------------------------------------------- bins and win matrices


@pytest.mark.parametrize(
    ("score", "expected"),
    [(0, 0), (5, 0), (10, 0), (10.5, 1), (11, 1), (20, 1), (21, 2), (50, 4), (55, 5), (90, 8), (91, 9), (100, 9)],
)
def test_decile_bins(score, expected):
    assert decile_bins([score])[0] == expected


def test_decile_bins_reject_out_of_range():
    with pytest.raises(ValueError):
        decile_bins([-1])
    with pytest.raises(ValueError):
        decile_bins([101])


def test_win_kernel():
    assert WIN_KERNEL[3, 2] == 1.0 and WIN_KERNEL[2, 3] == 0.0 and WIN_KERNEL[4, 4] == 0.5


def test_win_matrix_hand_computed_with_ties_and_unannotated_pairs():
    # bins: A = [1, 2], B = [2], C = [0, 0], D = no valid score
    scores = [[15, 25], [25], [3, 10], []]
    pairs = [(0, 1), (3, 0)]  # A-B and D-A annotated; A-C not
    matrix = win_matrix(bin_histograms(scores), pair_mask(4, pairs))
    assert matrix[0, 1] == 0.5  # (1 vs 2) = 0, (2 vs 2) = 0.5
    assert matrix[1, 0] == 1.5  # (2 vs 1) = 1, (2 vs 2) = 0.5
    assert matrix[0, 2] == 0 and matrix[2, 0] == 0  # A beats C on every combination but the pair is not annotated
    assert matrix[0, 3] == 0 and matrix[3, 0] == 0
    assert matrix.sum() == 2.0
    np.testing.assert_array_equal(matrix, win_matrix_loop(scores, pairs))


@pytest.mark.parametrize("seed", range(5))
def test_win_matrix_equals_the_loop_on_random_data(seed):
    rng = np.random.default_rng(seed)
    n = 30
    scores = [list(rng.integers(0, 101, size=rng.integers(0, 12))) for _ in range(n)]
    candidates = list(itertools.combinations(range(n), 2))
    chosen = rng.choice(len(candidates), size=120, replace=False)
    pairs = [candidates[k] if rng.random() < 0.5 else candidates[k][::-1] for k in chosen]
    fast = win_matrix(bin_histograms(scores), pair_mask(n, pairs))
    np.testing.assert_allclose(fast, win_matrix_loop(scores, pairs))
    sizes = np.array([len(s) for s in scores], dtype=float)
    for i, j in pairs:
        assert fast[i, j] + fast[j, i] == sizes[i] * sizes[j]


def test_human_matrices_transpose_left_framing_and_split_ties():
    index = {"x": 0, "y": 1}
    votes = pd.DataFrame(
        {
            "framing": ["right"] * 3 + ["left"] * 3,
            "meta_id1": ["x"] * 6,
            "meta_id2": ["y"] * 6,
            # right: x, x, equal -> x more right 2.5, y 0.5
            # left ("which is more left?"): y, y, x -> y more left twice: x more right 2, y 1
            "label": [1, 1, 0, 2, 2, 1],
        }
    )
    matrices = human_win_matrices(2, index, votes)
    np.testing.assert_array_equal(matrices["right"], [[0, 2.5], [0.5, 0]])
    np.testing.assert_array_equal(matrices["left"], [[0, 2.0], [1.0, 0]])
    np.testing.assert_array_equal(matrices["human"], [[0, 4.5], [1.5, 0]])
    assert matrices["human"].sum() == 6.0
    with pytest.raises(ValueError, match="label 3"):
        human_win_matrices(2, index, votes.assign(label=3))


# ---------------------------------------------------------------- rank agreement


def test_footrule_normalisation():
    assert footrule_similarity(np.arange(1, 5), np.arange(1, 5)) == 1.0
    assert footrule_similarity(np.arange(1, 5), np.arange(4, 0, -1)) == 0.0  # sum |.| = 8 = n^2 / 2
    assert footrule_similarity([1, 2, 3, 4], [2, 1, 3, 4]) == pytest.approx(1 - 2 / 8)
    flat = np.full(100, 50.5)
    assert footrule_similarity(flat, np.arange(1, 101)) == pytest.approx(0.5)


def test_tau_distance_normalisation_and_ties():
    assert kendall_tau_similarity([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert kendall_tau_similarity([1, 2, 3, 4], [4, 3, 2, 1]) == 0.0
    assert kendall_tau_similarity([1, 2, 3, 4], [2, 1, 3, 4]) == pytest.approx(1 - 1 / 6)
    assert kendall_tau_similarity([1, 1, 3], [1, 2, 3]) == pytest.approx(1 - 0.5 / 3)  # tie in one ranking: 1/2
    assert kendall_tau_similarity([1, 1, 3], [2, 2, 3]) == 1.0  # tie in both: 0
    assert kendall_tau_similarity(np.zeros(10), np.arange(10)) == pytest.approx(0.5)


def _tau_reference(a, b):
    n = len(a)
    d = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            x, y = a[i] - a[j], b[i] - b[j]
            if x * y < 0:
                d += 1
            elif (x == 0) != (y == 0):
                d += 0.5
    return 1 - d / (n * (n - 1) / 2)


def _footrule_reference(a, b):
    n = len(a)
    return 1 - sum(abs(x - y) for x, y in zip(a, b, strict=False)) / (n * n / 2)


@pytest.mark.parametrize("seed", range(5))
def test_rank_metrics_against_references_on_random_data(seed):
    rng = np.random.default_rng(seed)
    a = ranks(rng.integers(0, 15, size=40).astype(float))  # many ties
    b = ranks(rng.normal(size=40))
    assert kendall_tau_similarity(a, b) == pytest.approx(_tau_reference(a, b))
    assert footrule_similarity(a, b) == pytest.approx(_footrule_reference(a, b))
    assert ordinal_alpha(a, b) == pytest.approx(
        krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="ordinal")
    )


def test_ordinal_alpha_identical_and_reversed():
    r = np.arange(1, 21, dtype=float)
    assert ordinal_alpha(r, r) == pytest.approx(1.0)
    assert ordinal_alpha(r, r[::-1]) < -0.5
    assert math.isnan(ordinal_alpha(np.ones(5), np.ones(5)))


def test_ranks_share_ties():
    np.testing.assert_array_equal(ranks([0.3, 0.1, 0.3]), [2.5, 1.0, 2.5])


def test_bt_orders_items_by_wins():
    matrix = np.array([[0, 1, 3], [5, 0, 4], [2, 1, 0]], dtype=float)  # 1 beats most, 0 beats 2
    strengths = bt_strengths(matrix)
    assert np.argsort(strengths).tolist() == [2, 0, 1]
    # an item without comparisons keeps the common value: ranks in the middle of a symmetric pair
    lone = bt_strengths(np.array([[0, 3, 0], [1, 0, 0], [0, 0, 0]], dtype=float))
    assert lone[0] > lone[2] > lone[1]


# ---------------------------------------------------------------- pairwise F1 and subsets


def test_pairwise_macro_f1_file_orientation_and_present_classes():
    pairs = np.array([[0, 1], [1, 2], [2, 0]])
    human = np.zeros((3, 3))
    human[0, 1], human[1, 0] = 4, 2  # gold True (4/6)
    human[1, 2], human[2, 1] = 3, 3  # gold True (3/6 >= 0.5)
    human[2, 0], human[0, 2] = 1, 5  # gold False
    model = np.zeros((3, 3))
    model[0, 1], model[1, 0] = 10, 15  # 0.4 -> False
    model[1, 2], model[2, 1] = 5, 5  # 0.5 -> True
    model[2, 0], model[0, 2] = 0, 25  # 0 -> False
    predicted = matrix_predictions(model, pairs)
    assert predicted.tolist() == [False, True, False]
    # gold [T, T, F], pred [F, T, F]: F1(True) = 2/3, F1(False) = 2/3
    assert pairwise_macro_f1(human, predicted, pairs) == pytest.approx(2 / 3)
    # only one class present in gold and prediction: sklearn averages over it alone
    assert pairwise_macro_f1(human, np.array([True, True, False]), pairs) == pytest.approx(1.0)


def test_matrix_predictions_without_scores_count_as_tie():
    assert matrix_predictions(np.zeros((2, 2)), np.array([[0, 1]])).tolist() == [True]


def test_confidence_subsets_boundaries():
    pairs = np.array([[0, 1], [2, 3], [4, 5], [6, 7]])
    human = np.zeros((8, 8))
    human[0, 1], human[1, 0] = 5, 1  # 5/6: |0.833 - 0.5| = 1/3 -> confident
    human[2, 3], human[3, 2] = 4, 2  # 4/6 -> not
    human[4, 5], human[5, 4] = 0.5, 5.5  # 1/12 -> confident
    human[6, 7], human[7, 6] = 3, 3
    e3 = np.zeros((8, 8))
    e3[0, 1], e3[1, 0] = 3, 1  # 0.75: |0.25| not > 0.25 -> not confident
    e3[2, 3], e3[3, 2] = 4, 1  # 0.8 -> confident
    e3[4, 5], e3[5, 4] = 0, 4  # 0.0 -> confident
    # pair 6-7: E3 has no scores -> not confident
    subsets = confidence_subsets(human, e3, pairs)
    assert subsets["P11"].tolist() == [False, False, True, False]
    assert subsets["P10"].tolist() == [False, True, False, False]
    assert subsets["P01"].tolist() == [True, False, False, False]
    assert subsets["P00"].tolist() == [False, False, False, True]
    assert subsets["all"].all()


# ---------------------------------------------------------------- design and pointwise


def test_connection_entropy_hand_computed():
    # item 0 is paired with items in bins 1 and 2 (two partners each): 1 bit; item 1 with bin 0 only: 0 bits
    bins = np.array([0, 1, 1, 2, 2])
    pairs = np.array([[0, 1], [0, 2], [0, 3], [4, 0]])
    entropy = connection_entropy(pairs, bins)
    assert entropy[0] == pytest.approx(1.0)
    assert entropy[1] == 0.0
    spread = connection_entropy(np.array([[0, k] for k in range(1, 9)]), np.arange(9) % 9)
    assert spread[0] == pytest.approx(3.0)  # the ideal: log2(8) over 8 bins


def test_distinct_label_shares():
    votes = pd.DataFrame(
        {
            "framing": ["left"] * 6,
            "meta_id1": ["a", "a", "a", "c", "c", "c"],
            "meta_id2": ["b", "b", "b", "d", "d", "d"],
            "label": [1, 1, 1, 0, 1, 2],
        }
    )
    shares = distinct_label_shares(votes).set_index("distinct_labels")
    assert shares.loc[1, "share"] == 0.5 and shares.loc[2, "share"] == 0.0 and shares.loc[3, "share"] == 0.5


def test_na_threshold_is_strict():
    assert predicts_political([0.0, 0.4, 0.49, 0.5, 0.6, 1.0]).tolist() == [True, True, True, False, False, False]


def test_the_two_inter_model_labels():
    prob_na = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0, math.nan]
    # the paper's: a label only when the five repetitions agree, missing otherwise
    np.testing.assert_array_equal(agreed_political(prob_na), [1.0, *[math.nan] * 4, 0.0, math.nan])
    # the platform's: a label wherever there is a probability
    np.testing.assert_array_equal(threshold_political(prob_na), [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, math.nan])


def test_pointwise_metrics_hand_computed():
    gold = [1, 1, 0, 0, 0]
    predicted = [1, 0, 0, 0, 1]
    metrics = pointwise_metrics(gold, predicted)
    assert metrics["precision"] == 0.5 and metrics["recall"] == 0.5
    assert metrics["micro_f1"] == pytest.approx(0.6)
    assert metrics["macro_f1"] == pytest.approx((0.5 + 2 / 3) / 2)
    assert metrics["balanced_accuracy"] == pytest.approx((0.5 + 2 / 3) / 2)
    expected_alpha = krippendorff.alpha(reliability_data=np.array([gold, predicted]), level_of_measurement="nominal")
    assert metrics["alpha_nominal"] == pytest.approx(expected_alpha)
    assert metrics["n"] == 5
