"""Length bias, tested the choix way: hand-computed cases, synthetic data with known answers,
explicit tolerances and error paths."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from sklearn.metrics import cohen_kappa_score

from argassets.argument_quality.length_bias import (
    length_strata,
    log_length_ratio,
    longer_share,
    partial_correlation,
    stratified_agreement,
)
from argassets.argument_quality.length_bias_checks import length_bias_problems
from argassets.argument_quality.length_bias_model import length_controlled_bt
from argassets.argument_quality.length_bias_report import length_bias_report
from argassets.platform.pairwise.bradley_terry import z_normalise

A, B, TIE, MISSING = 0, 1, 2, -1


# --- Small functions -------------------------------------------------------------------------------


def test_log_length_ratio_and_its_errors():
    ratio = log_length_ratio([10, 5, 0, 7], [5, 10, 1, 7])
    np.testing.assert_allclose(ratio, [np.log(2), -np.log(2), 0.0, 0.0])  # 0 words count as 1
    with pytest.raises(ValueError, match="comparison 1: lengths must be finite and >= 0"):
        log_length_ratio([1, -2], [1, 1])
    with pytest.raises(ValueError, match="comparison 0"):
        log_length_ratio([np.nan], [1])
    with pytest.raises(ValueError, match="differ in shape"):
        log_length_ratio([1, 2], [1])


def test_longer_share_counts_decisive_verdicts_between_unequal_lengths():
    # ratio > 0: A is longer. Ties, missing verdicts and equal lengths do not count.
    codes = np.array([A, A, B, B, TIE, MISSING, A, B])
    ratio = np.array([1.0, -1.0, -0.5, 0.5, 2.0, 1.0, 0.0, 0.3])
    share, longer, decisive = longer_share(codes, ratio)
    assert decisive.tolist() == [5] and longer.tolist() == [2]  # rows 0 and 2 go to the longer one
    assert share[0] == pytest.approx(0.4, abs=1e-15)
    share, longer, decisive = longer_share(codes, ratio, np.array([0, 0, 0, 0, 1, 1, 1, 2]), 4)
    assert decisive.tolist() == [4, 0, 1, 0] and longer.tolist() == [2, 0, 0, 0]
    assert share[0] == 0.5 and np.isnan(share[1]) and share[2] == 0.0 and np.isnan(share[3])
    with pytest.raises(ValueError, match="differ in shape"):
        longer_share(codes[:3], ratio)


def test_length_strata_are_quantiles_of_the_reference():
    reference = np.arange(1.0, 9.0)  # 1..8: quartile edges 1, 2.75, 4.5, 6.25, 8
    stratum, edges = length_strata(reference, n_strata=4)
    np.testing.assert_allclose(edges, [1.0, 2.75, 4.5, 6.25, 8.0])
    assert stratum.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    placed, _ = length_strata(np.array([0.0, 2.75, 2.76, 100.0]), reference=reference)
    assert placed.tolist() == [0, 0, 1, 3]  # an edge belongs to the lower stratum
    with pytest.raises(ValueError, match="non-empty reference"):
        length_strata(np.array([1.0]), reference=np.array([]))
    with pytest.raises(ValueError, match="finite and >= 0"):
        length_strata(np.array([-1.0]), reference=reference)
    with pytest.raises(ValueError, match="n_strata must be >= 1"):
        length_strata(reference, n_strata=0)


def test_stratified_agreement_matches_scikit_learn_per_cell():
    rng = np.random.default_rng(3)
    n = 600
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, 3, n))
    a[::37] = MISSING
    stratum = rng.integers(0, 4, n)
    groups = rng.integers(0, 2, n)
    out = stratified_agreement(a, b, stratum, groups, 2, 4)
    for g in range(2):
        for s in range(4):
            cell = (groups == g) & (stratum == s) & (a >= 0)
            assert out["n_comparisons"][g, s] == cell.sum()
            assert out["cohen_kappa"][g, s] == pytest.approx(cohen_kappa_score(a[cell], b[cell]), abs=1e-12)
            assert out["percent_agreement"][g, s] == pytest.approx(100 * (a[cell] == b[cell]).mean(), abs=1e-12)
    with pytest.raises(ValueError, match="one value per comparison"):
        stratified_agreement(a[:5], b, stratum, groups, 2, 4)
    with pytest.raises(ValueError, match="below n_categories"):
        stratified_agreement(np.array([5]), np.array([0]), np.array([0]), np.array([0]), 1, 1)


def test_partial_correlation_equals_the_textbook_formula_and_removes_a_common_cause():
    rng = np.random.default_rng(7)
    z = rng.normal(size=5000)
    x = z + rng.normal(size=5000)
    y = 0.5 * z + rng.normal(size=5000) + 0.3 * x
    r = np.corrcoef([x, y, z])
    expected = (r[0, 1] - r[0, 2] * r[1, 2]) / np.sqrt((1 - r[0, 2] ** 2) * (1 - r[1, 2] ** 2))
    assert partial_correlation(x, y, z) == pytest.approx(expected, abs=1e-12)
    # Two variables that share only a common cause: correlated, but not once it is partialled out.
    u = z + rng.normal(size=5000)
    v = z + rng.normal(size=5000)
    assert np.corrcoef(u, v)[0, 1] == pytest.approx(0.5, abs=0.03)
    assert abs(partial_correlation(u, v, z)) < 0.03
    assert np.isnan(partial_correlation(x[:3], y[:3], z[:3]))  # too few triples
    assert np.isnan(partial_correlation(x, y, np.ones_like(z)))  # constant control
    with pytest.raises(ValueError, match="shapes differ"):
        partial_correlation(x, y[:-1], z)


# --- Length-controlled Bradley-Terry -------------------------------------------------------------


def _simulate(theta: np.ndarray, x: np.ndarray, beta: float, pairs: int, block: np.ndarray, seed: int):
    rng = np.random.default_rng(seed)
    ia, ib = [], []
    for k in np.unique(block):
        members = np.flatnonzero(block == k)
        a = rng.choice(members, pairs)
        b = rng.choice(members, pairs)
        keep = a != b
        ia.append(a[keep])
        ib.append(b[keep])
    ia, ib = np.concatenate(ia), np.concatenate(ib)
    p = 1 / (1 + np.exp(-(theta[ia] - theta[ib] + beta * (x[ia] - x[ib]))))
    codes = np.where(rng.random(len(ia)) < p, A, B)
    return ia, ib, codes


def _objective(params, ia, ib, codes, x, ridge, tie_weight, fit_beta=True):
    theta, beta = (params[:-1], params[-1]) if fit_beta else (params, 0.0)
    eta = theta[ia] - theta[ib] + beta * (x[ia] - x[ib])
    value = -np.sum(np.where(codes == A, -np.logaddexp(0, -eta), 0.0))
    value += -np.sum(np.where(codes == B, -np.logaddexp(0, eta), 0.0))
    value += tie_weight * np.sum(np.where(codes == TIE, np.logaddexp(0, -eta) + np.logaddexp(0, eta), 0.0))
    return value + 0.5 * ridge * (np.sum(theta**2) + beta**2)


def _within_block_slope(values: np.ndarray, x: np.ndarray, block: np.ndarray) -> float:
    vc, xc = values.copy(), x.copy()
    for k in np.unique(block):
        vc[block == k] -= vc[block == k].mean()
        xc[block == k] -= xc[block == k].mean()
    return float((vc * xc).sum() / (xc * xc).sum())


def test_length_controlled_bt_splits_strength_into_a_length_part_and_the_rest():
    """The length of an argument is fixed, so only the penalty separates beta from theta: beta is
    the within-topic least-squares slope of the strengths on log length, theta the residual."""
    rng = np.random.default_rng(11)
    n = 120
    block = np.repeat(np.arange(4), n // 4)
    x = rng.normal(4.0, 0.8, n)  # log lengths
    theta = rng.normal(0, 1, n)
    strength = theta + 0.7 * x
    ia, ib, codes = _simulate(theta, x, 0.7, 6000, block, seed=12)
    fit = length_controlled_bt(ia, ib, codes, x, block, ridge=0.01)
    expected = _within_block_slope(strength, x, block)  # 0.7 plus the sample slope of theta on x
    assert fit.beta == pytest.approx(expected, abs=0.05)
    # At the optimum sum_i x_i theta_i = beta exactly (the two stationarity conditions combined):
    # theta keeps only 1/S_xx of the slope, almost nothing of length.
    assert float(np.sum(x * fit.theta)) == pytest.approx(fit.beta, abs=1e-7)
    assert abs(_within_block_slope(fit.theta, x, block)) < 0.02
    residual = theta - _within_block_slope(theta, x, block) * x
    assert np.corrcoef(fit.theta, residual)[0, 1] > 0.97
    for k in range(4):  # the penalty centres every block
        assert abs(fit.theta[block == k].sum()) < 1e-8
    # The plain fit (beta fixed at 0) carries the length part in theta: regressed on length, its
    # slope is the length-controlled beta.
    plain = length_controlled_bt(ia, ib, codes, x, block, ridge=0.01, fit_beta=False)
    assert plain.beta == 0.0
    assert _within_block_slope(plain.theta, x, block) == pytest.approx(fit.beta, abs=0.02)
    # Strengths unrelated to length: beta near 0.
    flat = length_controlled_bt(*_simulate(theta, x, 0.0, 6000, block, seed=13), x, block, ridge=0.01)
    assert flat.beta == pytest.approx(_within_block_slope(theta, x, block), abs=0.05)


def test_length_controlled_bt_is_the_minimum_of_its_objective():
    rng = np.random.default_rng(5)
    n = 30
    block = np.repeat([0, 1], 15)
    x = rng.normal(3, 1, n)
    ia, ib, codes = _simulate(rng.normal(size=n), x, -0.4, 200, block, seed=6)
    codes[::9] = TIE
    codes[::31] = MISSING
    for ties, weight in (("win_each", 1.0), ("half_each", 0.5), ("drop", 0.0)):
        fit = length_controlled_bt(ia, ib, codes, x, block, ties=ties, ridge=0.3)
        reference = optimize.minimize(
            _objective, np.zeros(n + 1), args=(ia, ib, codes, x, 0.3, weight), method="BFGS", options={"gtol": 1e-10}
        )
        np.testing.assert_allclose(fit.theta, reference.x[:-1], atol=1e-5)
        assert fit.beta == pytest.approx(reference.x[-1], abs=1e-5)
    fixed = length_controlled_bt(ia, ib, codes, x, block, ridge=0.3, fit_beta=False)
    reference = optimize.minimize(
        _objective, np.zeros(n), args=(ia, ib, codes, x, 0.3, 1.0, False), method="BFGS", options={"gtol": 1e-10}
    )
    np.testing.assert_allclose(fixed.theta, reference.x, atol=1e-5)


def test_length_controlled_bt_stays_finite_when_length_decides_every_verdict():
    x = np.log(np.array([10.0, 20.0, 40.0, 80.0]))
    ia = np.array([0, 1, 2, 0, 1, 0])
    ib = np.array([1, 2, 3, 2, 3, 3])
    codes = np.full(6, B)  # the longer one (b) always wins
    fit = length_controlled_bt(ia, ib, codes, x, ridge=0.1)
    assert np.isfinite(fit.beta) and fit.beta > 1 and np.isfinite(fit.theta).all()
    # Unpenalised, beta would be infinite; more of the same evidence pushes it up, finitely.
    more = length_controlled_bt(np.tile(ia, 50), np.tile(ib, 50), np.tile(codes, 50), x, ridge=0.1)
    assert fit.beta < more.beta < np.inf


def test_length_controlled_bt_errors():
    x = np.zeros(3)
    ok = dict(item_a=[0], item_b=[1], codes=[A], log_length=x)
    with pytest.raises(ValueError, match="ridge must be > 0"):
        length_controlled_bt(**ok, ridge=0.0)
    with pytest.raises(ValueError, match="ties must be one of"):
        length_controlled_bt(**ok, ties="coin")
    with pytest.raises(ValueError, match=r"item indices must be in 0..2"):
        length_controlled_bt([0], [3], [A], x)
    with pytest.raises(ValueError, match=r"comparison 0 crosses blocks \(0 and 1\)"):
        length_controlled_bt([0], [2], [A], x, block=[0, 0, 1])
    with pytest.raises(ValueError, match="one value per comparison"):
        length_controlled_bt([0, 1], [1], [A], x)
    with pytest.raises(ValueError, match="finite"):
        length_controlled_bt(**{**ok, "log_length": [0.0, np.inf, 0.0]})
    with pytest.raises(RuntimeError, match="did not converge in 1 Newton steps"):
        length_controlled_bt([0, 1], [1, 2], [A, B], np.array([0.0, 1.0, 2.0]), max_iter=1)


# --- The report on a small synthetic corpus ------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus():
    """Two topics of 12 arguments; the experts prefer the longer argument in 80% of their verdicts."""
    rng = np.random.default_rng(21)
    rows, comparisons = [], []
    for topic in (1, 2):
        for arg in range(12):
            rows.append(
                {
                    "topic_id": topic,
                    "discussion_id": arg,
                    "argument_id": 1,
                    "text_length": int(rng.integers(5, 300)),
                    "published_logic": rng.normal(),
                }
            )
    arguments = pd.DataFrame(rows)
    length = arguments.set_index(["topic_id", "discussion_id"])["text_length"]
    k = 0
    for topic in (1, 2):
        for a in range(12):
            for b in range(a + 1, 12):
                la, lb = length[(topic, a)], length[(topic, b)]
                longer = "A" if la > lb else "B"
                label = longer if rng.random() < 0.8 else ("B" if longer == "A" else "A")
                if rng.random() < 0.1:
                    label = "Tie"
                comparisons.append(
                    {
                        "comparison_id": f"logic-{k:05d}",
                        "dimension": "logic",
                        "topic_id": topic,
                        "discussion_id_a": a,
                        "argument_id_a": 1,
                        "discussion_id_b": b,
                        "argument_id_b": 1,
                        "label": label,
                    }
                )
                k += 1
    experts = pd.DataFrame(comparisons)
    reference = arguments.rename(columns={"published_logic": "published_z"}).assign(dimension="logic")
    return arguments, experts, reference


def _majority(experts, arguments, model, rule):
    length = arguments.set_index(["topic_id", "discussion_id"])["text_length"]
    la = length.loc[list(zip(experts["topic_id"], experts["discussion_id_a"], strict=True))].to_numpy()
    lb = length.loc[list(zip(experts["topic_id"], experts["discussion_id_b"], strict=True))].to_numpy()
    labels = rule(la, lb, experts)
    return experts[["comparison_id", "dimension", "topic_id"]].assign(
        model=model, strategy="zero", majority_label=labels
    )


def _scores(keyed: pd.DataFrame) -> pd.DataFrame:
    """A stand-in for BT z-scores: wins minus losses per argument, z-normalised (enough for correlations)."""
    rows = []
    for model, part in keyed.groupby("model"):
        net: dict[tuple[int, int], int] = {}
        for label, a_key, b_key in zip(part["majority_label"], part["_a"], part["_b"], strict=True):
            net[a_key] = net.get(a_key, 0) + {"A": 1, "B": -1}.get(label, 0)
            net[b_key] = net.get(b_key, 0) + {"A": -1, "B": 1}.get(label, 0)
        keys = sorted(net)
        z = z_normalise(np.array([net[k] for k in keys], dtype=float))
        for (topic, discussion), value in zip(keys, z, strict=True):
            rows.append(
                {
                    "model": model,
                    "strategy": "zero",
                    "dimension": "logic",
                    "topic_id": topic,
                    "discussion_id": discussion,
                    "argument_id": 1,
                    "bt_z": value,
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def report(corpus):
    arguments, experts, reference = corpus
    longer = _majority(
        experts, arguments, "longer", lambda la, lb, e: np.where(la > lb, "A", np.where(lb > la, "B", "Tie"))
    )
    shorter = _majority(
        experts, arguments, "shorter", lambda la, lb, e: np.where(la < lb, "A", np.where(lb < la, "B", "Tie"))
    )
    copy = _majority(experts, arguments, "copy", lambda la, lb, e: e["label"].to_numpy())
    majority = pd.concat([longer, shorter, copy], ignore_index=True)
    keyed = majority.merge(experts[["comparison_id", "discussion_id_a", "discussion_id_b"]], on="comparison_id")
    keyed["_a"] = list(zip(keyed["topic_id"], keyed["discussion_id_a"], strict=True))
    keyed["_b"] = list(zip(keyed["topic_id"], keyed["discussion_id_b"], strict=True))
    scores = _scores(keyed)
    flags = {"longer": (True, "full"), "shorter": (False, "full"), "copy": (False, "full")}
    out, edges = length_bias_report(experts, majority, scores, arguments, reference, flags)
    return out.set_index(["model", "dimension"]), edges, majority, experts


def test_report_shares_are_known_by_construction(report):
    table, edges, _, experts = report
    assert table.loc[("longer", "logic"), "share_longer"] == 1.0
    assert table.loc[("shorter", "logic"), "share_longer"] == 0.0
    expert_share = table.loc[("experts", "logic"), "share_longer"]
    assert 0.7 < expert_share < 0.9  # 80% by construction, sampling noise on ~120 verdicts
    assert table.loc[("copy", "logic"), "share_longer"] == expert_share  # the same verdicts
    assert table.loc[("copy", "logic"), "delta_share"] == 0.0
    assert table.loc[("longer", "logic"), "delta_share"] == pytest.approx(1 - expert_share, abs=1e-15)
    assert table.loc[("longer", "all"), "share_longer"] == 1.0
    assert table.loc[("experts", "all"), "kind"] == "reference" and table.loc[("longer", "all"), "kind"] == "baseline"
    assert table.loc[("shorter", "all"), "kind"] == "measured"
    assert int(edges["n_comparisons"].sum()) == len(experts)


def test_report_strata_agreement_and_length_controlled_fit(report):
    table, _, _, _ = report
    copy = table.loc[("copy", "logic")]
    for k in range(1, 5):  # a copy of the experts agrees perfectly in every stratum
        assert copy[f"kappa_q{k}"] == pytest.approx(1.0, abs=1e-12) and copy[f"agreement_q{k}"] == 100.0
    assert sum(copy[f"n_q{k}"] for k in range(1, 5)) == 132
    assert np.isnan(table.loc[("experts", "logic"), "kappa_q1"])  # no agreement with themselves
    # The longer-wins judge agrees with the experts more where lengths differ more.
    longer = table.loc[("longer", "logic")]
    assert longer["agreement_q4"] > longer["agreement_q1"]
    # The experts' labels carry a positive length coefficient; the length judges a huge one each way.
    assert table.loc[("experts", "logic"), "lc_beta"] > 0.5
    assert table.loc[("longer", "logic"), "lc_beta"] > 3 and table.loc[("shorter", "logic"), "lc_beta"] < -3
    assert table.loc[("copy", "logic"), "lc_beta"] == pytest.approx(
        table.loc[("experts", "logic"), "lc_beta"], abs=1e-12
    )
    # A judge's scores correlate with log length as much as its verdicts follow it.
    assert table.loc[("longer", "logic"), "length_correlation"] > 0.9
    assert table.loc[("shorter", "logic"), "length_correlation"] < -0.9


def test_report_problems_detect_missing_and_out_of_range_rows(report):
    table, _, majority, _ = report
    flat = table.reset_index()
    configurations = majority[["model", "strategy", "dimension"]].drop_duplicates()
    assert length_bias_problems(flat, configurations).empty
    broken = flat[~((flat["model"] == "copy") & (flat["dimension"] == "all"))].copy()
    broken.loc[broken.index[0], "share_longer"] = 1.5
    broken.loc[broken.index[1], "kappa_q2"] = -2.0
    problems = length_bias_problems(broken, configurations)
    assert set(problems["problem"]) == {"missing", "share_longer out of range: 1.5", "kappa_q2 out of range: -2.0"}
    doubled = pd.concat([flat, flat.iloc[:1]], ignore_index=True)
    assert (length_bias_problems(doubled, configurations)["problem"] == "given twice").sum() == 1


def test_report_errors_name_the_bad_input(corpus):
    arguments, experts, reference = corpus
    majority = pd.DataFrame(
        {
            "model": ["m"],
            "strategy": ["zero"],
            "dimension": ["logic"],
            "comparison_id": ["logic-99999"],
            "majority_label": ["A"],
        }
    )
    empty_scores = pd.DataFrame(
        columns=["model", "strategy", "dimension", "topic_id", "discussion_id", "argument_id", "bt_z"]
    )
    with pytest.raises(
        ValueError, match=r"comparison 'logic-99999' \(logic\) of model 'm' is not in webis_expert_comparisons"
    ):
        length_bias_report(experts, majority, empty_scores, arguments, reference)
    with pytest.raises(ValueError, match="webis_arguments: missing column"):
        length_bias_report(experts, majority.iloc[0:0], empty_scores, arguments.drop(columns="text_length"), reference)
    stray = experts.copy()
    stray.loc[0, "discussion_id_a"] = 777
    with pytest.raises(ValueError, match="names argument 777/1 of topic 1, which webis_arguments lacks"):
        length_bias_report(stray, majority.iloc[0:0], empty_scores, arguments, reference)
    bad = arguments.copy()
    bad.loc[3, "text_length"] = -5
    with pytest.raises(ValueError, match=r"argument \(topic 1, discussion 3, argument 1\) has text_length -5"):
        length_bias_report(experts, majority.iloc[0:0], empty_scores, bad, reference)


def test_pearson_of_bt_scores_with_experts_is_reported(report):
    table, _, _, _ = report
    copy = table.loc[("copy", "logic")]
    assert np.isfinite(copy["pearson"]) and np.isfinite(copy["partial_pearson"])
    assert copy["n_items"] == 24
    # The copy's stand-in scores follow the expert labels, which follow length: part of the
    # correlation with the (random) reference z-scores goes, part stays, once length is partialled out.
    assert abs(copy["partial_pearson"]) <= 1.0
