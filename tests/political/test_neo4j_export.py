"""Export to a real Neo4j 5 (started from Maven Central artifacts by the session fixture)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest

from argassets.political import neo4j_export as nx
from argassets.political import neo4j_graph as ng
from argassets.political import neo4j_lock as nl

pytestmark = pytest.mark.neo4j


class InjectedCrash(RuntimeError):
    """The export died mid-way (raised by a hook, as a killed process would stop)."""


class CrashBeforeBatch(nx.ExportHooks):
    def __init__(self, batch: int) -> None:
        self.batch = batch

    def before_batch(self, batches_written: int) -> None:
        if batches_written >= self.batch:
            raise InjectedCrash(f"injected crash after {batches_written} batches")


def small_kb() -> tuple[pd.DataFrame, pd.DataFrame]:
    arguments = pd.DataFrame(
        {
            "argument_id": [f"A{i}" for i in range(12)],
            "episode": ["2021-05-20"] * 12,
            "nodeset": ["nodeset1"] * 12,
            "speaker": ["Ann"] * 12,
            "locution": [f"loc {i}" for i in range(12)],
            "proposition": [f"prop {i}" for i in range(12)],
            "force": ["Asserting"] * 12,
            "timestamp": ["2021-05-20 10:00:00"] * 12,
            "l_node_id": [str(100 + i) for i in range(12)],
            "i_node_id": [str(200 + i) for i in range(12)],
            "ya_node_id": [str(300 + i) for i in range(12)],
        }
    )
    relations = pd.DataFrame(
        [(f"A{i}", f"A{i + 1}", "TRANSITIONS_TO", f"T{i}", "nodeset1") for i in range(11)]
        + [
            ("A0", "A2", "SUPPORTS", "R1", "nodeset1"),
            ("A1", "A2", "SUPPORTS", "R1", "nodeset1"),
            ("A3", "A2", "ATTACKS", "C1", "nodeset1"),
            ("A4", "A5", "IS_A_REPHRASE_OF", "M1", "nodeset1"),
        ],
        columns=["source_id", "target_id", "relation", "aif_node_id", "nodeset"],
    )
    return arguments, relations


def settings_of(server, **override) -> ng.Neo4jSettings:
    values = {
        "uri": server.uri,
        "user": server.user,
        "password": server.password,
        "database": server.database,
    } | override
    return ng.Neo4jSettings(**values)


def test_wrong_credentials_and_unreachable_server_give_clear_errors(neo4j_server) -> None:
    with pytest.raises(ng.Neo4jExportError) as caught:
        ng.connect(settings_of(neo4j_server, password="definitely-wrong-pw-123"))
    assert "rejected the credentials of user 'neo4j'" in str(caught.value)
    assert "definitely-wrong-pw-123" not in str(caught.value)
    with pytest.raises(ng.Neo4jExportError, match="cannot reach Neo4j at bolt://127.0.0.1:1 "):
        ng.connect(settings_of(neo4j_server, uri="bolt://127.0.0.1:1"), timeout_s=3)
    with pytest.raises(ng.Neo4jExportError, match="DatabaseNotFound"):
        ng.connect(settings_of(neo4j_server, database="nosuchdb"))
    with pytest.raises(ng.Neo4jExportError, match="invalid Neo4j settings"):
        ng.connect(settings_of(neo4j_server, uri="ftp://127.0.0.1:1"))
    assert neo4j_server.password not in repr(settings_of(neo4j_server))


def test_export_writes_constraint_nodes_relations_and_predictions(neo4j_driver, neo4j_server) -> None:
    arguments, relations = small_kb()
    stats = pd.DataFrame(
        {
            "system": ["GPT-4o", "E3"],
            "argument_id": ["A1", "A1"],
            "mean": [42.0, float("nan")],
            "var": [1.0, None],
            "std": [1.0, None],
            "na_count": [0, 5],
            "prob_na": [0.0, 1.0],
        }
    )
    predictions = nx.prediction_properties([stats])
    result = nx.export_kb(
        neo4j_driver, neo4j_server.database, arguments, relations, predictions=predictions, batch_size=5
    )
    assert ng.constraint_names(neo4j_driver, neo4j_server.database) == sorted(
        [ng.CONSTRAINT_NAME, ng.STAGING_CONSTRAINT_NAME, ng.STATE_CONSTRAINT_NAME]
    )
    counts = ng.graph_counts(neo4j_driver, neo4j_server.database)
    assert (
        counts
        == ng.expected_counts(arguments, relations)
        == {"Argument": 12, "SUPPORTS": 2, "ATTACKS": 1, "IS_A_REPHRASE_OF": 1, "TRANSITIONS_TO": 11}
    )
    assert result.batches == 3 + 3 + 1 + 1 + 1
    assert nl.lock_state(neo4j_driver, neo4j_server.database)["live_stamp"] == result.stamp
    assert "lock_holder" not in nl.lock_state(neo4j_driver, neo4j_server.database)
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (a:Argument {argument_id: $id}) RETURN properties(a) AS p", id="A1", database_=neo4j_server.database
    )
    props = records[0]["p"]
    assert props["proposition"] == "prop 1" and props["speaker"] == "Ann"
    assert props["pred_gpt_4o_mean"] == 42.0 and props["pred_gpt_4o_na_count"] == 0
    assert props["pred_e3_prob_na"] == 1.0 and "pred_e3_mean" not in props  # NaN is left out
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (:Argument {argument_id: 'A3'})-[r:ATTACKS]->(t:Argument) RETURN t.argument_id AS t, r.aif_node_id AS aif",
        database_=neo4j_server.database,
    )
    assert [(r["t"], r["aif"]) for r in records] == [("A2", "C1")]


def test_second_export_and_crash_then_rerun_leave_the_complete_graph(neo4j_driver, neo4j_server) -> None:
    arguments, relations = small_kb()
    db = neo4j_server.database
    expected = ng.expected_counts(arguments, relations)
    nx.export_kb(neo4j_driver, db, arguments, relations, batch_size=4)
    nx.export_kb(neo4j_driver, db, arguments, relations, batch_size=4)
    assert ng.graph_counts(neo4j_driver, db) == expected
    ng.clear_graph(neo4j_driver, db)
    with pytest.raises(InjectedCrash):
        nx.export_kb(neo4j_driver, db, arguments, relations, batch_size=4, hooks=CrashBeforeBatch(4))
    # the crashed export staged part of the graph, invisibly: no Argument node exists yet
    assert ng.graph_counts(neo4j_driver, db) == dict.fromkeys(expected, 0)
    records, _, _ = neo4j_driver.execute_query("MATCH (n:ArgumentStaging) RETURN count(n) AS n", database_=db)
    assert records[0]["n"] == 12
    result = nx.export_kb(neo4j_driver, db, arguments, relations, batch_size=4)
    assert result.leftover_nodes_removed == 12
    assert ng.graph_counts(neo4j_driver, db) == expected


def test_export_removes_what_the_tables_no_longer_hold(neo4j_driver, neo4j_server) -> None:
    arguments, relations = small_kb()
    db = neo4j_server.database
    nx.export_kb(neo4j_driver, db, arguments, relations)
    fewer_args = arguments[arguments["argument_id"] != "A11"]
    fewer_rel = relations[(relations["target_id"] != "A11") & (relations["aif_node_id"] != "C1")]
    result = nx.export_kb(neo4j_driver, db, fewer_args, fewer_rel)
    # the whole previous graph is switched away and pruned: 12 nodes, 15 relationships
    assert (result.stale_nodes_removed, result.stale_relationships_removed) == (12, 15)
    assert ng.graph_counts(neo4j_driver, db) == ng.expected_counts(fewer_args, fewer_rel)
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (n) WHERE NOT n:Argument AND NOT n:KbExport RETURN count(n) AS n", database_=db
    )
    assert records[0]["n"] == 0


def test_bad_tables_are_refused_before_writing(neo4j_driver, neo4j_server) -> None:
    arguments, relations = small_kb()
    with pytest.raises(ValueError, match="argument id 'A0' occurs twice"):
        nx.export_kb(neo4j_driver, neo4j_server.database, pd.concat([arguments, arguments.head(1)]), relations)
    with pytest.raises(ValueError, match="unknown relation types"):
        nx.export_kb(neo4j_driver, neo4j_server.database, arguments, relations.assign(relation="LIKES"))
    assert ng.graph_counts(neo4j_driver, neo4j_server.database)["Argument"] == 0
    with pytest.raises(ValueError, match="share the property prefix"):
        nx.prediction_properties(
            [pd.DataFrame({"system": ["GPT 4o", "gpt-4o"], "argument_id": ["A0", "A0"], "mean": [1.0, 2.0]})]
        )


@pytest.mark.slow
def test_full_kb_export_asset_and_count_check(
    neo4j_driver, neo4j_server, qt30_kb, duckdb_path: Path, monkeypatch
) -> None:
    from argassets.platform.resources.storage import duckdb_io_manager
    from argassets.platform.storage.reader_file import store_path
    from argassets.political.assets import knowledge_base as kb
    from argassets.political.resources import Neo4jResource, neo4j_resources
    from asset_checks.political import knowledge_base as checks

    for key, value in neo4j_server.env().items():
        monkeypatch.setenv(key, value)
    with duckdb.connect(str(store_path(duckdb_path))) as con:  # the runs' store, where inputs are read
        con.register("a", qt30_kb.arguments)
        con.register("r", qt30_kb.relations)
        con.execute("CREATE TABLE main.political_kb_arguments AS SELECT * FROM a")
        con.execute("CREATE TABLE main.political_kb_relations AS SELECT * FROM r")
        stats = pd.DataFrame(
            {
                "system": "Mistral 7B",
                "argument_id": qt30_kb.arguments["argument_id"].head(3),
                "mean": [10.0, 50.0, 90.0],
                "var": 0.0,
                "std": 0.0,
                "na_count": 0,
                "prob_na": 0.0,
            }
        )
        con.register("s", stats)
        con.execute("CREATE TABLE main.political_model_stats AS SELECT * FROM s")
    upstream = [dg.SourceAsset(key=k) for k in ("political_kb_arguments", "political_kb_relations")]
    resources = {"io_manager": duckdb_io_manager(str(duckdb_path)), **neo4j_resources()}
    result = dg.materialize(
        [kb.neo4j_political_kb, checks.neo4j_counts_match, *upstream],
        selection=[kb.neo4j_political_kb.key],
        resources=resources,
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    assert [e.passed for e in result.get_asset_check_evaluations()] == [True]
    counts = ng.graph_counts(neo4j_driver, neo4j_server.database)
    assert counts == {
        "Argument": 20746,
        "SUPPORTS": 6770,
        "ATTACKS": 1266,
        "IS_A_REPHRASE_OF": 6098,
        "TRANSITIONS_TO": 22248,
    }
    metadata = result.get_asset_materialization_events()[0].event_specific_data.materialization.metadata
    assert metadata["nodes"].value == 20746 and metadata["prediction_properties"].value == 15
    assert metadata["neo4j_uri"].value == neo4j_server.uri
    assert all(neo4j_server.password not in str(v.value) for v in metadata.values())
    first = qt30_kb.arguments["argument_id"].iloc[0]
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (a:Argument {argument_id: $id}) RETURN a.pred_mistral_7b_mean AS m",
        id=first,
        database_=neo4j_server.database,
    )
    assert records[0]["m"] == 10.0
    # a wrong password: the run fails, nothing is materialised, and the password appears nowhere
    monkeypatch.setenv("NEO4J_PASSWORD", "wrong-password-xyz")
    failed = dg.materialize(
        [kb.neo4j_political_kb, *upstream],
        selection=[kb.neo4j_political_kb.key],
        resources={"io_manager": duckdb_io_manager(str(duckdb_path)), **neo4j_resources()},
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )
    assert not failed.success
    assert failed.get_asset_materialization_events() == []
    messages = " ".join(str(e) for e in failed.all_events)
    assert "rejected the credentials of user 'neo4j'" in messages
    assert "wrong-password-xyz" not in messages
    assert isinstance(neo4j_resources()["neo4j"], Neo4jResource)
