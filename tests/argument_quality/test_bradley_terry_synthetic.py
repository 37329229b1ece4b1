"""Bradley-Terry on synthetic data: known strengths recovered, the batched solver equals choix."""

from __future__ import annotations

import choix
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from argassets.argument_quality.bradley_terry import (
    BTSettings,
    bt_scores,
    comparison_components,
    count_matrices,
)
from argassets.platform.pairwise.bradley_terry import fit_strengths, z_normalise


def simulate(strengths: dict[int, np.ndarray], per_item: int, tie_band: float, seed: int) -> pd.DataFrame:
    """Comparisons within each topic under BT with ties (a tie when |logit| is small and a coin says so)."""
    rng = np.random.default_rng(seed)
    rows = []
    for topic, theta in strengths.items():
        n = len(theta)
        m = n * per_item // 2
        a = rng.integers(0, n, m)
        b = (a + rng.integers(1, n, m)) % n
        p = 1 / (1 + np.exp(-(theta[a] - theta[b])))
        u = rng.random(m)
        label = np.where(u < p, "A", "B")
        tie = rng.random(m) < tie_band * np.exp(-np.abs(theta[a] - theta[b]))
        label = np.where(tie, "Tie", label)
        rows.append(
            pd.DataFrame(
                {
                    "topic_id": topic,
                    "discussion_id_a": 1000 + a,
                    "argument_id_a": 1,
                    "discussion_id_b": 1000 + b,
                    "argument_id_b": 1,
                    "label": label,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("ties", ["win_each", "half_each", "drop"])
def test_known_strengths_are_recovered(ties):
    rng = np.random.default_rng(7)
    strengths = {t: rng.normal(0, 1.5, 60) for t in (1, 2, 3)}
    # About 100 comparisons per argument, a quarter of them ties near equal strength.
    data = simulate(strengths, per_item=100, tie_band=0.4, seed=1).assign(dimension="logic")
    scores = bt_scores(data, ["dimension"], BTSettings(ties=ties, alpha=0.001))
    for topic, theta in strengths.items():
        part = scores[scores["topic_id"] == topic].sort_values("discussion_id")
        assert len(part) == 60
        rho = stats.spearmanr(part["bt_score"], theta)[0]
        assert rho > 0.95, (ties, topic, rho)
        # Centred per topic, like choix.
        assert abs(part["bt_score"].mean()) < 1e-9
    # z over all topics at once, population std.
    assert scores["bt_z"].mean() == pytest.approx(0, abs=1e-12)
    assert scores["bt_z"].std(ddof=0) == pytest.approx(1, abs=1e-12)
    assert (scores["component"] == 0).all()


def random_counts(rng, k, n, rate):
    counts = rng.poisson(rate, (k, n, n)).astype(float)
    counts[:, np.arange(n), np.arange(n)] = 0
    return counts


@pytest.mark.parametrize(("n", "rate", "alpha"), [(5, 3.0, 0.0), (30, 0.3, 0.001), (60, 0.05, 0.01), (40, 0.2, 1.0)])
def test_batched_engine_equals_choix_ilsr(n, rate, alpha):
    rng = np.random.default_rng(n)
    counts = random_counts(rng, 6, n, rate)
    if alpha == 0.0:
        counts += 0.5  # every pair compared both ways: the MLE exists without regularisation
    batched = fit_strengths(counts, alpha, engine="batched")
    reference = np.array([choix.ilsr_pairwise_dense(c, alpha=alpha, max_iter=10_000, tol=1e-12) for c in counts])
    np.testing.assert_allclose(batched, reference, atol=1e-6)
    via_choix = fit_strengths(counts, alpha, engine="choix")
    np.testing.assert_allclose(via_choix, reference, atol=1e-6)
    # A warm start reaches the same point.
    warm = fit_strengths(
        counts, alpha, engine="batched", initial_params=reference + rng.normal(0, 0.5, reference.shape)
    )
    np.testing.assert_allclose(warm, reference, atol=1e-6)


def test_single_matrix_and_trivial_sizes():
    counts = np.array([[0, 3, 1], [1, 0, 2], [0, 1, 0]], dtype=float)
    np.testing.assert_allclose(
        fit_strengths(counts, 0.001),
        choix.ilsr_pairwise_dense(counts, alpha=0.001, tol=1e-12, max_iter=10_000),
        atol=1e-6,
    )
    assert fit_strengths(np.zeros((1, 1)), 0.1).tolist() == [0.0]


def test_unregularised_disconnected_graph_is_an_error():
    counts = np.zeros((4, 4))
    counts[0, 1] = counts[1, 0] = 2
    counts[2, 3] = counts[3, 2] = 1
    with pytest.raises(ValueError, match="alpha"):
        fit_strengths(counts, 0.0)
    # Regularised, it is finite and the two halves sit at the same level.
    params = fit_strengths(counts, 0.01)
    assert np.all(np.isfinite(params))


def test_count_matrices_tie_handling_by_hand():
    # Items 0,1,2 in one matrix: 0 beats 1, 2 beats 1 (label B with A=1, B=2), 0 ties 2.
    item_a = np.array([0, 1, 0])
    item_b = np.array([1, 2, 2])
    codes = np.array([0, 1, 2])
    cells = np.zeros(3, dtype=int)
    win_each = count_matrices(3, cells, 1, item_a, item_b, codes, "win_each")[0]
    np.testing.assert_array_equal(win_each, [[0, 1, 1], [0, 0, 0], [1, 1, 0]])
    half = count_matrices(3, cells, 1, item_a, item_b, codes, "half_each")[0]
    np.testing.assert_array_equal(half, [[0, 1, 0.5], [0, 0, 0], [0.5, 1, 0]])
    drop = count_matrices(3, cells, 1, item_a, item_b, codes, "drop")[0]
    np.testing.assert_array_equal(drop, [[0, 1, 0], [0, 0, 0], [0, 1, 0]])
    weighted = count_matrices(3, cells, 1, item_a, item_b, codes, "win_each", np.array([2.0, 0.0, 3.0]))[0]
    np.testing.assert_array_equal(weighted, [[0, 2, 3], [0, 0, 0], [3, 0, 0]])


def test_components_are_numbered_by_size_within_groups():
    # Group 0: nodes 0-1-2 and 3-4; group 1: nodes 5-6 connected, 7 alone (no edge).
    labels = comparison_components(
        8, np.array([0, 1, 3, 5]), np.array([1, 2, 4, 6]), np.array([0, 0, 0, 0, 0, 1, 1, 1])
    )
    assert labels.tolist() == [0, 0, 0, 1, 1, 0, 0, 1]


def test_disconnected_topic_is_marked_in_the_scores():
    data = pd.DataFrame(
        {
            "dimension": "logic",
            "topic_id": 1,
            "discussion_id_a": [1, 2, 10],
            "argument_id_a": [1, 1, 1],
            "discussion_id_b": [2, 3, 11],
            "argument_id_b": [1, 1, 1],
            "label": ["A", "B", "Tie"],
        }
    )
    scores = bt_scores(data, ["dimension"])
    by_item = dict(zip(scores["discussion_id"], scores["component"], strict=True))
    assert by_item == {1: 0, 2: 0, 3: 0, 10: 1, 11: 1}
    assert dict(zip(scores["discussion_id"], scores["n_comparisons"], strict=True)) == {1: 1, 2: 2, 3: 1, 10: 1, 11: 1}


def test_z_normalise_uses_population_std():
    z = z_normalise(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(z, (np.arange(1, 5) - 2.5) / np.std(np.arange(1, 5)))
    assert z_normalise(np.array([2.0, 2.0])).tolist() == [0.0, 0.0]


def test_groups_are_independent_and_bootstrap_is_seeded():
    rng = np.random.default_rng(2)
    strengths = {t: rng.normal(0, 1, 25) for t in (1, 2)}
    one = simulate(strengths, 20, 0.3, seed=5)
    two = simulate(strengths, 20, 0.3, seed=6)
    data = pd.concat([one.assign(model="x"), two.assign(model="y")], ignore_index=True)
    both = bt_scores(data, ["model"], n_bootstrap=60, seed=3)
    alone = bt_scores(one.assign(model="x"), ["model"], n_bootstrap=60, seed=3)
    x = both[both["model"] == "x"].reset_index(drop=True)
    pd.testing.assert_frame_equal(x, alone)
    again = bt_scores(data, ["model"], n_bootstrap=60, seed=3)
    pd.testing.assert_frame_equal(both, again)
    other_seed = bt_scores(data, ["model"], n_bootstrap=60, seed=4)
    assert not np.allclose(other_seed["ci_low"], both["ci_low"])
    inside = (both["ci_low"] <= both["bt_z"]) & (both["bt_z"] <= both["ci_high"])
    assert inside.mean() > 0.9
    assert (both["ci_high"] - both["ci_low"]).gt(0).all()


def test_bootstrap_interval_covers_the_truth_about_as_often_as_claimed():
    rng = np.random.default_rng(4)
    theta = rng.normal(0, 1, 40)
    data = simulate({1: theta}, 40, 0.3, seed=9).assign(dimension="logic")
    scores = bt_scores(data, ["dimension"], n_bootstrap=200, seed=1).sort_values("discussion_id")
    truth = z_normalise(theta)
    covered = ((scores["ci_low"].to_numpy() <= truth) & (truth <= scores["ci_high"].to_numpy())).mean()
    assert covered > 0.8


def test_input_errors():
    data = pd.DataFrame(
        {
            "topic_id": [1],
            "discussion_id_a": [1],
            "argument_id_a": [1],
            "discussion_id_b": [1],
            "argument_id_b": [1],
            "label": ["A"],
        }
    )
    with pytest.raises(ValueError, match="compared with itself"):
        bt_scores(data, [])
    with pytest.raises(ValueError, match="missing column"):
        bt_scores(data.drop(columns="label"), [])
    with pytest.raises(ValueError, match="ties must be one of"):
        BTSettings(ties="split")  # type: ignore[arg-type]
    empty = bt_scores(data.assign(label=None), [])
    assert empty.empty and "bt_z" in empty.columns


def test_matrices_newton_leaves_unconverged_are_finished_by_choix() -> None:
    """A total order (as longer-wins produces) is bounded by alpha alone; whatever the batched
    Newton solver leaves unconverged must still come back as choix's estimate."""
    rng = np.random.default_rng(7)
    n = 12
    counts = np.zeros((3, n, n))
    for k in range(3):
        for i in range(n):
            for j in range(i + 1, n):
                if rng.random() < 0.6:
                    counts[k, j, i] += rng.integers(1, 4)  # the longer (higher index) always wins
    expected = np.stack([choix.ilsr_pairwise_dense(c, alpha=0.001, max_iter=100_000) for c in counts])
    got = fit_strengths(counts, alpha=0.001, max_iter=1)
    np.testing.assert_allclose(got, expected - expected.mean(axis=1, keepdims=True), atol=1e-4)


def test_bootstrap_on_the_small_sample_with_a_total_order_judge() -> None:
    """The embedded sample judged by a total order (longer text wins): tiny resampled topics are
    nearly separable, where batched Newton overflows; every replicate must still be estimated."""
    from argassets.argument_quality.bradley_terry import BTSettings
    from argassets.argument_quality.bt_scores import llm_bt_scores
    from argassets.argument_quality.corpus import load_corpus, locate_corpus
    from argassets.platform.paths import SAMPLE_DATA_DIR

    arguments, comparisons = load_corpus(locate_corpus(SAMPLE_DATA_DIR))
    key = ["topic_id", "discussion_id", "argument_id"]
    length = arguments.set_index(key)["text"].str.split().str.len()
    len_a = length.reindex(
        pd.MultiIndex.from_frame(comparisons[["topic_id", "discussion_id_a", "argument_id_a"]].set_axis(key, axis=1))
    ).to_numpy()
    len_b = length.reindex(
        pd.MultiIndex.from_frame(comparisons[["topic_id", "discussion_id_b", "argument_id_b"]].set_axis(key, axis=1))
    ).to_numpy()
    label = np.where(len_a > len_b, "A", np.where(len_a < len_b, "B", "Tie"))
    majority = comparisons[["dimension", "comparison_id", "topic_id"]].assign(
        model="longer-wins",
        strategy="zero",
        label_run0=label,
        label_run1=label,
        label_run2=label,
        n_valid_runs=3,
        majority_label=label,
        is_baseline=True,
        scope="full",
    )
    scores = llm_bt_scores(majority, comparisons, arguments, BTSettings(), n_bootstrap=200, seed=0)
    assert len(scores) > 0
    assert np.isfinite(scores["bt_z"]).all()
    assert np.isfinite(scores[["ci_low", "ci_high"]].to_numpy()).all()
    assert (scores["ci_low"] <= scores["ci_high"]).all()
