"""The aggregation and report assets and their checks, through Dagster.

Fast: on the invented sample corpus with baseline judges (one judged in both orders, one with a
restricted scope, one removed from the registry after judging). The shipped baseline judges over
the full real corpus are in test_aq_paper_full.py (one run shared by its tests).
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest

import asset_checks.argument_quality.prompt_axis as prompt_axis_checks
import asset_checks.argument_quality.reliability as reliability_checks
import asset_checks.argument_quality.reports as aq_checks
from argassets.argument_quality.assets import (
    aggregation,
    corpora,
    length_bias,
    prompt_axis,
    prompts,
    reliability,
    reports,
    results_page,
)
from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.reporting.pages import page_url
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.storage.reader_file import copy_warehouse
from argassets.studies import code_location_studies
from tests.instances import new_instance
from tests.model_partitions import add_partitions

#: The judging asset the platform builds from the study's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)

UPSTREAM = [corpora.webis_corpus, prompts.aq_few_shot_examples, prompts.aq_prompts]
MINE = [
    aggregation.aq_majority_votes,
    aggregation.aq_expert_bt_scores,
    aggregation.aq_bt_scores,
    reports.aq_agreement_report,
    reports.aq_cross_model_report,
    reports.aq_variability_report,
    reports.aq_ensemble,
    reports.aq_position_bias,
    length_bias.aq_length_bias,
    reliability.aq_reliability_battery,
    prompt_axis.aq_prompt_variant_report,
    prompt_axis.aq_perturbation_report,
    results_page.aq_results_page,
]
CHECKS = list(dg.load_asset_checks_from_modules([aq_checks, reliability_checks, prompt_axis_checks]))
REPORT_TABLES = [
    "aq_majority_votes",
    "aq_expert_bt_scores",
    "aq_bt_scores",
    "aq_agreement_report",
    "aq_cross_model_report",
    "aq_variability_report",
    "aq_ensemble",
    "aq_position_bias",
]

ENTRIES = {
    "random": '[[models]]\nname = "random"\nbackend = "random"\nstudies = ["argument_quality"]\nseed = 5\n',
    "longer-pb": '[[models]]\nname = "longer-pb"\nbackend = "longer-wins"\nstudies = ["argument_quality"]\nposition_bias = true\n',
    "scoped": (
        '[[models]]\nname = "scoped"\nbackend = "random"\nstudies = ["argument_quality"]\n'
        'scope = { topics = [2, 3], dimensions = ["logic"], strategies = ["zero"], max_comparisons = 3 }\n'
    ),
    "retired": '[[models]]\nname = "retired"\nbackend = "random"\nstudies = ["argument_quality"]\nseed = 9\n',
}


def resources(database: Path, registry: Path, cache: Path, data_dir: Path | None) -> dict:
    return {
        "io_manager": duckdb_io_manager(str(database)),
        "data": PublishedDataResource(data_dir=str(data_dir) if data_dir else None),
        "webis_source": WebisSourceResource(url=""),
        "registry": ModelRegistryResource(path=str(registry), studies=code_location_studies()),
        "judge": JudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(cache)),
    }


def read(database: Path, table: str) -> pd.DataFrame:
    with duckdb.connect(str(database), read_only=True) as con:
        return con.execute(f"select * from {table}").df()


def materialise_reports(res: dict, instance, run_config: dict | None = None):
    return dg.materialize(
        [*UPSTREAM, AQ_JUDGMENTS, *MINE, *CHECKS],
        selection=dg.AssetSelection.assets(*MINE),
        resources=res,
        instance=instance,
        run_config=dg.RunConfig(ops=run_config or {}),
    )


def metadata(result, asset: str) -> dict:
    return {k: v.value for k, v in result.asset_materializations_for_node(asset)[0].metadata.items()}


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory, upstream_db: Path):
    folder = tmp_path_factory.mktemp("aq_reports")
    database = folder / "argassets.duckdb"
    copy_warehouse(upstream_db, database)  # the session's sample inputs (corpora, prompts), made once
    registry = folder / "models.toml"
    registry.write_text("\n".join(ENTRIES.values()))
    res = resources(database, registry, folder / "cache.sqlite", SAMPLE_DATA_DIR)
    mp = pytest.MonkeyPatch()
    mp.setenv("ARGASSETS_DUCKDB", str(database))
    with new_instance() as instance:
        add_partitions(instance, [*ENTRIES, "never-run"])
        for name in ENTRIES:
            assert dg.materialize(
                [AQ_JUDGMENTS, *UPSTREAM],
                selection=[AQ_JUDGMENTS],
                partition_key=name,
                resources=res,
                instance=instance,
            ).success
        # "retired" leaves the registry; its judgments stay. "never-run" has no judgments at all.
        registry.write_text("\n".join(v for k, v in ENTRIES.items() if k != "retired"))
        result = materialise_reports(
            res,
            instance,
            {
                "aq_bt_scores": {"config": {"n_bootstrap": 30, "seed": 1}},
                "aq_agreement_report": {"config": {"plot_configurations": ["random/few", "ghost/zero"]}},
            },
        )
    mp.undo()
    yield {"result": result, "database": database, "folder": folder}


def test_every_asset_and_check_succeeds(sample_run):
    result = sample_run["result"]
    assert result.success
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert set(checks) == {key.name for definition in CHECKS for key in definition.check_keys}
    assert (
        len(checks) == 15
    )  # ten on the tables, three on the intervals of the reports, the battery's, the perturbations'
    failing = {name: e.metadata for name, e in checks.items() if not e.passed}
    assert not failing


def test_majority_votes_table(sample_run):
    majority = read(sample_run["database"], "aq_majority_votes")
    assert set(majority["model"]) == {"random", "longer-pb", "scoped", "retired"}
    full = majority[majority["model"] == "random"]
    assert len(full) == 105 * 3  # comparisons of the sample (all dimensions) x strategies
    assert {"label_run0", "label_run1", "label_run2", "majority_label", "is_baseline", "scope"} <= set(majority.columns)
    scoped = majority[majority["model"] == "scoped"]
    assert set(scoped["strategy"]) == {"zero"} and set(scoped["dimension"]) == {"logic"}
    assert len(scoped) <= 3
    assert set(scoped["scope"]) == {"topics=2,3; dimensions=logic; strategies=zero; max_comparisons=3"}
    # The swapped-order runs of longer-pb are not voted on.
    assert len(majority[majority["model"] == "longer-pb"]) == 105 * 3


def test_bt_tables(sample_run):
    experts = read(sample_run["database"], "aq_expert_bt_scores")
    assert {"dimension", "topic_id", "discussion_id", "argument_id", "bt_score", "bt_z", "published_z"} <= set(
        experts.columns
    )
    scores = read(sample_run["database"], "aq_bt_scores")
    assert {"model", "strategy", "dimension", "bt_z", "ci_low", "ci_high", "published_z", "component"} <= set(
        scores.columns
    )
    full = scores[scores["model"] == "longer-pb"]
    assert full["ci_low"].le(full["bt_z"] + 1e-9).mean() > 0.9
    # The baselines define their distributions: one-hot longer-wins reproduces its sampled fit exactly,
    # uniform random gives every argument the same expected strength.
    assert full["expected_bt_z"].to_numpy() == pytest.approx(full["bt_z"].to_numpy(), abs=1e-6)
    assert (scores.loc[scores["model"] == "random", "expected_bt_z"].abs() < 1e-6).all()
    for _, part in scores.groupby(["model", "strategy", "dimension"]):
        assert part["bt_z"].std(ddof=0) == pytest.approx(1.0, abs=1e-9) or len(part) == 1


def test_agreement_report_table_and_metadata(sample_run):
    report = read(sample_run["database"], "aq_agreement_report")
    configurations = report[report["dimension"] != "mean"]
    assert len(configurations) == 3 * 3 * 3 + 1  # three full judges, and the scoped one
    assert report["best_set"].sum() == 0  # only baselines were judged: none is in the best set
    retired = report[report["model"] == "retired"]
    assert len(retired) == 12 and not retired["in_registry"].any() and retired["is_baseline"].all()
    assert (report.loc[report["model"] == "scoped", "scope"] != "full").all()
    meta = metadata(sample_run["result"], "aq_agreement_report")
    assert meta["best_configuration"].startswith("none") and meta["best_by"].startswith(
        "cohen_kappa against the experts"
    )
    assert "| model" in meta["report"] and "not in registry" in meta["report"]
    assert meta["plot_aq_agreement_heatmap"].startswith("![agreement heat map](data:image/png;base64,")
    heat = Path(meta["plot_aq_agreement_heatmap_path"])
    assert heat.is_file() and heat.read_bytes().startswith(b"\x89PNG")
    assert heat.parent == sample_run["folder"] / "reports"
    assert any(k.startswith("plot_aq_scores_random__few") for k in meta)  # requested
    assert not any("ghost" in k for k in meta)  # unknown configuration: warned, not plotted
    # From the baselines' distributions: one-hot longer-wins expects what it drew; uniform random
    # expects kappa 0, and agreement between P(majority A or B) = 7/27 and P(majority Tie) = 13/27.
    longer = configurations[configurations["model"] == "longer-pb"]
    assert longer["expected_cohen_kappa"].to_numpy() == pytest.approx(longer["cohen_kappa"].to_numpy(), abs=1e-9)
    uniform = configurations[configurations["model"] == "random"]
    assert uniform["expected_cohen_kappa"].to_numpy() == pytest.approx(0.0, abs=1e-9)
    assert uniform["expected_percent_agreement"].between(100 * 7 / 27, 100 * 13 / 27).all()
    assert (longer["n_expected"] == longer["n_comparisons"]).all()
    assert "nan" not in meta["report"].lower()


def test_other_reports(sample_run):
    database = sample_run["database"]
    cross = read(database, "aq_cross_model_report")
    # The cross-model report still needs a reference: the best baseline by the same metric.
    assert metadata(sample_run["result"], "aq_cross_model_report")["reference_configuration"].startswith("longer-pb / ")
    assert len(cross) == len(read(database, "aq_agreement_report"))
    variability = read(database, "aq_variability_report")
    longer = variability[variability["model"] == "longer-pb"]
    assert (longer["share_all_equal"] == 1.0).all()  # deterministic baseline
    assert (longer["expected_share_all_equal"] == 1.0).all()
    uniform = variability[variability["model"] == "random"]
    assert uniform["expected_share_all_equal"].to_numpy() == pytest.approx(1 / 9)  # 3 of 27 sequences
    ensemble = read(database, "aq_ensemble")
    assert set(ensemble["model"]) == {"ensemble:all-models"}  # only baselines have judgments
    assert set(ensemble["members"]) == {"longer-pb,random,retired,scoped"}
    bias = read(database, "aq_position_bias")
    measured = bias[bias["measured"]]
    assert set(measured["model"]) == {"longer-pb"}
    # Longer wins is blind to the order: perfectly consistent, no first-position preference.
    assert (measured["order_consistency"] == 1.0).all()
    assert measured["first_position_share"].between(0.3, 0.7).all()
    assert set(bias.loc[~bias["measured"], "model"]) == {"random", "scoped", "retired"}
    for asset in ("aq_cross_model_report", "aq_variability_report", "aq_ensemble", "aq_position_bias"):
        assert "| model" in metadata(sample_run["result"], asset)["report"]


def test_results_page_is_written_and_linked_from_the_reports(sample_run):
    meta = metadata(sample_run["result"], "aq_results_page")
    page = Path(meta["results_page"])
    assert page == sample_run["folder"] / "reports" / "aq_results.html" and meta["open"] == page_url(page.name)
    text = page.read_text(encoding="utf-8")
    assert meta["size_bytes"] == len(text.encode("utf-8"))
    # Self-contained: Plotly inlined, no script or stylesheet from elsewhere.
    assert "<script src" not in text and "<link" not in text and "Plotly" in text
    assert "Ranked by <b class='ranked-name' data-table='table-0-0'>cohen_kappa</b>" in text
    assert 'class="badge best"' not in text  # only baselines judged
    assert meta["open_metric_choice"] == page_url(f"{page.name}#metric-choice") and 'id="metric-choice"' in text
    for report in ("aq_agreement_report", "aq_length_bias"):
        assert metadata(sample_run["result"], report)["results_page"] == str(page)
    assert "Trust: the reliability battery" in text and "experts" in text
    assert "Prompt variants and perturbations, side by side" in text and 'id="prompt-axis"' in text


def test_perturbation_report_gives_the_order_swap_of_the_entry_judged_in_both_orders(sample_run):
    report = read(sample_run["database"], "aq_perturbation_report")
    assert set(report["entry"]) == {"longer-pb"} and set(report["perturbation"]) == {"swap"}
    assert len(report) == 3 * 3 * 3  # strategies x dimensions x metrics
    flips = report[report["metric"] == "flip_rate"]
    assert (flips["estimate"] == 0).all() and (flips["n"] == 35).all() and (flips["n_topics"] == 3).all()
    assert (report.loc[report["metric"] == "rank_spearman", "estimate"] == 1).all()
    variants = read(sample_run["database"], "aq_prompt_variant_report")  # no model has two variants: one row says so
    assert (
        variants["metric"].tolist() == ["none"]
        and variants["interval_method"].str.contains("two prompt variants").all()
    )


def test_reliability_battery_measures_what_was_judged_and_passes_its_check(sample_run):
    battery = read(sample_run["database"], "aq_reliability_battery")
    overall = battery[battery["dimension"] == "all"].set_index(["model", "strategy", "metric"])["estimate"]
    # longer-pb was judged in both orders and is blind to the order; the others were not.
    assert (overall.xs("position_consistency", level="metric").xs("longer-pb") == 1.0).all()
    assert overall.xs("position_consistency", level="metric").drop("longer-pb", level="model").isna().all()
    assert (overall.xs("run_agreement", level="metric").xs("longer-pb") == 1.0).all()
    assert overall.loc[("experts", "reference", "wst_violation_share")] >= 0.0
    result = sample_run["result"]
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["aq_reliability_battery_rows_and_ranges"] is True


def test_bt_check_fails_and_names_components_when_a_graph_is_split(tmp_path: Path):
    scores = pd.DataFrame(
        {
            "model": "m",
            "strategy": "zero",
            "dimension": "logic",
            "topic_id": 4,
            "discussion_id": [1, 2, 3, 4],
            "argument_id": 1,
            "bt_z": 0.0,
            "component": [0, 0, 1, 1],
        }
    )
    majority = pd.DataFrame({"model": ["m"], "strategy": ["zero"], "dimension": ["logic"], "scope": ["full"]})
    result = aq_checks.aq_bt_scores_connected(aq_bt_scores=scores, aq_majority_votes=majority)
    assert not result.passed and result.severity == dg.AssetCheckSeverity.ERROR
    assert "#1: 3/1, 4/1" in result.metadata["components"].value
    scoped = aq_checks.aq_bt_scores_connected(aq_bt_scores=scores, aq_majority_votes=majority.assign(scope="topics=4"))
    assert not scoped.passed and scoped.severity == dg.AssetCheckSeverity.WARN


def test_rows_and_ranges_checks_fail_on_bad_reports():
    majority = pd.DataFrame({"model": ["m", "m"], "strategy": ["zero", "zero"], "dimension": ["logic", "rhetoric"]})
    report = pd.DataFrame(
        {"model": ["m", "m"], "strategy": ["zero", "zero"], "dimension": ["logic", "mean"], "pearson": [0.5, 1.2]}
    )
    rows = aq_checks.aq_agreement_report_rows(aq_agreement_report=report, aq_majority_votes=majority)
    assert not rows.passed and rows.metadata["missing_rows"].value == 1
    ranges = aq_checks.aq_agreement_report_metric_ranges(aq_agreement_report=report)
    assert not ranges.passed and ranges.metadata["violations"].value == 1


def test_no_judgments_at_all_is_a_clear_failure():
    empty = pd.DataFrame(columns=[c.strip('"') for c in aggregation.JUDGMENT_COLUMNS])
    with pytest.raises(dg.Failure, match="no rows in any materialised partition"):
        aggregation.aq_majority_votes(dg.build_asset_context(), empty)
    frame = aggregation.judgments_frame(pd.DataFrame())  # no partition at all: no columns either
    assert list(frame.columns) == [c.strip('"') for c in aggregation.JUDGMENT_COLUMNS]
