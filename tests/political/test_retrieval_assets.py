"""The retrieval assets in Dagster: embeddings (real model, reused on a second run) and the evaluation
with its checks, on the hand-checked KB; and their place in the code location."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd

from argassets.political.assets.retrieval import political_argument_embeddings, political_retrieval_evaluation
from asset_checks.political.retrieval import retrieval_opposite_filters_separate, retrieval_results_inside_filter
from tests.political.retrieval_graph import (
    arguments_frame,
    embedding_model_fixture,  # noqa: F401 - the session fixture embedding_model
    relations_frame,
    stats_frame,
)


def _inputs() -> list:
    @dg.asset(name="political_kb_arguments", group_name="knowledge_base")
    def arguments() -> pd.DataFrame:
        return arguments_frame()

    @dg.asset(name="political_kb_relations", group_name="knowledge_base")
    def relations() -> pd.DataFrame:
        return relations_frame()

    @dg.asset(name="political_model_stats", group_name="aggregation")
    def model_stats() -> pd.DataFrame:
        return stats_frame().iloc[0:0]

    @dg.asset(name="political_ensembles", group_name="aggregation")
    def ensembles() -> pd.DataFrame:
        return stats_frame()

    return [arguments, relations, model_stats, ensembles]


def test_embeddings_and_evaluation_materialise_with_passing_checks(duckdb_path: Path, embedding_model) -> None:
    result = dg.materialize(
        [
            *_inputs(),
            political_argument_embeddings,
            political_retrieval_evaluation,
            retrieval_results_inside_filter,
            retrieval_opposite_filters_separate,
        ],
        run_config={"ops": {"political_retrieval_evaluation": {"config": {"kb_queries": 7, "k": 3}}}},
    )
    assert result.success
    embeddings = result.output_for_node("political_argument_embeddings")
    assert len(embeddings) == 7 and embeddings["dimensions"].eq(384).all()
    assert embeddings["model"].iloc[0] == embedding_model.identity
    summary = result.output_for_node("political_retrieval_evaluation")
    assert len(summary) == 9  # 3 methods x (no filter, left, right)
    assert summary["share_inside_filter"].eq(1.0).all()
    vector_none = summary.set_index("setting").loc["vector/none"]
    assert vector_none["own_found"] == 1.0 and vector_none["own_rank_median"] == 1.0
    left = summary.set_index("setting").loc["vector/left", "mean_position"]
    right = summary.set_index("setting").loc["vector/right", "mean_position"]
    assert left == 20.0 and right >= 60.0
    checks = {e.asset_check_key.name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"retrieval_results_inside_filter": True, "retrieval_opposite_filters_separate": True}
    materialization = result.asset_materializations_for_node("political_retrieval_evaluation")[0]
    assert "data:image/png;base64" in materialization.metadata["mean_positions"].value


def test_the_code_location_holds_the_retrieval_assets() -> None:
    from argassets.definitions import defs

    graph = defs.resolve_asset_graph()
    expected = {
        "political_argument_embeddings": "retrieval",
        "political_retrieval_evaluation": "retrieval",
        "neo4j_political_kb_embeddings": "knowledge_base",
    }
    for name, group in expected.items():
        node = graph.get(dg.AssetKey(name))
        assert node.group_name == group and node.description and node.kinds, name
    vectors = graph.get(dg.AssetKey("neo4j_political_kb_embeddings"))
    assert {dg.AssetKey("neo4j_political_kb"), dg.AssetKey("political_argument_embeddings")} <= vectors.parent_keys
