"""Judgments per item by simulation: what the simulation promises, an independent pool delivers."""

import numpy as np
import pytest

from argassets.platform.design.information import fisher_information, scale_separation_reliability, standard_errors
from argassets.platform.design.pairs import strata_pairs
from argassets.platform.design.simulation import (
    AnnotatorPool,
    choose_judgments,
    fit_label_probabilities,
    simulate_pairwise,
    simulate_pointwise,
    simulate_votes,
)
from argassets.platform.pairwise.bradley_terry import fit_strengths

N_ITEMS = 40
POOL = AnnotatorPool(strength_sd=1.0, tie_share=0.1, discrimination_sd=0.2)


def _pairs() -> np.ndarray:
    pairs = strata_pairs(list(range(N_ITEMS)), [i // 10 for i in range(N_ITEMS)], 20, 15, seed=0)
    return np.c_[pairs["item_1"].to_numpy(), pairs["item_2"].to_numpy()]


def _realised(pairs: np.ndarray, k: int, seed: int, pools: int = 40) -> tuple[float, float]:
    """Mean squared correlation with the truth, and mean SSR, of independent annotator pools."""
    rng = np.random.default_rng(seed)
    theta = POOL.strength_sd * rng.standard_normal((pools, N_ITEMS))
    counts = simulate_votes(theta, pairs, k, POOL, rng)
    estimates = fit_strengths(counts, 0.01)
    r2 = np.mean([np.corrcoef(e, t)[0, 1] ** 2 for e, t in zip(estimates, theta, strict=True)])
    ssr = np.mean(scale_separation_reliability(estimates, standard_errors(estimates, counts)))
    return float(r2), float(ssr)


def test_the_chosen_number_of_judgments_delivers_the_promised_reliability_and_one_fewer_does_not() -> None:
    pairs = _pairs()
    table = simulate_pairwise(pairs, N_ITEMS, POOL, range(1, 9), replications=60, seed=0)
    k = choose_judgments(table, "judgments_per_pair", "ssr", 0.8, at_least=True)
    assert k is not None and k > 1
    promised = float(table.loc[table["judgments_per_pair"] == k, "ssr"].iloc[0])
    assert promised >= 0.8
    # A fresh pool of annotators with the same noise: the ranking is recovered at that reliability.
    reliability, ssr = _realised(pairs, k, seed=99)
    assert reliability >= 0.8 and abs(ssr - promised) < 0.03
    # Control: with one judgment fewer the analyst's SSR misses the target.
    _, fewer = _realised(pairs, k - 1, seed=98)
    assert fewer < 0.8
    assert (np.diff(table["ssr"]) > 0).all() and (np.diff(table["ci_width"]) < 0).all()


def test_standard_errors_match_the_spread_of_the_estimates_over_replications() -> None:
    pairs = _pairs()
    rng = np.random.default_rng(3)
    theta = np.tile(POOL.strength_sd * rng.standard_normal(N_ITEMS), (300, 1))
    counts = simulate_votes(theta, pairs, 4, AnnotatorPool(POOL.strength_sd), rng)
    estimates = fit_strengths(counts, 0.0001)
    empirical = estimates.std(axis=0)
    predicted = standard_errors(estimates, counts).mean(axis=0)
    assert np.median(predicted / empirical) == pytest.approx(1.0, abs=0.1)
    info = fisher_information(estimates[0], counts[0])
    assert np.allclose(info.sum(axis=1), 0.0)


def test_label_probabilities_are_recovered_from_a_pilot_with_known_beta() -> None:
    rng = np.random.default_rng(0)
    positive = rng.binomial(3, rng.beta(2.0, 5.0, size=4000))
    a, b = fit_label_probabilities(positive, 3)
    assert a / (a + b) == pytest.approx(2 / 7, abs=0.01) and a + b == pytest.approx(7.0, rel=0.4)
    with pytest.raises(ValueError, match="positive counts must lie in 0..3"):
        fit_label_probabilities(np.array([0, 4]), 3)


def test_pointwise_simulation_narrows_alpha_and_improves_the_majority_with_more_annotators() -> None:
    table = simulate_pointwise((1.0, 1.3), n_items=400, annotators_per_item=[2, 3, 5, 9], replications=80, seed=1)
    assert table["majority_accuracy"].is_monotonic_increasing
    assert table["alpha_width"].iloc[-1] < table["alpha_width"].iloc[0]
    assert choose_judgments(table, "annotators_per_item", "alpha_width", 0.0, at_least=False) is None
    with pytest.raises(ValueError, match="alpha needs >= 2 annotators"):
        simulate_pointwise((1.0, 1.0), 10, [1], 2, 0)
