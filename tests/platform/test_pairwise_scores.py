"""The pairwise core's Bradley-Terry scores and the one z-score rule, on study-neutral synthetic data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from argassets.platform.pairwise.bradley_terry import z_normalise
from argassets.platform.pairwise.matrices import count_matrices
from argassets.platform.pairwise.scores import BTSettings, PairColumns, bt_scores


def simulate(theta: dict[str, float], n_pairs: int, seed: int, stratum: str = "s1") -> pd.DataFrame:
    """Pairs of named items labelled under BT (no ties), in one stratum."""
    rng = np.random.default_rng(seed)
    names = np.array(sorted(theta))
    strength = np.array([theta[n] for n in names])
    a = rng.integers(0, len(names), n_pairs)
    b = (a + rng.integers(1, len(names), n_pairs)) % len(names)
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    label = np.where(rng.random(n_pairs) < p, "A", "B")
    return pd.DataFrame({"item_a": names[a], "item_b": names[b], "label": label, "stratum": stratum})


def test_known_strengths_are_recovered_per_system_with_the_default_columns():
    theta = {f"item-{i:02d}": s for i, s in enumerate(np.linspace(-2, 2, 12))}
    pairs = pd.concat(
        [simulate(theta, 3000, seed=1).assign(system="s"), simulate(theta, 3000, seed=2).assign(system="t")]
    )
    scores = bt_scores(pairs, ["system"])
    assert list(scores.columns) == ["system", "item", "bt_score", "bt_z", "n_comparisons", "component"]
    for _, part in scores.groupby("system"):
        truth = np.array([theta[i] for i in part["item"]])
        assert stats.pearsonr(part["bt_score"], truth)[0] > 0.99
        np.testing.assert_allclose(part["bt_score"].to_numpy() - truth, 0.0, atol=0.25)
        assert part["bt_z"].mean() == pytest.approx(0.0, abs=1e-12)
        assert part["bt_z"].std(ddof=0) == pytest.approx(1.0, abs=1e-12)
    assert scores["n_comparisons"].sum() == 2 * len(pairs)


def test_text_strata_are_fitted_apart_and_seeded_by_their_own_name():
    columns = PairColumns(
        item_a=("stratum", "item_a"), item_b=("stratum", "item_b"), item=("stratum", "item"), stratum="stratum"
    )
    one = simulate({"x": 1.0, "y": 0.0, "z": -1.0}, 300, seed=3, stratum="north")
    other = simulate({"x": -1.0, "y": 0.0, "z": 1.0}, 300, seed=4, stratum="south")
    both = bt_scores(pd.concat([one, other]), [], columns=columns, n_bootstrap=40, seed=5)
    alone = bt_scores(one, [], columns=columns, n_bootstrap=40, seed=5)
    north = both[both["stratum"] == "north"].reset_index(drop=True)
    # Each stratum is centred on its own; its bootstrap stream does not depend on the other stratum.
    assert north["bt_score"].sum() == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(north["bt_score"], alone["bt_score"], atol=1e-9)
    assert north["bt_score"].tolist() == sorted(north["bt_score"], reverse=True)  # x > y > z
    assert (both["ci_low"] <= both["bt_z"] + 1e-9).all() and (both["bt_z"] <= both["ci_high"] + 1e-9).all()


def test_errors_and_the_empty_table():
    pairs = pd.DataFrame({"item_a": ["p", "q"], "item_b": ["q", "q"], "label": ["A", "B"]})
    with pytest.raises(ValueError, match="row 1: an item is compared with itself"):
        bt_scores(pairs, [])
    with pytest.raises(ValueError, match="missing column.*facet"):
        bt_scores(pairs, ["facet"])
    with pytest.raises(ValueError, match="confidence"):
        bt_scores(pairs.iloc[:1], [], confidence=1.0)
    with pytest.raises(ValueError, match="same number"):
        PairColumns(item_a=("a", "b"), item_b=("c",), item=("i",))
    with pytest.raises(ValueError, match="alpha"):
        BTSettings(alpha=-1.0)
    empty = bt_scores(pairs.assign(label=None), [])
    assert empty.empty and list(empty.columns) == ["item", "bt_score", "bt_z", "n_comparisons", "component"]


def test_ties_enter_the_count_matrix_as_asked():
    a, b, codes = np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([0, 2, 1])
    each = count_matrices(3, np.zeros(3, dtype=int), 1, a, b, codes, "win_each")[0]
    half = count_matrices(3, np.zeros(3, dtype=int), 1, a, b, codes, "half_each")[0]
    dropped = count_matrices(3, np.zeros(3, dtype=int), 1, a, b, codes, "drop")[0]
    assert each.tolist() == [[0, 1, 1], [0, 0, 0], [1, 1, 0]]
    assert half[0, 2] == 0.5 and half[2, 0] == 0.5 and dropped[0, 2] == 0 and dropped[2, 0] == 0


def test_one_z_score_rule_population_std_nan_kept_zero_spread_is_zero():
    z = z_normalise(np.array([1.0, 2.0, 3.0, np.nan]))
    np.testing.assert_allclose(z[:3], [-np.sqrt(1.5), 0.0, np.sqrt(1.5)])
    assert np.isnan(z[3])
    grouped = z_normalise(np.array([5.0, 7.0, 0.1, 0.1, 0.1, 4.0]), np.array([0, 0, 1, 1, 1, 2]))
    # 0.1 three times: its float mean is not exactly 0.1, yet no spread means z = 0, not rounding noise.
    assert grouped.tolist() == [-1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    columns = z_normalise(np.array([[1.0, 10.0], [3.0, 10.0]]))
    assert columns.tolist() == [[-1.0, 0.0], [1.0, 0.0]]
    assert z_normalise(np.array([])).shape == (0,)
