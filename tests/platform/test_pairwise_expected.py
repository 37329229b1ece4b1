"""The pairwise core's expected figures: hand-computed cases, and one-hot distributions that
reproduce the sampled figures exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from argassets.platform.pairwise.agreement import label_agreement
from argassets.platform.pairwise.expected import (
    expected_label_agreement,
    expected_vote_rows,
    expected_votes,
    run_outcome_distributions,
)
from argassets.platform.pairwise.labels import VotingError, decode_labels
from argassets.platform.pairwise.scores import BTSettings, bt_scores
from argassets.platform.pairwise.votes import majority_of_runs, majority_votes, run_agreement_pattern


def test_uniform_and_hand_computed_distributions():
    uniform = np.full((1, 3, 3), 1 / 3)
    skewed = np.tile([0.5, 0.3, 0.2], (1, 3, 1))
    # Run 0 says A, run 1 says B, run 2 is a fair coin between A and B: the coin decides.
    mixed = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]]])
    majority, distinct = run_outcome_distributions(np.concatenate([uniform, skewed, mixed]))
    # Uniform: A wins 3 + 3*2 of the 27 sequences; all equal 3/27, all unequal 3! = 6/27.
    np.testing.assert_allclose(majority[0], [7 / 27, 7 / 27, 13 / 27], atol=1e-12)
    np.testing.assert_allclose(distinct[0], [3 / 27, 18 / 27, 6 / 27], atol=1e-12)
    # (0.5, 0.3, 0.2): P(A >= 2) = 3 * 0.5^2 * 0.5 + 0.5^3 = 0.5; B: 3 * 0.09 * 0.7 + 0.027 = 0.216.
    np.testing.assert_allclose(majority[1], [0.5, 0.216, 0.284], atol=1e-12)
    np.testing.assert_allclose(distinct[1], [0.16, 0.66, 0.18], atol=1e-12)
    np.testing.assert_allclose(majority[2], [0.5, 0.5, 0.0], atol=1e-12)
    np.testing.assert_allclose(distinct[2], [0.0, 1.0, 0.0], atol=1e-12)


def test_one_hot_reproduces_the_sampled_majority_and_run_pattern():
    rng = np.random.default_rng(7)
    runs = rng.integers(0, 3, size=(100_000, 3)).astype(np.int8)  # more pairs than one chunk
    majority, distinct = run_outcome_distributions(np.eye(3)[runs], min_votes=2)
    np.testing.assert_array_equal(majority.argmax(axis=1), majority_of_runs(runs))
    np.testing.assert_array_equal(distinct.argmax(axis=1) + 1, run_agreement_pattern(runs))
    assert set(np.unique(majority)) == {0.0, 1.0}


def test_missing_probabilities_give_nan_not_a_value():
    probs = np.full((2, 3, 3), 1 / 3)
    probs[1, 2] = np.nan
    majority, distinct = run_outcome_distributions(probs)
    assert np.isfinite(majority[0]).all() and np.isnan(majority[1]).all() and np.isnan(distinct[1]).all()


def _judgments(probabilities: np.ndarray, labels: np.ndarray) -> pd.DataFrame:
    n_pairs, n_runs, _ = probabilities.shape
    return pd.DataFrame(
        {
            "judge": "j",
            "pair_id": np.repeat([f"p{i:03d}" for i in range(n_pairs)], n_runs),
            "run": np.tile(np.arange(n_runs), n_pairs),
            "label": decode_labels(labels.ravel()),
            "p_a": probabilities[:, :, 0].ravel(),
            "p_b": probabilities[:, :, 1].ravel(),
            "p_tie": probabilities[:, :, 2].ravel(),
        }
    )


def test_expected_votes_of_a_long_table_match_majority_votes_when_one_hot():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, size=(40, 3))
    judgments = _judgments(np.eye(3)[labels], labels)
    sampled = majority_votes(judgments, ["judge", "pair_id"])
    expected = expected_votes(judgments, ["judge", "pair_id"])
    assert expected["pair_id"].tolist() == sampled["pair_id"].tolist()
    dist = expected[["p_majority_a", "p_majority_b", "p_majority_tie"]].to_numpy()
    assert decode_labels(dist.argmax(axis=1)).tolist() == sampled["majority_label"].tolist()
    swapped = judgments.assign(order="ba")
    assert expected_votes(swapped, ["judge", "pair_id"]).empty  # only the pair's own order votes


def test_bad_probabilities_are_errors_naming_the_row():
    labels = np.zeros((2, 3), dtype=np.int64)
    judgments = _judgments(np.full((2, 3, 3), 1 / 3), labels)
    with pytest.raises(VotingError, match="judgments row 4: .* do not sum to 1"):
        expected_votes(judgments.assign(p_a=np.where(judgments.index == 4, 0.5, 1 / 3)), ["pair_id"])
    with pytest.raises(VotingError, match="judgments row 1: .* not all three"):
        expected_votes(judgments.assign(p_tie=np.where(judgments.index == 1, np.nan, 1 / 3)), ["pair_id"])
    with pytest.raises(VotingError, match="missing column"):
        expected_votes(judgments.drop(columns="p_tie"), ["pair_id"])


def test_expected_agreement_one_hot_equals_sampled_and_uniform_gives_kappa_zero():
    rng = np.random.default_rng(11)
    groups = rng.integers(0, 3, 300)
    rater = rng.integers(0, 3, 300)
    reference = np.where(rng.random(300) < 0.7, rater, rng.integers(0, 3, 300))
    reference[:5] = -1  # missing reference labels are left out
    sampled = label_agreement(groups, rater, reference, 3)
    one_hot = expected_label_agreement(groups, np.eye(3)[rater], reference, 3)
    np.testing.assert_allclose(one_hot["expected_cohen_kappa"], sampled["cohen_kappa"], atol=1e-12)
    np.testing.assert_allclose(one_hot["expected_percent_agreement"], sampled["percent_agreement"], atol=1e-12)
    np.testing.assert_array_equal(one_hot["n_expected"], sampled["n_comparisons"])
    uniform = expected_label_agreement(groups, np.full((300, 3), 1 / 3), reference, 3)
    np.testing.assert_allclose(uniform["expected_cohen_kappa"], 0.0, atol=1e-12)
    np.testing.assert_allclose(uniform["expected_percent_agreement"], 100 / 3, atol=1e-12)
    absent = expected_label_agreement(groups, np.full((300, 3), np.nan), reference, 3)
    assert np.isnan(absent["expected_cohen_kappa"]).all() and (absent["n_expected"] == 0).all()


def test_bt_on_expected_wins():
    rng = np.random.default_rng(5)
    items = np.array(list("pqrst"))
    a = rng.integers(0, 5, 200)
    b = (a + rng.integers(1, 5, 200)) % 5
    codes = rng.integers(0, 3, 200)
    votes = pd.DataFrame({"item_a": items[a], "item_b": items[b], "label": decode_labels(codes)})
    dist = np.eye(3)[codes]
    columns = ["p_majority_a", "p_majority_b", "p_majority_tie"]
    soft = expected_vote_rows(votes.assign(**dict(zip(columns, dist.T, strict=True))))
    assert len(soft) == len(votes) and (soft["weight"] == 1.0).all()
    sampled = bt_scores(votes, [])
    one_hot = bt_scores(soft, [], weight_column="weight")
    pd.testing.assert_frame_equal(one_hot, sampled)
    # Half a win each way is the half_each reading of a tie.
    halves = np.where(codes[:, None] == 2, [0.5, 0.5, 0.0], dist)
    soft = expected_vote_rows(votes.assign(**dict(zip(columns, halves.T, strict=True))))
    half_each = BTSettings(ties="half_each")
    pd.testing.assert_frame_equal(
        bt_scores(soft, [], half_each, weight_column="weight"), bt_scores(votes, [], half_each)
    )
    with pytest.raises(ValueError, match="bootstrap"):
        bt_scores(soft, [], weight_column="weight", n_bootstrap=10)
    with pytest.raises(ValueError, match="row 0: weight"):
        bt_scores(soft.assign(weight=-1.0), [], weight_column="weight")
