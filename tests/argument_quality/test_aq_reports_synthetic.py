"""The report functions on synthetic judgments of the real corpus (known structure, known answers)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from argassets.argument_quality.agreement_intervals import AGREEMENT_METRICS, agreement_values
from argassets.argument_quality.agreement_reports import (
    AGREEMENT_COLUMNS,
    agreement_analysis,
    agreement_report,
    best_configuration,
    cross_model_report,
)
from argassets.argument_quality.bt_scores import MEAN_DIMENSION, expected_bt_scores, llm_bt_scores
from argassets.argument_quality.configurations import ModelInfo, model_info
from argassets.argument_quality.corpus import load_corpus, locate_corpus
from argassets.argument_quality.ensembles import ensemble_members, ensemble_report
from argassets.argument_quality.plots import plot_agreement_heatmap, plot_scores_vs_experts
from argassets.argument_quality.position_bias import position_bias_report
from argassets.argument_quality.report_checks import (
    disconnected_topics,
    metric_range_violations,
    report_configuration_mismatch,
)
from argassets.argument_quality.synthetic import SyntheticJudge, synthetic_judgments
from argassets.argument_quality.variability_report import variability_report
from argassets.argument_quality.voting import majority_votes
from argassets.platform.reporting.presentation import markdown_table
from argassets.studies import parse_registry

JUDGES = [
    SyntheticJudge("sharp", noise=0.2, tie_band=0.2, probabilities=True),
    SyntheticJudge("blurry", noise=1.5, tie_band=0.3, invalid_rate=0.02),
    SyntheticJudge("biased", noise=0.6, first_bias=0.8, swapped=True),
    SyntheticJudge("coin", noise=1e4, tie_band=0.0, is_baseline=True, probabilities=True),
]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

REGISTRY = parse_registry(
    {
        "models": [
            {"name": "sharp", "backend": "openai", "model_id": "x/sharp", "studies": ["argument_quality"]},
            {"name": "blurry", "backend": "openai", "model_id": "x/blurry", "studies": ["argument_quality"]},
            {
                "name": "biased",
                "backend": "openai",
                "model_id": "x/b",
                "studies": ["argument_quality"],
                "position_bias": True,
            },
            # "coin" was removed from the registry; its judgments remain.
        ]
    }
)


@pytest.fixture(scope="module")
def corpus(shared_data_dir: Path):
    return load_corpus(locate_corpus(shared_data_dir))


@pytest.fixture(scope="module")
def judged(corpus):
    arguments, comparisons = corpus
    judgments = synthetic_judgments(comparisons, arguments, JUDGES, strategies=("zero", "few"), seed=3)
    majority = majority_votes(judgments)
    scores = llm_bt_scores(majority, comparisons, arguments)
    info = model_info(judgments.drop_duplicates("judge_model"), REGISTRY)
    analysis = agreement_analysis(scores, majority, comparisons, arguments, info)
    return {
        "judgments": judgments,
        "majority": majority,
        "scores": scores,
        "info": info,
        "report": analysis.report,
        "comparisons": analysis.comparisons,
        "corpus": (arguments, comparisons),
    }


def test_agreement_report_shape_and_ranking(judged):
    report = judged["report"]
    assert list(report.columns) == AGREEMENT_COLUMNS
    assert len(report) == 4 * 2 * 4  # models x strategies x (3 dimensions + mean)
    rows = report[report["dimension"] != MEAN_DIMENSION]
    assert (rows["n_comparisons"] + rows["n_no_verdict"] == 13952).all()
    assert (rows["n_items"] == 1269).all()
    means = report[report["dimension"] == MEAN_DIMENSION].set_index(["model", "strategy"])
    order = means.xs("zero", level="strategy")["correlation_mean"].sort_values(ascending=False).index.tolist()
    # Less noise, better agreement (the position-biased judge's bias acts as extra noise).
    assert order.index("sharp") == 0 and order.index("coin") == 3
    assert means.loc[("sharp", "zero"), "pearson"] > 0.95
    assert abs(means.loc[("coin", "zero"), "pearson"]) < 0.1
    # Mean rows are the mean of the dimension rows.
    sharp = report[(report["model"] == "sharp") & (report["strategy"] == "few")]
    dims = sharp[sharp["dimension"] != MEAN_DIMENSION]
    mean = sharp[sharp["dimension"] == MEAN_DIMENSION].iloc[0]
    for metric in ("pearson", "kendall", "mae", "cohen_kappa", "percent_agreement"):
        assert mean[metric] == pytest.approx(dims[metric].mean())
    assert mean["n_comparisons"] == dims["n_comparisons"].sum()
    assert metric_range_violations(report).empty


def test_best_configuration_is_marked_and_prefers_registry_non_baselines(judged):
    report = judged["report"]
    best = best_configuration(report)
    assert best is not None and best[0] == "sharp"
    # The best set: sharp's two strategies (the same judge, not distinguishable), nothing else.
    assert set(report.loc[report["best_set"], "model"]) == {"sharp"}
    assert report["best_set"].sum() == 2 * 4
    # A baseline is never "best", even with better numbers; with only baselines there is no best.
    boosted = report.copy()
    boosted.loc[boosted["model"] == "coin", "cohen_kappa"] = 1.0
    assert best_configuration(boosted)[0] == "sharp"
    baselines_only = boosted[boosted["is_baseline"].astype(bool)]
    assert best_configuration(baselines_only) is None
    assert best_configuration(baselines_only, baselines=True)[0] == "coin"
    # Ranked by the declared metric: another metric can choose another configuration.
    boosted.loc[(boosted["model"] == "biased") & (boosted["strategy"] == "few"), "pearson"] = 1.0
    assert best_configuration(boosted, "pearson") == ("biased", "few")


def test_flags_label_baselines_and_models_removed_from_the_registry(judged):
    info = judged["info"]
    assert info["coin"] == ModelInfo(is_baseline=True, scope="full", in_registry=False, position_bias=False)
    assert info["biased"].position_bias and info["biased"].in_registry
    report = judged["report"]
    coin = report[report["model"] == "coin"]
    assert (~coin["in_registry"]).all() and coin["is_baseline"].all()


def test_cross_model_report_against_the_best(judged):
    best = best_configuration(judged["report"])
    cross = cross_model_report(judged["scores"], judged["majority"], best, judged["info"])
    assert len(cross) == 32
    assert set(cross["best_model"]) == {best[0]} and set(cross["best_strategy"]) == {best[1]}
    itself = cross[(cross["model"] == best[0]) & (cross["strategy"] == best[1])]
    assert np.allclose(itself[["pearson", "spearman", "kendall", "cohen_kappa", "krippendorff_alpha"]], 1.0)
    assert np.allclose(itself[["mae", "rmse"]], 0.0)
    assert (itself["percent_agreement"] == 100.0).all()
    other = cross[(cross["model"] == "coin") & (cross["dimension"] == MEAN_DIMENSION)]
    assert (other["pearson"].abs() < 0.1).all()
    assert metric_range_violations(cross).empty
    missing, extra = report_configuration_mismatch(cross, judged["majority"])
    assert missing.empty and extra.empty


def test_variability_report(judged):
    var = variability_report(judged["majority"], judged["info"])
    assert len(var) == 32
    shares = var[["share_all_equal", "share_two_equal", "share_all_unequal"]].sum(axis=1)
    assert np.allclose(shares, 1.0)
    coin = var[(var["model"] == "coin") & (var["dimension"] == "logic")].iloc[0]
    # A fair coin over A/B: all three runs agree with probability 1/4, never three distinct labels.
    assert coin["share_all_equal"] == pytest.approx(0.25, abs=0.02)
    assert coin["share_all_unequal"] == 0.0
    assert abs(coin["krippendorff_alpha"]) < 0.05
    sharp = var[(var["model"] == "sharp") & (var["dimension"] == MEAN_DIMENSION)].iloc[0]
    assert sharp["share_all_equal"] > coin["share_all_equal"] and sharp["krippendorff_alpha"] > 0.5
    blurry = var[(var["model"] == "blurry") & (var["dimension"] == "logic")].iloc[0]
    assert blurry["n_incomplete"] > 0  # 2% invalid verdicts
    assert blurry["n_comparisons"] + blurry["n_incomplete"] == 13952
    assert metric_range_violations(var).empty


def test_expected_figures_beside_the_sampled_ones(judged):
    """Judges with label probabilities get expected figures close to the sampled ones (13,952
    comparisons per dimension); a judge without them gets none, never a made-up value."""
    report = judged["report"].set_index(["model", "strategy", "dimension"])
    var = variability_report(judged["majority"], judged["info"]).set_index(["model", "strategy", "dimension"])
    for model in ("sharp", "coin"):
        row = report.loc[(model, "zero", "logic")]
        assert row["n_expected"] == 13952
        assert row["expected_cohen_kappa"] == pytest.approx(row["cohen_kappa"], abs=0.02)
        assert row["expected_percent_agreement"] == pytest.approx(row["percent_agreement"], abs=1.5)
        runs = var.loc[(model, "zero", "logic")]
        for share in ("share_all_equal", "share_two_equal", "share_all_unequal"):
            assert runs[f"expected_{share}"] == pytest.approx(runs[share], abs=0.015)
    coin = var.loc[("coin", "zero", "logic")]
    # A fair coin over A/B (the expert difference over noise 1e4 shifts it by < 1e-4): all equal 1/4.
    assert coin["expected_share_all_equal"] == pytest.approx(0.25, abs=1e-6)
    assert coin["expected_share_all_unequal"] == pytest.approx(0.0, abs=1e-9)
    assert abs(report.loc[("coin", "zero", "logic"), "expected_cohen_kappa"]) < 0.01
    blurry = report.loc[("blurry", "zero", "logic")]
    assert blurry["n_expected"] == 0 and np.isnan(blurry["expected_cohen_kappa"])
    assert var.loc[("blurry", "zero", MEAN_DIMENSION), ["expected_share_all_equal"]].isna().all()
    assert report.loc[("sharp", "zero", MEAN_DIMENSION), "n_expected"] == 3 * 13952
    assert "nan" not in markdown_table(judged["report"].reset_index()).lower()


def test_bt_scores_on_expected_wins(judged, corpus):
    scores = judged["scores"]
    sharp = scores[(scores["model"] == "sharp") & (scores["strategy"] == "zero")]
    assert sharp["expected_bt_z"].notna().all()
    assert np.corrcoef(sharp["expected_bt_z"], sharp["bt_z"])[0, 1] > 0.97
    assert scores.loc[scores["model"] == "blurry", "expected_bt_z"].isna().all()
    # One-hot distributions of the sampled majorities give back the sampled fit exactly.
    arguments, comparisons = corpus
    majority = judged["majority"]
    one = majority[(majority["model"] == "sharp") & (majority["strategy"] == "zero")].copy()
    codes = one["majority_label"].map({"A": 0, "B": 1, "Tie": 2}).to_numpy()
    one[["p_majority_a", "p_majority_b", "p_majority_tie"]] = np.eye(3)[codes]
    expected = expected_bt_scores(one, comparisons)
    sampled = llm_bt_scores(one, comparisons, arguments)
    np.testing.assert_allclose(expected["expected_bt_z"], sampled["bt_z"], atol=1e-12)


def test_ensemble(judged, corpus):
    arguments, comparisons = corpus
    members = ensemble_members(judged["info"], judged["majority"]["model"].unique())
    assert members == ["biased", "blurry", "sharp"]  # registry non-baselines with judgments
    report, labels, scores = ensemble_report(
        judged["majority"], comparisons, arguments, members, "trio", info=judged["info"]
    )
    assert set(report["model"]) == {"ensemble:trio"} and set(report["members"]) == {"biased,blurry,sharp"}
    assert len(report) == 2 * 4 and not report["best_set"].any()
    assert len(labels) == 2 * 3 * 13952
    # The ensemble label is the plurality of the member majorities: check one comparison by hand.
    row = judged["majority"][judged["majority"]["comparison_id"] == "logic-00007"]
    row = row[row["strategy"] == "zero"].set_index("model")["majority_label"]
    votes = row.loc[members].tolist()
    counts = pd.Series(votes).value_counts()
    expected = counts.index[0] if (counts == counts.max()).sum() == 1 else "Tie"
    got = labels[(labels["comparison_id"] == "logic-00007") & (labels["strategy"] == "zero")]["majority_label"].iloc[0]
    assert got == expected
    # Pooled BT uses every member's verdict: three times the comparisons per argument.
    single = judged["scores"][(judged["scores"]["model"] == "sharp") & (judged["scores"]["strategy"] == "zero")]
    pooled = scores[scores["strategy"] == "zero"]
    assert pooled["n_comparisons"].sum() == pytest.approx(3 * single["n_comparisons"].sum(), rel=0.01)
    assert metric_range_violations(report).empty
    assert ensemble_members({}, ["a", "b"]) == ["a", "b"]  # no non-baseline: everybody
    assert ensemble_members(judged["info"], ["sharp"], ["sharp", "ghost"]) == ["sharp"]


def test_position_bias(judged):
    bias = position_bias_report(judged["judgments"], judged["info"])
    measured = bias[bias["measured"]]
    assert set(measured["model"]) == {"biased"}
    assert set(measured["dimension"]) == {"logic", "rhetoric", "dialectic", "all"}
    pooled = measured[(measured["dimension"] == "all") & (measured["strategy"] == "zero")].iloc[0]
    assert pooled["first_position_share"] > 0.6 and pooled["first_position_pvalue"] < 1e-6
    assert 0.3 < pooled["order_consistency"] < 0.95
    assert pooled["n_pairs"] == 3 * 13952 * 3  # dimensions x comparisons x runs
    assert pooled["position_bias_in_registry"]
    unmeasured = bias[~bias["measured"]]
    assert set(unmeasured["model"]) == {"sharp", "blurry", "coin"}
    assert unmeasured["first_position_share"].isna().all() and (unmeasured["n_pairs"] == 0).all()
    assert metric_range_violations(bias).empty


def test_position_bias_without_preference_is_near_one_half(corpus):
    arguments, comparisons = corpus
    fair = synthetic_judgments(
        comparisons, arguments, [SyntheticJudge("fair", noise=0.6, swapped=True)], ("zero",), seed=8
    )
    row = position_bias_report(fair).query("dimension == 'all'").iloc[0]
    assert row["first_position_share"] == pytest.approx(0.5, abs=0.01)
    assert row["order_consistency"] > 0.6


def test_check_helpers_find_problems(judged):
    report = judged["report"].copy()
    report.loc[3, "pearson"] = 1.5
    report.loc[5, "percent_agreement"] = -1.0
    bad = metric_range_violations(report)
    assert sorted(zip(bad["row"], bad["metric"], strict=True)) == [(3, "pearson"), (5, "percent_agreement")]
    missing, extra = report_configuration_mismatch(report.drop(index=[0]), judged["majority"])
    assert len(missing) == 1 and missing.iloc[0]["dimension"] == report.iloc[0]["dimension"] and extra.empty
    doubled = pd.concat([report, report.iloc[[1]]], ignore_index=True)
    assert len(report_configuration_mismatch(doubled, judged["majority"])[1]) == 1


def test_scoped_judge_with_a_disconnected_graph_is_named(corpus):
    arguments, comparisons = corpus
    few = comparisons[(comparisons["dimension"] == "logic") & (comparisons["topic_id"] == 1)].head(12)
    judgments = synthetic_judgments(few, arguments, [SyntheticJudge("pilot", noise=0.5)], ("zero",), seed=1)
    judgments["scope"] = "topics=1; max_comparisons=12"
    scores = llm_bt_scores(majority_votes(judgments), comparisons, arguments)
    split = disconnected_topics(scores, ["model", "strategy", "dimension"])
    assert len(split) == 1 and split.iloc[0]["topic_id"] == 1
    assert split.iloc[0]["n_components"] > 1
    sizes = [int(s) for s in split.iloc[0]["component_sizes"].split(",")]
    assert sum(sizes) == len(scores) and sizes == sorted(sizes, reverse=True)
    assert "#1:" in split.iloc[0]["components"]


def test_reference_can_be_the_expert_bt_scores(judged, corpus):
    arguments, comparisons = corpus
    from argassets.argument_quality.bt_scores import expert_bt_scores

    experts = expert_bt_scores(comparisons, arguments)
    reference = experts[["dimension", "topic_id", "discussion_id", "argument_id", "bt_z"]].rename(
        columns={"bt_z": "published_z"}
    )
    against_bt = agreement_report(
        judged["scores"], judged["majority"], comparisons, arguments, judged["info"], reference=reference
    )
    published = judged["report"]
    # Expert BT scores are nearly the published ones: correlations agree closely, labels identically.
    assert np.allclose(against_bt["pearson"], published["pearson"], atol=0.01)
    assert np.array_equal(against_bt["cohen_kappa"].to_numpy(), published["cohen_kappa"].to_numpy(), equal_nan=True)


def test_plots_and_markdown(judged):
    png = plot_scores_vs_experts(judged["scores"], "sharp", "zero")
    assert png.startswith(PNG_MAGIC) and len(png) > 10_000
    heat = plot_agreement_heatmap(judged["report"])
    assert heat.startswith(PNG_MAGIC)
    empty = plot_agreement_heatmap(judged["report"].iloc[0:0])
    assert empty.startswith(PNG_MAGIC)
    text = markdown_table(judged["report"], max_rows=5)
    assert text.startswith("| model") and "27 more rows not shown" in text
    assert markdown_table(pd.DataFrame()) == "_(no rows)_"
    assert not math.isnan(judged["report"]["pearson"].iloc[0])


def test_position_bias_by_hand():
    def row(comparison, order, run, label):
        return {
            "judge_model": "m",
            "strategy": "zero",
            "dimension": "logic",
            "comparison_id": comparison,
            "order": order,
            "run": run,
            "label": label,
        }

    rows = [
        # c1: as A-B the model says A, A, B; swapped (mapped back) A, B, B.
        row("c1", "ab", 0, "A"),
        row("c1", "ab", 1, "A"),
        row("c1", "ab", 2, "B"),
        row("c1", "ba", 0, "A"),
        row("c1", "ba", 1, "B"),
        row("c1", "ba", 2, "B"),
        # c2: Tie, then invalid; swapped: Tie, A.
        row("c2", "ab", 0, "Tie"),
        row("c2", "ab", 1, None),
        row("c2", "ba", 0, "Tie"),
        row("c2", "ba", 1, "A"),
    ]
    report = position_bias_report(pd.DataFrame(rows))
    logic = report[report["dimension"] == "logic"].iloc[0]
    # Pairs with both valid: c1 runs 0-2 and c2 run 0; consistent: c1/0, c1/2, c2/0.
    assert logic["n_pairs"] == 4 and logic["order_consistency"] == pytest.approx(3 / 4)
    # Majorities: c1 A vs B (inconsistent); c2 Tie vs Tie (one Tie and one A in the swapped order).
    assert logic["order_consistency_majority"] == pytest.approx(1 / 2)
    # Presented labels: ab as is (A, A, B, Tie); ba swapped back to presentation (B, A, A, Tie, B).
    # First position chosen: A, A, A, A = 4 of 7 decisive; ties 2 of 9 valid.
    assert logic["n_decisive"] == 7 and logic["first_position_share"] == pytest.approx(4 / 7)
    assert logic["tie_share"] == pytest.approx(2 / 9) and logic["n_judgments"] == 9
    pooled = report[report["dimension"] == "all"].iloc[0]
    assert pooled["n_pairs"] == 4 and pooled["first_position_share"] == pytest.approx(4 / 7)


# --- Intervals and paired comparisons ----------------------------------------------------------------


def test_every_measured_figure_has_an_interval_around_it(judged):
    report = judged["report"]
    for metric in AGREEMENT_METRICS:
        value = report[metric].astype(float)
        low, high = report[f"{metric}_low"].astype(float), report[f"{metric}_high"].astype(float)
        defined = value.notna()
        assert (low[defined].notna() & high[defined].notna()).all(), metric
        assert ((low[defined] <= value[defined] + 1e-12) & (value[defined] <= high[defined] + 1e-12)).all(), metric
        assert low[~defined].isna().all() and high[~defined].isna().all(), metric
    assert report["interval_method"].str.startswith("clustered BCa").all()
    assert set(report["interval_unit"]) == {"topic"} and set(report["interval_clusters"]) == {20}
    assert set(report["interval_seed"]) == {20_240_229} and set(report["interval_resamples"]) == {2000}
    # The blurry judge's kappa is less certain than the sharp one's? Both are tight; the coin's interval covers 0.
    coin = report[(report["model"] == "coin") & (report["dimension"] == MEAN_DIMENSION)]
    assert ((coin["cohen_kappa_low"] < 0) & (coin["cohen_kappa_high"] > 0)).all()


def test_the_interval_statistic_reproduces_every_figure_of_the_report(judged):
    """The per-topic tables under all-ones weights give the report's own figures (one function for both)."""
    from argassets.argument_quality.bt_scores import published_scores
    from argassets.argument_quality.topic_tables import Topics, agreement_tables

    arguments, comparisons = judged["corpus"]
    majority, scores, report = judged["majority"], judged["scores"], judged["report"]
    topics = Topics.of(majority, scores)
    tables = agreement_tables(
        scores,
        majority,
        published_scores(arguments).rename(columns={"published_z": "reference_z"}),
        comparisons[["comparison_id", "dimension", "label"]].rename(columns={"label": "reference_label"}),
        topics,
    )
    rows = report.set_index(["model", "strategy", "dimension"])
    for key, table in tables.items():
        values = agreement_values(table, np.ones((1, len(topics))))
        for metric in AGREEMENT_METRICS:
            expected = rows.loc[key, metric]
            assert values[metric][0] == pytest.approx(expected, abs=1e-9, nan_ok=True), (key, metric)


def test_paired_comparisons_separate_the_judges_and_name_the_best_set(judged):
    compared = judged["comparisons"]
    headline = compared[(compared["dimension"] == MEAN_DIMENSION) & (compared["metric"] == "cohen_kappa")]
    against_best = headline[headline["role"] == "best"].set_index(["model", "strategy"])
    assert against_best["reference_model"].eq("sharp").all()
    assert against_best.loc[("blurry", "zero"), "verdict"] == "worse"
    other_sharp = against_best.loc[[k for k in against_best.index if k[0] == "sharp"]]
    assert (other_sharp["verdict"] == "not distinguishable").all()
    against_coin = headline[headline["role"] == "baseline"].set_index(["model", "strategy"])
    assert (against_coin.loc[["sharp", "blurry", "biased"], "verdict"] == "better").all()
    # Differences are the figures' differences; intervals and adjusted p-values agree with the verdicts.
    np.testing.assert_allclose(headline["difference"], headline["value"] - headline["reference_value"], atol=1e-12)
    assert (headline["p_adjusted"] >= headline["p_value"] - 1e-12).all()
    significant = headline["p_adjusted"] < 0.05
    excludes = (headline["difference_low"] > 0) | (headline["difference_high"] < 0)
    assert (excludes[significant]).all()
    # Lower MAE is better: a better judge's negative MAE difference reads "better".
    mae = compared[(compared["metric"] == "mae") & (compared["role"] == "baseline") & (compared["model"] == "sharp")]
    assert (mae["verdict"] == "better").all() and (mae["difference"] < 0).all()


def test_variability_and_cross_model_reports_carry_intervals(judged):
    variability = variability_report(judged["majority"], judged["info"])
    assert variability["share_all_equal_low"].notna().all() and variability["krippendorff_alpha_high"].notna().all()
    assert (variability["share_all_equal_low"] <= variability["share_all_equal"] + 1e-12).all()
    best = best_configuration(judged["report"])
    cross = cross_model_report(judged["scores"], judged["majority"], best, judged["info"])
    others = cross[cross["model"] != best[0]]
    assert others["cohen_kappa_low"].notna().all() and others["pearson_high"].notna().all()
