"""The political knowledge base built from the published QT30 files: arguments, relations, counts,
the link to the published study items, and the Dagster assets with their checks."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from argassets.political import kb_counts
from argassets.political import knowledge_base as kb_graph

EXPECTED_RELATIONS = {"SUPPORTS": 6770, "ATTACKS": 1266, "IS_A_REPHRASE_OF": 6098, "TRANSITIONS_TO": 22248}


def test_arguments_are_the_ya_anchors_of_the_union_graph(qt30_kb) -> None:
    args = qt30_kb.arguments
    assert list(args.columns) == kb_graph.ARGUMENT_COLUMNS
    assert len(args) == 20746
    assert args["argument_id"].is_unique
    assert args["ya_node_id"].nunique() == 20745  # one YA anchors one locution to two propositions
    assert (args["proposition"].str.strip() != "").all()
    assert args["episode"].nunique() == 30
    assert args["nodeset"].str.match(r"^nodeset\d+$").all()
    assert args["argument_id"].tolist() == [
        kb_graph.argument_id(loc, y, i)
        for loc, y, i in zip(args["l_node_id"], args["ya_node_id"], args["i_node_id"], strict=False)
    ]
    row = args.set_index("argument_id").loc["L683923-YA683924-I683925"]
    assert row["speaker"] == "Claire Fox"
    assert row["locution"] == "They actually…different countries in the EU, France and Germany"
    assert row["proposition"] == "they actually…different countries in the EU, France and Germany"
    assert row["force"] == "Asserting"
    assert row["nodeset"] == "nodeset20875"
    assert row["episode"] == "2021-04-15"
    assert row["timestamp"] == "2021-04-15 20:20:57"
    forces = args["force"].value_counts()
    assert forces.index[0] == "Asserting" and forces["Asserting"] > 15000
    assert {"Pure Questioning", "Assertive Questioning", "Rhetorical Questioning"} <= set(forces.index)


def test_reported_speech_anchors_the_reported_speaker(qt30_kb) -> None:
    args = qt30_kb.arguments.set_index("i_node_id")
    # "Claire Fox : said, oh no, we don't think it's safe" -> YA -> L "other EU countries : ..." -> YA -> I
    row = args.loc["683937"]
    assert row["speaker"] == "other EU countries"
    assert row["l_node_id"] == "683940"


def test_relations_per_type_and_endpoints(qt30_kb) -> None:
    rel = qt30_kb.relations
    assert list(rel.columns) == kb_graph.RELATION_COLUMNS
    assert rel["relation"].value_counts().to_dict() == EXPECTED_RELATIONS
    ids = set(qt30_kb.arguments["argument_id"])
    assert rel["source_id"].isin(ids).all() and rel["target_id"].isin(ids).all()
    assert (rel["source_id"] != rel["target_id"]).all()
    assert not rel.duplicated(["source_id", "target_id", "relation", "aif_node_id"]).any()
    types = qt30_kb.graph.node_type
    expected_type = {"SUPPORTS": "RA", "ATTACKS": "CA", "IS_A_REPHRASE_OF": "MA", "TRANSITIONS_TO": "TA"}
    assert all(types[n] == expected_type[r] for n, r in zip(rel["aif_node_id"], rel["relation"], strict=False))
    # RA 683996: premises 683929 and 683937 support conclusion 683946
    by_i = qt30_kb.arguments.set_index("argument_id")["i_node_id"]
    ra = rel[rel["aif_node_id"] == "683996"]
    assert sorted(zip(ra["source_id"].map(by_i), ra["target_id"].map(by_i), strict=False)) == [
        ("683929", "683946"),
        ("683937", "683946"),
    ]
    report = qt30_kb.report.as_frame().set_index("relation")
    assert report["relations"].to_dict() == EXPECTED_RELATIONS
    assert (report["mapped_pairs"] + report["unanchored_pairs"] == report["endpoint_pairs"]).all()
    assert report.loc["TRANSITIONS_TO", "unanchored_pairs"] == 1441


def test_reconciliation_with_the_published_counts(qt30_kb) -> None:
    style = kb_counts.published_style_counts(qt30_kb.nodes, qt30_kb.edges, qt30_kb.graph)
    assert style["i_occurrences"] == 23465
    assert style["distinct_i_nodes"] == 20451
    assert style["repeated_i_occurrences"] == 3014
    assert style["anchored_i_occurrences"] == 23428
    table = kb_counts.reconcile_counts(1991, 1478, qt30_kb.arguments, qt30_kb.relations, qt30_kb.report, style)
    counts = dict(zip(table["step"], table["count"], strict=False))
    assert counts["published KB arguments"] == 23228
    assert counts["published KB relations"] == 50905
    assert counts["KB arguments (YA anchors L->I, union graph)"] == 20746
    assert counts["residual: anchored I occurrences - prediction rows"] == 23428 - 23300


@pytest.mark.slow
def test_assets_materialise_and_checks_pass(shared_data_dir: Path, duckdb_path: Path) -> None:
    from argassets.platform.resources.data import PublishedDataResource
    from argassets.platform.resources.storage import duckdb_io_manager
    from argassets.political.assets import knowledge_base as kb
    from asset_checks.political import knowledge_base as checks

    result = dg.materialize(
        [
            kb.qt30_aif_tables,
            kb.political_kb_arguments,
            kb.political_kb_relations,
            kb.political_aspic_tables,
            checks.relation_endpoints_exist,
            checks.arguments_have_propositions,
        ],
        resources={
            "io_manager": duckdb_io_manager(str(duckdb_path)),
            "data": PublishedDataResource(data_dir=str(shared_data_dir)),
        },
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    checks_run = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks_run == {"relation_endpoints_exist": True, "arguments_have_propositions": True}
    with duckdb.connect(str(duckdb_path)) as con:
        n_args = con.execute("SELECT count(*) FROM main.political_kb_arguments").fetchone()[0]
        per_type = dict(con.execute("SELECT relation, count(*) FROM main.political_kb_relations GROUP BY 1").fetchall())
        nodes = con.execute("SELECT count(*), count(DISTINCT nodeset) FROM main.qt30_aif").fetchone()
        aspic_kinds = dict(con.execute("SELECT kind, count(*) FROM main.political_aspic GROUP BY 1").fetchall())
        dung = con.execute("SELECT count(*) FROM main.political_dung_arguments").fetchone()[0]
    assert n_args == 20746
    assert per_type == EXPECTED_RELATIONS
    assert nodes == (143176, 1478)
    assert aspic_kinds == {"premise": 15468, "rule": 5640, "contrary": 1221}
    assert dung == 21237
    materialisations = [e.event_specific_data.materialization for e in result.get_asset_materialization_events()]
    mats = {m.asset_key.to_user_string(): m.metadata for m in materialisations}
    assert mats["political_kb_arguments"]["arguments"].value == 20746
    assert mats["political_kb_arguments"]["difference_to_published"].value == 20746 - 23228
    assert "published KB arguments" in mats["political_kb_arguments"]["count_reconciliation"].value
    assert json.loads(json.dumps(mats["political_kb_relations"]["per_type"].value)) == EXPECTED_RELATIONS
    assert mats["qt30_aif"]["files_read"].value == 1991
    assert mats["qt30_aif"]["episodes"].value == 30
    assert mats["political_dung_arguments"]["construction_limits"].value["depth_limit_hit"] is False
