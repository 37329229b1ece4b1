"""Metrics from per-cluster tables equal the plain ones (scipy, scikit-learn, krippendorff) on the
data a weighting stands for."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score, precision_score, recall_score

from argassets.platform.pairwise.agreement import score_agreement
from argassets.platform.stats.cluster_metrics import (
    ScoreClusters,
    classification_metrics,
    coincidence_from_value_counts,
    interval_alpha_from_sums,
    interval_alpha_sums,
    nominal_alpha_from_coincidence,
    weighted_tables,
)


def _expanded(cluster: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row indices of the data a row of integer cluster weights stands for (each cluster repeated)."""
    return np.concatenate([np.flatnonzero(cluster == c) for c in range(len(weights)) for _ in range(int(weights[c]))])


def test_score_metrics_equal_scipys_on_the_resampled_items() -> None:
    rng = np.random.default_rng(0)
    n_clusters, n = 12, 400
    cluster = rng.integers(0, n_clusters, n)
    x = rng.normal(size=n) + 0.3 * cluster
    y = 0.6 * x + rng.normal(size=n)
    x[:40] = np.round(x[:40])  # ties on both sides
    y[20:60] = 0.0
    y[5] = np.nan  # left out, as score_agreement does
    tables = ScoreClusters.build(x, y, cluster, n_clusters)
    weights = np.vstack([np.ones(n_clusters), rng.multinomial(n_clusters, np.ones(n_clusters) / n_clusters, 3)])
    got = tables.metrics(weights)
    for row, w in enumerate(weights):
        index = _expanded(cluster, w)
        expected = score_agreement(x[index], y[index])
        for metric in ("pearson", "spearman", "kendall", "mae", "rmse"):
            assert got[metric][row] == pytest.approx(expected[metric], abs=1e-10), (metric, row)


def test_a_constant_side_gives_undefined_correlations() -> None:
    cluster = np.repeat(np.arange(3), 4)
    tables = ScoreClusters.build(np.ones(12), np.arange(12.0), cluster, 3)
    got = tables.metrics(np.ones((1, 3)))
    assert np.isnan([got["pearson"][0], got["spearman"][0], got["kendall"][0]]).all()
    assert got["mae"][0] == pytest.approx(np.abs(1 - np.arange(12.0)).mean())


def test_classification_metrics_equal_scikit_learns() -> None:
    rng = np.random.default_rng(1)
    for trial in range(30):
        n = int(rng.integers(3, 40))
        gold = (rng.random(n) < rng.random()).astype(int)
        predicted = (rng.random(n) < rng.random()).astype(int)
        confusion = np.zeros((2, 2))
        np.add.at(confusion, (gold, predicted), 1.0)
        got = {k: float(v) for k, v in classification_metrics(confusion).items()}
        assert got["macro_f1"] == pytest.approx(f1_score(gold, predicted, average="macro"), abs=1e-12), trial
        assert got["micro_f1"] == pytest.approx(f1_score(gold, predicted, average="micro"), abs=1e-12)
        assert got["precision"] == pytest.approx(precision_score(gold, predicted, zero_division=0), abs=1e-12)
        assert got["recall"] == pytest.approx(recall_score(gold, predicted, zero_division=0), abs=1e-12)
        if len(set(gold)) > 1:
            assert got["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(gold, predicted), abs=1e-12)
        else:
            assert np.isnan(got["balanced_accuracy"])
        data = np.vstack([gold, predicted]).astype(float)
        if len(np.unique(data)) > 1:
            expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
            assert got["alpha_nominal"] == pytest.approx(expected, abs=1e-12)
        else:
            assert np.isnan(got["alpha_nominal"])


def test_nominal_alpha_of_many_raters_with_missing_values_equals_krippendorffs() -> None:
    rng = np.random.default_rng(2)
    raters, units, categories, n_clusters = 5, 120, 3, 8
    data = rng.integers(0, categories, size=(raters, units)).astype(float)
    data[:, :40] = data[0, :40]  # some agreement
    data[rng.random(data.shape) < 0.3] = np.nan
    counts = np.stack([(data == k).sum(axis=0) for k in range(categories)], axis=1)
    cluster = rng.integers(0, n_clusters, units)
    per_cluster = coincidence_from_value_counts(counts, cluster, n_clusters)
    weights = np.vstack([np.ones(n_clusters), rng.multinomial(n_clusters, np.ones(n_clusters) / n_clusters)])
    alphas = nominal_alpha_from_coincidence(weighted_tables(weights, per_cluster))
    for row, w in enumerate(weights):
        index = _expanded(cluster, w)
        expected = krippendorff.alpha(reliability_data=data[:, index], level_of_measurement="nominal")
        assert alphas[row] == pytest.approx(expected, abs=1e-10)


def test_interval_alpha_of_repetitions_with_missing_values_equals_krippendorffs() -> None:
    """Scores 0-100 from 5 raters, some missing, some units with one value: the sums give the package's alpha."""
    rng = np.random.default_rng(3)
    units, n_clusters = 300, 9
    truth = rng.integers(0, 101, units).astype(float)
    values = np.clip(truth[:, None] + rng.normal(0, 15, (units, 5)), 0, 100).round()
    values[rng.random(values.shape) < 0.2] = np.nan
    values[:7, 1:] = np.nan  # single values: not pairable
    cluster = rng.integers(0, n_clusters, units)
    per_cluster = interval_alpha_sums(values, cluster, n_clusters)
    weights = np.vstack([np.ones(n_clusters), rng.multinomial(n_clusters, np.ones(n_clusters) / n_clusters, 2)])
    alphas = interval_alpha_from_sums(weights @ per_cluster)
    for row, w in enumerate(weights):
        index = _expanded(cluster, w)
        expected = krippendorff.alpha(reliability_data=values[index].T, level_of_measurement="interval")
        assert alphas[row] == pytest.approx(expected, abs=1e-10)
    assert 0.5 < alphas[0] < 0.95  # the noise is a fifth of the spread: far from both 0 and 1


def test_interval_alpha_is_undefined_without_variation() -> None:
    values = np.full((20, 5), 50.0)
    assert np.isnan(interval_alpha_from_sums(interval_alpha_sums(values, np.zeros(20, dtype=int), 1).sum(axis=0)))
