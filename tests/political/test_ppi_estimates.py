"""Prediction-powered estimates: equal to ppi-python's own functions on the same data, valid under a
stratified sample (coverage by simulation, with the naive and the unstratified estimates as controls
that miss), and the knowledge-base rows on a small example worked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import ppi_py
import pytest

from argassets.political.validation.ppi import Strata, classical_mean, naive_mean, ppi_mean, stratified_mean
from argassets.political.validation.ppi_estimates import (
    assign_buckets,
    bucket_ranges,
    ratio_estimate,
    system_estimates,
)


def _data(seed: int = 0, n: int = 300, unlabelled: int = 3000):
    rng = np.random.default_rng(seed)
    y = rng.binomial(1, 0.4, n).astype(float)
    yhat = np.where(rng.random(n) < 0.8, y, 1 - y)
    yhat_u = rng.binomial(1, 0.45, unlabelled).astype(float)
    return y, yhat, yhat_u


def test_ppi_mean_is_ppi_python_on_the_same_data():
    y, yhat, yhat_u = _data()
    ours = ppi_mean(y, yhat, yhat_u, level=0.9)
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])))
    assert ours.estimate == pytest.approx(float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u))[0]))
    weights = np.linspace(1, 3, y.size)
    weighted = ppi_mean(y, yhat, yhat_u, level=0.9, weights=weights)
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, w=weights)
    assert (weighted.low, weighted.high) == pytest.approx((float(low[0]), float(high[0])))
    low, high = ppi_py.classical_mean_ci(y, alpha=0.1)
    assert (classical_mean(y, level=0.9).low, classical_mean(y, level=0.9).high) == pytest.approx((low, high))


def test_one_bucket_is_plain_ppi_and_buckets_are_ppi_pythons_weighted_estimate():
    y, yhat, yhat_u = _data(1)
    one = Strata(np.array(["a"] * y.size), np.array(["a"] * yhat_u.size), {"a": y.size + yhat_u.size})
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
    assert (stratified_mean(y, yhat, yhat_u, one, "ppi").low, stratified_mean(y, yhat, yhat_u, one, "ppi").high) == (
        pytest.approx(float(low[0])),
        pytest.approx(float(high[0])),
    )
    # three buckets: with lam = 1 the combined estimate is ppi_py's with weights N_h / n_h on the
    # labelled items and N_h / (N_h - n_h) on the unlabelled ones
    labelled = np.repeat(np.array(["a", "b", "c"]), 100)
    unlabelled = np.repeat(np.array(["a", "b", "c"]), [2000, 500, 500])
    sizes = {"a": 2100, "b": 600, "c": 600}
    strata = Strata(labelled, unlabelled, sizes)
    w = np.array([sizes[h] / 100 for h in labelled])
    w_u = np.array([sizes[h] / (sizes[h] - 100) for h in unlabelled])
    expected = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=1, w=w, w_unlabeled=w_u)
    assert stratified_mean(y, yhat, yhat_u, strata, "ppi", lam=1.0).estimate == pytest.approx(
        float(np.ravel(expected)[0])
    )


def _population(rng: np.random.Generator):
    """Three buckets of 4,000, 500 and 750 arguments, 20%, 45% and 65% political; a predictor that
    misses half the political arguments of the first bucket and errs 15% of the time elsewhere."""
    bucket = np.repeat(np.array(["high", "mid", "low"]), [4000, 500, 750])
    truth = rng.random(bucket.size) < np.select([bucket == "high", bucket == "mid"], [0.2, 0.45], 0.65)
    flip = rng.random(bucket.size) < np.where(bucket == "high", np.where(truth, 0.5, 0.0), 0.15)
    return bucket, truth.astype(float), np.where(flip, 1 - truth, truth).astype(float)


def test_stratified_ppi_covers_the_truth_and_the_naive_and_unstratified_estimates_do_not():
    """The sample takes 200, 100 and 200 arguments of the buckets (rates 5%, 20%, 27%, as the study's
    400, 200 and 400 did). Over 250 samples the stratified PPI interval covers the population share
    in at least 93%; the predictions alone (biased) and PPI that treats the sample as uniform (it
    over-weights the small buckets) rarely do."""
    rng = np.random.default_rng(3)
    bucket, y, yhat = _population(rng)
    truth = y.mean()
    sizes = {h: int((bucket == h).sum()) for h in ("high", "mid", "low")}
    hits = {"stratified": 0, "naive": 0, "uniform": 0}
    for _ in range(250):
        chosen = np.concatenate(
            [
                rng.choice(np.flatnonzero(bucket == h), n, replace=False)
                for h, n in (("high", 200), ("mid", 100), ("low", 200))
            ]
        )
        rest = np.setdiff1d(np.arange(bucket.size), chosen)
        strata = Strata(bucket[chosen], bucket[rest], sizes)
        estimates = {
            "stratified": stratified_mean(y[chosen], yhat[chosen], yhat[rest], strata, "ppi"),
            "naive": naive_mean(yhat),
            "uniform": ppi_mean(y[chosen], yhat[chosen], yhat[rest]),
        }
        for name, estimate in estimates.items():
            hits[name] += estimate.low <= truth <= estimate.high
    assert hits["stratified"] / 250 >= 0.93
    assert hits["naive"] / 250 <= 0.05 and hits["uniform"] / 250 <= 0.5


def test_the_position_ratio_covers_the_truth():
    """The mean position of the arguments the humans call political, the position known everywhere
    and the label only on the sample: the delta-method interval covers the population value in at
    least 93% of 300 samples."""
    rng = np.random.default_rng(9)
    bucket, y, yhat = _population(rng)
    position = rng.normal(40, 12, bucket.size) + 8 * y
    truth = (y * position).sum() / y.sum()
    sizes = {h: int((bucket == h).sum()) for h in ("high", "mid", "low")}
    hits = 0
    for _ in range(300):
        chosen = np.concatenate(
            [
                rng.choice(np.flatnonzero(bucket == h), n, replace=False)
                for h, n in (("high", 200), ("mid", 100), ("low", 200))
            ]
        )
        rest = np.setdiff1d(np.arange(bucket.size), chosen)
        strata = Strata(bucket[chosen], bucket[rest], sizes)

        def mean(a, b, c, estimator, lam, strata=strata):  # noqa: ANN001, ANN202
            return stratified_mean(a, b, c, strata, estimator, lam=lam)

        numerators = (y[chosen] * position[chosen], yhat[chosen] * position[chosen], yhat[rest] * position[rest])
        estimate = ratio_estimate(mean, numerators, (y[chosen], yhat[chosen], yhat[rest]), "ppi", 0.95)
        hits += estimate.low <= truth <= estimate.high
    assert hits / 300 >= 0.93


def test_knowledge_base_rows_on_a_small_example():
    """Twelve arguments in the buckets (six labelled), eight outside; the system says political for
    the first ten. The humans' bounds over the KB put the unsampled eight at none or all political."""
    arguments = pd.DataFrame(
        {
            "argument_id": [f"a{i}" for i in range(20)],
            "bucket": ["low"] * 4 + ["mid"] * 4 + ["high"] * 4 + ["outside"] * 8,
            "debate": ["d1", "d2"] * 10,
        }
    )
    items = pd.DataFrame(
        {
            "argument_id": ["a0", "a1", "a4", "a5", "a8", "a9"],
            "y": [1, 0, 1, 1, 0, 1],
            "bucket": ["low", "low", "mid", "mid", "high", "high"],
        }
    )
    predictions = pd.DataFrame(
        {
            "argument_id": arguments["argument_id"],
            "prob_na": [0.0] * 10 + [1.0] * 10,
            "position": [30.0] * 10 + [np.nan] * 10,
        }
    )
    table = system_estimates(items, predictions, arguments).set_index(["estimand", "scope", "debate", "estimator"])
    buckets = table.loc[("political_share", "buckets", "all", "classical")]
    assert buckets["estimate"] == pytest.approx((0.5 + 1.0 + 0.5) / 3)  # equal buckets of four
    kb = table.loc[("political_share", "kb", "all", "classical")]
    assert np.isnan(kb["estimate"]) and kb["low"] == pytest.approx(0.6 * buckets["low"])
    assert kb["high"] == pytest.approx(0.6 * buckets["high"] + 0.4)
    naive = table.loc[("political_share", "kb", "all", "naive")]
    assert naive["estimate"] == pytest.approx(0.5) and naive["n_population"] == 20
    assert table.loc[("political_share", "buckets", "all", "naive"), "estimate"] == pytest.approx(10 / 12)


def test_buckets_come_from_the_sample_and_bad_input_is_refused():
    items = pd.DataFrame({"n_type": ["low", "low", "mid", "high"], "e3_prob_na": [0.0, 2 / 60, 0.5, 1.0]})
    ranges = bucket_ranges(items)
    assert ranges["low"] == (0.0, pytest.approx(2 / 60))
    buckets = assign_buckets(pd.Series([0.01, 0.2, 0.5, 0.99, np.nan]), ranges)
    assert buckets.tolist() == ["low", "outside", "mid", "outside", "outside"]
    with pytest.raises(ValueError, match="no item of bucket 'high'"):
        bucket_ranges(items[items["n_type"] != "high"])
    y, yhat, yhat_u = _data(2, n=3)
    with pytest.raises(ValueError, match="bucket 'b' has 1 labelled item"):
        stratified_mean(
            y, yhat, yhat_u, Strata(np.array(["a", "a", "b"]), np.array(["a"] * 3000), {"a": 1, "b": 1}), "ppi"
        )
    with pytest.raises(ValueError, match="unknown estimator 'mode'"):
        stratified_mean(y, yhat, yhat_u, Strata(np.array(["a"] * 3), np.array(["a"] * 3000), {"a": 1}), "mode")
    with pytest.raises(ValueError, match="1 labels"):
        ppi_mean(y[:1], yhat[:1], yhat_u)
    with pytest.raises(ValueError, match="level must lie in"):
        ppi_mean(y, yhat, yhat_u, level=1.0)
