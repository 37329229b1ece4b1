"""The platform's interval core (argassets/platform/stats): bad input, agreement with scipy,
statsmodels and hand computation, the inverted p-values and the best set."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from argassets.platform.stats.intervals import BootstrapSettings, cluster_bootstrap, cluster_weights
from argassets.platform.stats.multiplicity import adjust_p_values
from argassets.platform.stats.paired import best_set, paired_bootstrap, top_index

PLAIN = BootstrapSettings(n_resamples=999, small_cluster_correction=False)


def _mean_of(values: np.ndarray):
    """A statistic of cluster weights: the weighted mean of one value per cluster, for each row of ``values``."""
    values = np.atleast_2d(values)

    def statistic(weights: np.ndarray) -> np.ndarray:
        return (values @ weights.T) / weights.sum(axis=1)

    return statistic


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.2])
def test_a_level_outside_zero_one_is_refused(level: float) -> None:
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
        BootstrapSettings(level=level)


def test_too_few_resamples_and_unknown_method_are_refused() -> None:
    with pytest.raises(ValueError, match="n_resamples"):
        BootstrapSettings(n_resamples=1)
    with pytest.raises(ValueError, match="'basic'"):
        BootstrapSettings(method="basic")  # type: ignore[arg-type]


def test_fewer_than_two_clusters_is_an_error_naming_the_metric() -> None:
    with pytest.raises(ValueError, match="cohen_kappa of random / zero: .*at least two clusters, got 1"):
        cluster_bootstrap(_mean_of(np.ones(1)), 1, ["kappa"], what="cohen_kappa of random / zero")


def test_an_empty_configuration_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="configuration x: nothing to bootstrap"):
        cluster_bootstrap(_mean_of(np.ones(5)), 5, [], what="configuration x")


def test_a_statistic_of_the_wrong_shape_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"pearson: the statistic returned shape \(1, 1\), expected \(2, 1\)"):
        cluster_bootstrap(_mean_of(np.ones(5)), 5, ["a", "b"], what="pearson")


def test_cluster_weights_count_each_cluster() -> None:
    weights = cluster_weights(np.array([[0, 0, 2], [1, 2, 2]]), 4)
    assert weights.tolist() == [[2, 0, 1, 0], [0, 1, 2, 0]]


def test_intervals_are_scipys_bca_on_the_cluster_values() -> None:
    """Without the small-cluster widening, the interval is exactly scipy's BCa on the cluster values."""
    rng = np.random.default_rng(3)
    values = rng.gamma(2.0, size=25)
    mine = cluster_bootstrap(_mean_of(values), 25, ["mean"], PLAIN, what="mean")
    theirs = stats.bootstrap(
        (values,), np.mean, n_resamples=999, method="BCa", random_state=np.random.default_rng(PLAIN.seed)
    )
    assert mine.method == ("BCa",)
    np.testing.assert_allclose(mine.low[0], theirs.confidence_interval.low, rtol=1e-12)
    np.testing.assert_allclose(mine.high[0], theirs.confidence_interval.high, rtol=1e-12)
    np.testing.assert_allclose(mine.estimate[0], values.mean())


def test_the_small_cluster_correction_widens_about_the_estimate() -> None:
    values = np.random.default_rng(4).normal(size=20)
    plain = cluster_bootstrap(_mean_of(values), 20, ["m"], PLAIN, what="m")
    wide = cluster_bootstrap(_mean_of(values), 20, ["m"], BootstrapSettings(n_resamples=999), what="m")
    factor = np.sqrt(20 / 19) * stats.t.ppf(0.975, 19) / stats.norm.ppf(0.975)
    assert wide.expansion == pytest.approx(factor)
    assert wide.estimate[0] - wide.low[0] == pytest.approx(factor * (plain.estimate[0] - plain.low[0]))
    assert wide.high[0] - wide.estimate[0] == pytest.approx(factor * (plain.high[0] - plain.estimate[0]))


def test_undefined_and_constant_figures_say_so() -> None:
    values = np.vstack([np.full(6, np.nan), np.full(6, 0.5)])
    result = cluster_bootstrap(_mean_of(values), 6, ["undefined", "constant"], PLAIN, what="x")
    assert result.method[0] == "none: figure undefined"
    assert np.isnan([result.low[0], result.high[0]]).all()
    assert result.method[1] == "percentile (BCa undefined)"
    assert (result.low[1], result.high[1]) == (0.5, 0.5)


def test_p_values_agree_with_the_interval() -> None:
    """p < 1 - level exactly where the interval excludes the null (away from the resolution 1/B)."""
    rng = np.random.default_rng(5)
    values = rng.exponential(size=(1, 30)) + 0.3
    for settings in (
        PLAIN,
        BootstrapSettings(n_resamples=999),
        BootstrapSettings(n_resamples=999, method="percentile"),
    ):
        result = cluster_bootstrap(_mean_of(values), 30, ["m"], settings, what="m")
        low, high = result.low[0], result.high[0]
        width = high - low
        for null in np.linspace(low - width, high + width, 41):
            if min(abs(null - low), abs(null - high)) < 0.02 * width:
                continue
            p = result.p_values(null)[0]
            assert (p < 0.05) == (null < low or null > high), (settings, null, p, low, high)
        # At a bound the p-value is 1 - level, to the resolution of the resamples.
        assert result.p_values(low)[0] == pytest.approx(0.05, abs=0.01)
        assert result.p_values(high)[0] == pytest.approx(0.05, abs=0.01)


def test_paired_difference_matches_a_cluster_robust_regression() -> None:
    """The difference of two configurations' mean scores over 200 clusters: the bootstrap's interval
    and p-value are those of the cluster-robust mean (statsmodels, CR1 with t(C - 1)) within
    Monte Carlo error."""
    rng = np.random.default_rng(6)
    n_clusters, per = 200, 8
    cluster = np.repeat(np.arange(n_clusters), per)
    effect = rng.normal(size=n_clusters)[cluster]
    a = effect + rng.normal(size=cluster.size) + 0.12
    b = effect + rng.normal(size=cluster.size)
    sums = np.zeros((2, n_clusters))
    np.add.at(sums[0], cluster, a)
    np.add.at(sums[1], cluster, b)
    counts = np.bincount(cluster).astype(float)

    def statistic(weights: np.ndarray) -> np.ndarray:
        return (sums @ weights.T) / (weights @ counts)

    result = paired_bootstrap(
        statistic, n_clusters, ["a", "b"], [(0, 1)], BootstrapSettings(n_resamples=4000), what="a vs b"
    )
    row = result.differences.iloc[0]
    fit = sm.OLS(a - b, np.ones(cluster.size)).fit(
        cov_type="cluster", cov_kwds={"groups": cluster, "use_correction": True}
    )
    low, high = fit.conf_int(alpha=0.05)[0]
    assert row["difference"] == pytest.approx(fit.params[0])
    assert row["difference_low"] == pytest.approx(low, abs=0.1 * (high - low))
    assert row["difference_high"] == pytest.approx(high, abs=0.1 * (high - low))
    assert row["p_value"] == pytest.approx(fit.pvalues[0], abs=0.02 + 0.3 * fit.pvalues[0])


def test_paired_p_values_are_calibrated_under_the_null() -> None:
    """Two judges of equal quality on the same 30 clusters, 1000 times: p < 0.05 in about 5% of the
    repetitions (95% binomial range for 1000 repetitions at 5%: 3.6% to 6.4%)."""
    rng = np.random.default_rng(7)
    reps, n_clusters, per = 1000, 30, 20
    effect = rng.normal(size=(reps, n_clusters, 1, 1))
    judges = effect + rng.normal(size=(reps, n_clusters, 2, per))  # both judges share the cluster effect
    sums = judges.sum(axis=-1)  # reps, clusters, judge

    def statistic(weights: np.ndarray) -> np.ndarray:
        means = np.einsum("bc,rcj->rjb", weights, sums) / (weights.sum(axis=1) * per)
        return np.vstack([means[:, 0], means[:, 1]])

    names = [*(f"a{r}" for r in range(reps)), *(f"b{r}" for r in range(reps))]
    comparisons = [(r, reps + r) for r in range(reps)]
    result = paired_bootstrap(
        statistic, n_clusters, names, comparisons, BootstrapSettings(n_resamples=999), what="null"
    )
    rejected = float((result.differences["p_value"] < 0.05).mean())
    assert 0.03 <= rejected <= 0.075, rejected


def test_holm_and_benjamini_hochberg_by_hand() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.20, np.nan])
    # Holm: sorted 0.01, 0.03, 0.04, 0.20 times 4, 3, 2, 1, made monotone.
    np.testing.assert_allclose(adjust_p_values(p, "holm"), [0.04, 0.09, 0.09, 0.20, np.nan])
    # BH: p_(i) * 4 / i, made monotone from the top.
    np.testing.assert_allclose(adjust_p_values(p, "bh"), [0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.20, np.nan])
    with pytest.raises(ValueError, match="'bonferoni' is not one of holm, bh"):
        adjust_p_values(p, "bonferoni")
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        adjust_p_values(np.array([0.5, 1.2]))


def test_best_set_keeps_what_is_not_significantly_worse() -> None:
    differences = pd.DataFrame(
        {
            "configuration": ["b", "c", "d", "e"],
            "reference": ["a"] * 4,
            "difference": [-0.10, -0.01, -0.20, np.nan],
            "p_adjusted": [0.01, 0.40, 0.049, np.nan],
        }
    )
    members = best_set(["a", "b", "c", "d", "e", "f"], differences, "a", 0.95)
    assert members.tolist() == [True, False, True, False, False, False]
    assert top_index(np.array([0.2, np.nan, 0.5, 0.9]), np.array([True, True, True, False])) == 2
    assert top_index(np.array([0.3, 0.1]), higher_is_better=False) == 1
    assert top_index(np.array([np.nan])) is None


def test_holm_equals_statsmodels_on_random_families() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(8)
    for size in (1, 2, 7, 50):
        p = rng.random(size) ** 3
        p[: size // 3] = p[0]  # ties
        np.testing.assert_allclose(adjust_p_values(p, "holm"), multipletests(p, method="holm")[1], rtol=1e-12)
