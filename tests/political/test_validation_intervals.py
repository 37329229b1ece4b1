"""Study B's clustered intervals: the per-debate statistics reproduce the validation figures, on all
items and on a resample of debates (checked against the plain functions on the drawn items)."""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest

from argassets.platform.stats.intervals import BootstrapSettings
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.validation.comparisons import plan_comparisons, validation_uncertainty
from argassets.political.validation.evaluation import (
    PairwiseDesign,
    evaluate_pairwise,
    evaluate_pointwise,
    pairwise_rankings,
)
from argassets.political.validation.intervals import (
    PAIRWISE_METRICS,
    POINTWISE_METRICS,
    debate_clusters,
    ordinal_alpha_midranks,
    ordinal_alpha_weighted,
    pairwise_statistic,
    pairwise_values,
    pointwise_statistic,
    pointwise_values,
)
from argassets.political.validation.ranking import (
    footrule_similarity,
    kendall_tau_similarity,
    ordinal_alpha,
    pairwise_macro_f1,
    ranks,
)

CLUSTERS = 12
FAST = BootstrapSettings(n_resamples=300)


def _weights(seed: int) -> np.ndarray:
    """All ones, then two resamples of the clusters."""
    rng = np.random.default_rng(seed)
    return np.vstack([np.ones(CLUSTERS), rng.multinomial(CLUSTERS, np.ones(CLUSTERS) / CLUSTERS, 2)]).astype(float)


def test_ordinal_alpha_of_weighted_midranks_is_krippendorffs_on_the_drawn_units() -> None:
    rng = np.random.default_rng(0)
    for _ in range(25):
        n = int(rng.integers(5, 40))
        x = np.round(rng.normal(size=n), 1)
        y = x + rng.normal(size=n)
        y[: n // 4] = 0.0  # ties in one rater
        w = rng.integers(0, 3, n).astype(float)
        if w.sum() < 2:
            continue
        drawn = np.repeat(np.arange(n), w.astype(int))
        expected = ordinal_alpha(ranks(x[drawn]), ranks(y[drawn]))

        def midranks(v: np.ndarray) -> np.ndarray:
            return np.array([(w * (v < t)).sum() + 0.5 * (w * (v == t)).sum() + 0.5 for t in v])

        a, b = midranks(x)[None], midranks(y)[None]
        assert ordinal_alpha_weighted(a, b, w[None])[0] == pytest.approx(expected, abs=1e-10, nan_ok=True)
        assert ordinal_alpha_midranks(a, b, w[None])[0] == pytest.approx(expected, abs=1e-10, nan_ok=True)
    data = np.vstack([ranks(x[drawn]), ranks(y[drawn])])
    assert expected == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))


def test_debate_clusters_give_unmatched_items_their_own_cluster() -> None:
    items = pd.DataFrame(
        {"study": "pointwise", "meta_id": ["a", "b", "c", "d"], "argument_id": ["x1", "x2", None, "x9"]}
    )
    kb = pd.DataFrame({"argument_id": ["x1", "x2", "x3"], "episode": ["2020-01-01", "2020-01-01", "2020-02-02"]})
    codes, n = debate_clusters(items, kb, "pointwise", ["a", "b", "c", "d"])
    assert n == 3 and codes[0] == codes[1] and len({codes[0], codes[2], codes[3]}) == 3


@pytest.fixture(scope="module")
def pointwise(shared_data_dir: Path):
    study = read_pointwise_study(shared_data_dir / "political" / "human")
    meta = list(study.items["meta_id"])
    systems, names = {}, []
    for prefix, group in study.published.groupby("prefix"):
        name = f"published:{prefix}"
        kind = "ensemble" if prefix.startswith("ensemble") else "model"
        systems[name] = (kind, group.set_index("meta_id").loc[meta, "prob_na"].to_numpy(dtype=float))
        names.append(name) if kind == "model" else None
    groups = {"published": names}
    cluster = np.arange(len(meta)) % CLUSTERS
    report = evaluate_pointwise(study.items, systems, groups)
    return study.items, systems, groups, cluster, report


def test_pointwise_statistic_reproduces_the_report_on_all_and_on_resampled_debates(pointwise) -> None:
    items, systems, groups, cluster, report = pointwise
    outputs, parts = pointwise_statistic(items, systems, groups, report, cluster, CLUSTERS)
    weights = _weights(1)
    values = pointwise_values(parts, weights)
    for row, weight in enumerate(weights):
        drawn = np.repeat(np.arange(len(items)), weight[cluster].astype(int))
        expected = evaluate_pointwise(
            items.iloc[drawn].reset_index(drop=True), {n: (k, p[drawn]) for n, (k, p) in systems.items()}, groups
        )
        expected = expected.set_index(["system", "partition"])
        for k, (index, metric) in enumerate(outputs):
            key = (report.at[index, "system"], report.at[index, "partition"])
            assert values[k, row] == pytest.approx(expected.loc[key, metric], abs=1e-9, nan_ok=True), (key, metric, row)


@pytest.fixture(scope="module")
def pairwise(shared_data_dir: Path):
    study = read_pairwise_study(shared_data_dir / "political" / "human")
    meta = list(study.items["meta_id"])
    chosen = ["o3_mini_2025_01_31", "claude_3_5_haiku_2024102", "deepseek_v3", "ensemble3"]
    published = study.published[study.published["prefix"].isin(chosen)]
    systems = {
        f"published:{p}": ("model", g.set_index("meta_id").loc[meta, "scores"].map(list).tolist())
        for p, g in published.groupby("prefix")
    }
    design = PairwiseDesign.build(meta, study.pairs, study.votes, systems["published:ensemble3"][1])
    rankings = pairwise_rankings(design, systems)
    report = evaluate_pairwise(design, systems, rankings)
    return design, rankings, report, np.arange(len(meta)) % CLUSTERS


def _drawn_metrics(design, ranking, human_strengths, drawn: np.ndarray, weight_of_item: np.ndarray) -> dict:
    """The pairwise figures on the drawn items (strengths fixed), by the plain functions."""
    own, human = ranks(ranking.strengths[drawn]), ranks(human_strengths[drawn])
    pairs = design.subset_pairs(ranking.subset)
    multiplicity = weight_of_item[pairs[:, 0]] * weight_of_item[pairs[:, 1]]
    repeated = np.repeat(np.arange(len(pairs)), multiplicity.astype(int))
    return {
        "d_footrule": footrule_similarity(own, human),
        "d_tau": kendall_tau_similarity(own, human),
        "alpha_ordinal": ordinal_alpha(own, human),
        "macro_f1": pairwise_macro_f1(
            design.human["human"], ranking.predictions[repeated], pairs[repeated], design.votes_per_pair
        ),
    }


def test_pairwise_statistic_reproduces_the_report_on_all_and_on_resampled_debates(pairwise) -> None:
    design, rankings, report, cluster = pairwise
    outputs, parts = pairwise_statistic(design, rankings, report, cluster, CLUSTERS)
    weights = _weights(2)
    values = pairwise_values(parts, weights)
    for row, weight in enumerate(weights):
        per_item = weight[cluster]
        drawn = np.repeat(np.arange(len(cluster)), per_item.astype(int))
        for k, (index, metric) in enumerate(outputs):
            ranking = rankings[index]
            if row == 0:
                expected = report.at[index, metric]
            else:
                human = design.human_ranks(ranking.subset)[0]
                expected = _drawn_metrics(design, ranking, human, drawn, per_item)[metric]
            assert values[k, row] == pytest.approx(expected, abs=1e-9), (ranking.system, ranking.subset, metric, row)


def test_comparisons_name_the_top_and_the_best_set(pairwise) -> None:
    design, rankings, report, cluster = pairwise
    outputs, parts = pairwise_statistic(design, rankings, report, cluster, CLUSTERS)
    result = validation_uncertainty(
        report,
        parts,
        outputs,
        CLUSTERS,
        task="pairwise",
        facet_column="subset",
        metrics=PAIRWISE_METRICS,
        compared=("alpha_ordinal", "macro_f1"),
        headline="alpha_ordinal",
        settings=FAST,
    )
    out, compared = result.report, result.comparisons
    assert {f"{m}_{side}" for m in PAIRWISE_METRICS for side in ("low", "high")} <= set(out.columns)
    systems = out[out["kind"] == "model"]
    assert (systems["alpha_ordinal_low"] <= systems["alpha_ordinal"]).all()
    assert (systems["alpha_ordinal"] <= systems["alpha_ordinal_high"]).all()
    assert set(out["interval_unit"]) == {"debate"} and set(out["interval_clusters"]) == {CLUSTERS}
    top = compared[(compared["role"] == "top") & (compared["facet"] == "P11") & (compared["metric"] == "alpha_ordinal")]
    leader = report[(report["subset"] == "P11") & (report["kind"] == "model")].sort_values("alpha_ordinal").iloc[-1]
    assert set(top["reference"]) == {leader["system"]} and sorted(top["rank"]) == [2, 3, 4]
    in_set = out[(out["subset"] == "P11") & out["best_set"]]
    assert leader["system"] in set(in_set["system"]) and set(in_set["kind"]) == {"model"}
    baselines = compared[compared["role"] == "baseline"]
    assert set(baselines["reference"]) == {"baseline:all-equal", "baseline:worst"}
    planned = plan_comparisons(report, "subset", ["alpha_ordinal"])
    assert len([p for p in planned if p.role == "top"]) == 5 * 3  # three challengers in each subset


def test_point_pointwise_human_model_row_is_the_median_of_its_members(pointwise) -> None:
    items, systems, groups, cluster, report = pointwise
    outputs, parts = pointwise_statistic(items, systems, groups, report, cluster, CLUSTERS)
    values = pointwise_values(parts, np.ones((1, CLUSTERS)))
    median_rows = [k for k, (i, m) in enumerate(outputs) if report.at[i, "system"] == "human-model:published"]
    assert median_rows
    for k in median_rows:
        index = outputs[k][0]
        assert values[k, 0] == pytest.approx(report.at[index, "alpha_nominal"], abs=1e-12)
    assert {m for _, m in outputs} <= set(POINTWISE_METRICS)


def test_the_readme_fragment_quotes_the_top_the_next_and_the_humans(pointwise, pairwise) -> None:
    from argassets.political.validation import findings

    design, rankings, report, cluster = pairwise
    outputs, parts = pairwise_statistic(design, rankings, report, cluster, CLUSTERS)
    pair = validation_uncertainty(
        report,
        parts,
        outputs,
        CLUSTERS,
        task="pairwise",
        facet_column="subset",
        metrics=PAIRWISE_METRICS,
        compared=("alpha_ordinal", "macro_f1"),
        headline="alpha_ordinal",
        settings=FAST,
    )
    items, systems, groups, point_cluster, point_report = pointwise
    outputs, parts = pointwise_statistic(items, systems, groups, point_report, point_cluster, CLUSTERS)
    point = validation_uncertainty(
        point_report,
        parts,
        outputs,
        CLUSTERS,
        task="pointwise",
        facet_column="partition",
        metrics=POINTWISE_METRICS,
        compared=("macro_f1", "alpha_nominal"),
        headline="macro_f1",
        settings=FAST,
    )
    text = findings.findings_markdown(pair.report, point.report, pair.comparisons, point.comparisons)
    p11 = pair.report[(pair.report["subset"] == "P11") & (pair.report["kind"] == "model")]
    leader = p11.sort_values("alpha_ordinal").iloc[-1]
    assert f"`{leader['system']}` {leader['alpha_ordinal']:.3f} [" in text
    assert "human:left" not in text and "The humans' two framings reach" in text
    assert text.count("Holm-adjusted p =") == 4 and f"{CLUSTERS} for the pairwise study" in text
    updated = findings.replace_section(f"a\n{findings.BEGIN_MARKER}\nold\n{findings.END_MARKER}\nb", text)
    assert findings.read_section(updated) == text
