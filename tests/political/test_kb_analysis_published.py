"""The KB analysis on the real knowledge base and the 22 published models (E1-E3 pooled from them).

The figures the issue reports from a finished ``run-default`` are the reference: the platform must
find the same (pairs, mean and median |Δ|, crossing shares by relation; ambiguity by force; the
range of debate means). The README's Study B section must equal the fragment computed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from argassets.platform.resources.storage import duckdb_io_manager
from argassets.political import aspic
from argassets.political.assets import kb_analysis
from argassets.political.assets.ensembles import membership_frame
from argassets.political.results_page_kb import KbTables, kb_section
from argassets.political.structure import acceptability, ambiguity, debates, distance, facets, findings, positions
from asset_checks.political import kb_analysis as kb_checks

# Materialises the analysis over the full knowledge base and every published system: a full-corpus
# end-to-end test, outside the fast loop.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Analysis:
    inputs: dict[str, pd.DataFrame]  # the assets' upstream tables
    facets: pd.DataFrame
    positions: pd.DataFrame
    distances: pd.DataFrame
    robustness: pd.DataFrame
    ambiguity: pd.DataFrame
    debates: pd.DataFrame
    speakers: pd.DataFrame
    acceptability: pd.DataFrame


def dung_tables(kb) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``political_dung_arguments`` and ``political_dung_defeats`` as the asset builds them."""
    graph = kb.graph
    theory = aspic.theory_from_graph(graph.node_type, graph.text, graph.preds, graph.succs)
    built, _ = aspic.build_arguments(theory)
    kb_of = kb.arguments.groupby("i_node_id")["argument_id"].apply(list).to_dict()
    return aspic.arguments_table(built, kb_of), aspic.defeats_table(aspic.defeats(theory, built))


@pytest.fixture(scope="module")
def analysis(qt30_kb, published_models) -> Analysis:
    dung, defeats = dung_tables(qt30_kb)
    table = facets.argument_facets(qt30_kb.arguments, qt30_kb.relations, dung, defeats)
    members = membership_frame(published_models.members)
    pos = positions.system_positions(published_models.stats, published_models.ensembles, members)
    dist, robust = distance.relation_distances(pos, qt30_kb.relations, table)
    inputs = {
        "political_kb_arguments": qt30_kb.arguments,
        "political_kb_relations": qt30_kb.relations,
        "political_dung_arguments": dung,
        "political_dung_defeats": defeats,
        "political_model_stats": published_models.stats,
        "political_ensembles": published_models.ensembles,
        "political_ensemble_members": members,
    }
    return Analysis(
        inputs,
        table,
        pos,
        dist,
        robust,
        ambiguity.ambiguity_by_facet(pos, table),
        debates.debate_positions(pos, table),
        debates.recurring_speakers(pos, table),
        acceptability.acceptability_differences(pos, table),
    )


def test_e1_distances_by_relation_are_those_the_issue_reports(analysis):
    e1 = analysis.distances[(analysis.distances["system"] == "E1") & (analysis.distances["source_side"] == "all")]
    e1 = e1.set_index("relation")
    reported = {  # pairs, mean |Δ|, median |Δ|, share crossing (issue 23, from a finished run-default)
        "ATTACKS": (491, 16.8, 13.8, 0.269),
        "SUPPORTS": (2038, 10.8, 8.4, 0.115),
        "TRANSITIONS_TO": (6432, 11.1, 8.2, 0.120),
        "IS_A_REPHRASE_OF": (2028, 8.8, 6.2, 0.065),
    }
    for relation, (pairs, mean, median, crossing) in reported.items():
        row = e1.loc[relation]
        assert row["pairs"] == pairs, relation
        assert round(row["mean_abs_diff"], 1) == mean, relation
        assert round(row["median_abs_diff"], 1) == median, relation
        assert round(row["crossing_share"], 3) == crossing, relation
        assert row["mean_abs_diff_low"] < row["mean_abs_diff"] < row["mean_abs_diff_high"], relation
    # the issue sampled 200,000 random pairs (15.1, 20.5%); the platform averages over all of them
    assert round(e1.at["ATTACKS", "random_pair_mean_abs_diff"], 1) == 15.1
    assert e1.at["ATTACKS", "random_pair_crossing_share"] == pytest.approx(0.205, abs=0.005)


def test_attacks_are_farther_apart_than_supports_for_every_system(analysis):
    robust = analysis.robustness
    assert len(robust) == 25 and set(robust["kind"]) == {"model", "ensemble"}
    summary = distance.robustness_summary(robust)
    assert summary["systems"] == 25 and summary["attacks_farther"] == 25
    assert 20 <= summary["interval_above_zero"] <= 25
    sides = analysis.distances[analysis.distances["source_side"] != "all"].groupby(["system", "relation"])["pairs"]
    alls = analysis.distances[analysis.distances["source_side"] == "all"].set_index(["system", "relation"])["pairs"]
    assert (sides.sum().reindex(alls.index) == alls).all()


def test_the_chair_is_the_host_and_roles_cover_every_argument(analysis):
    table = analysis.facets
    assert len(table) == 20746 and table["argument_id"].is_unique
    chair = table[table["role"] == "chair"]
    assert set(chair["speaker"]) == {"Fiona Bruce"} and chair["episode"].nunique() == 30
    coverage = facets.role_coverage(table).set_index("role")
    assert coverage["arguments"].sum() == len(table)
    assert coverage.at["panellist", "share"] > 0.6 and coverage.at["audience", "arguments"] > 2000
    panel = table[table["role"] == "panellist"].groupby("episode")["speaker"].nunique()
    assert panel.between(4, 8).all()  # a Question Time panel: five guests, sometimes six or seven


def test_ambiguity_and_debates_match_the_issue(analysis):
    force = analysis.ambiguity[(analysis.ambiguity["system"] == "E1") & (analysis.ambiguity["facet"] == "force")]
    share = force.set_index("value")["ambiguous_share"]
    assert round(share["Asserting"], 2) == 0.41
    assert round(share["Pure Questioning"], 2) == 0.50
    assert round(share["Disagreeing"], 2) == 0.52
    e1 = analysis.debates[analysis.debates["system"] == "E1"].set_index("episode")
    assert len(e1) == 30
    assert (round(e1["position"].min(), 1), e1["position"].idxmin()) == (38.0, "2021-03-18")
    assert (round(e1["position"].max(), 1), e1["position"].idxmax()) == (49.6, "2020-12-10")
    traced = analysis.speakers[analysis.speakers["system"] == "E1"]
    heard = analysis.facets.groupby("speaker")["episode"].nunique()
    assert (heard[traced["speaker"].unique()] >= 2).all()  # in the KB (E1 scores no unreleased prompt)
    assert {"Lisa Nandy", "Nadhim Zahawi", "Boris Johnson"} <= set(traced["speaker"])
    assert "Fiona Bruce" not in set(traced["speaker"])


def test_acceptability_rows_cover_every_system_status_and_measure(analysis):
    acc = analysis.acceptability
    assert len(acc) == 25 * 3 * 3
    justified = acc[(acc["system"] == "E1") & (acc["status"] == "justified") & (acc["measure"] == "prob_na")].iloc[0]
    assert justified["with_n"] + justified["without_n"] == 20557  # every argument E1 scored
    assert justified["low"] <= justified["difference"] <= justified["high"]


def test_the_readme_states_what_the_platform_computes(analysis):
    """README's Study B figures are generated: rerun `scripts/readme-figures` after `argassets run-default`."""
    assert findings.read_section((ROOT / "README.md").read_text(encoding="utf-8")) == _fragment(analysis)


def test_the_results_page_shows_the_kb_findings_with_their_plots(analysis):
    section = kb_section(
        KbTables(
            analysis.distances,
            analysis.robustness,
            analysis.ambiguity,
            analysis.debates,
            analysis.acceptability,
            analysis.facets,
        )
    )
    blocks = "".join(section.html_blocks)
    assert "<strong>Attacks join arguments farther apart than supports.</strong>" in blocks
    assert (
        "<strong>Where ambiguity sits.</strong>" in blocks and "<strong>Acceptability and ideology.</strong>" in blocks
    )
    assert blocks.count('src="data:image/png;base64,') == 5  # attacks vs supports, 3 ambiguity facets, debates
    assert section.anchor == "kb-findings" and len(section.tables[0].frame) == len(analysis.robustness)


def _fragment(analysis: Analysis) -> str:
    return findings.findings_markdown(
        analysis.distances,
        analysis.robustness,
        analysis.ambiguity,
        analysis.debates,
        analysis.acceptability,
        facets.role_coverage(analysis.facets),
    )


def _stand_in(name: str, frame: pd.DataFrame) -> dg.AssetsDefinition:
    @dg.asset(name=name)
    def stand_in() -> pd.DataFrame:
        return frame

    return stand_in


def _read(duckdb_path: Path, table: str) -> pd.DataFrame:
    import duckdb

    with duckdb.connect(str(duckdb_path), read_only=True) as connection:
        return connection.execute(f"SELECT * FROM main.{table}").df()


def test_the_assets_materialise_what_the_functions_compute_and_pass_their_checks(analysis, duckdb_path):
    stand_ins = [_stand_in(name, frame) for name, frame in analysis.inputs.items()]
    ours = dg.load_assets_from_modules([kb_analysis])
    checks = dg.load_asset_checks_from_modules([kb_checks])
    resources = {"io_manager": duckdb_io_manager(str(duckdb_path))}
    dg.materialize(stand_ins, resources=resources, instance=dg.DagsterInstance.ephemeral())
    result = dg.materialize(
        [*stand_ins, *ours, *checks],
        selection=dg.AssetSelection.assets(*ours) | dg.AssetSelection.checks(*checks),
        resources=resources,
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == 6 and all(e.passed for e in evaluations)
    robust = _read(duckdb_path, "political_relation_robustness")
    pd.testing.assert_frame_equal(robust, analysis.robustness, check_dtype=False)
    stored = _read(duckdb_path, "political_relation_distance")
    assert len(stored) == len(analysis.distances) == 25 * 4 * 4
    assert stored["mean_abs_diff"].to_numpy() == pytest.approx(
        analysis.distances["mean_abs_diff"].to_numpy(), nan_ok=True
    )
    facets_table = _read(duckdb_path, "political_kb_facets")
    assert facets_table["role"].tolist() == analysis.facets["role"].tolist()
    metadata = result.asset_materializations_for_node("political_relation_tables")[0].metadata
    assert (
        "plot_attacks_vs_supports" in metadata
        and "data:image/png;base64," in metadata["plot_attacks_vs_supports"].value
    )
    # scripts/readme-figures reads the same tables back from DuckDB: the README text must not change
    script = _readme_script()
    assert script.political_fragment_from_database(duckdb_path) == _fragment(analysis)


def _readme_script():
    from importlib.machinery import SourceFileLoader
    from importlib.util import module_from_spec, spec_from_loader

    loader = SourceFileLoader("readme_figures", str(ROOT / "scripts" / "readme-figures"))
    spec = spec_from_loader("readme_figures", loader)
    assert spec is not None
    module = module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_definitions_place_the_kb_analysis_in_its_group():
    from argassets.definitions import defs

    graph = defs.resolve_asset_graph()
    names = [
        "political_kb_facets",
        "political_system_positions",
        "political_relation_distance",
        "political_relation_robustness",
        "political_ambiguity",
        "political_debate_positions",
        "political_recurring_speakers",
        "political_acceptability",
    ]
    for name in names:
        node = graph.get(dg.AssetKey(name))
        assert node.group_name == "kb_analysis" and node.description and node.kinds, name
    from argassets.platform.operations.automation import operations_layout
    from argassets.studies import code_location_studies

    layout = operations_layout(graph, code_location_studies())
    reports = set(layout.reports_by_study["political"])
    # downstream of the judged partitions: run-default materialises them with the reports
    assert {dg.AssetKey(n) for n in names if n != "political_kb_facets"} <= reports
    assert dg.AssetKey("political_kb_facets") in set(layout.inputs_by_study["political"]) | reports
