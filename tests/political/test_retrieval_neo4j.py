"""Retrieval on a real Neo4j 5 (vector index, no GDS): the hand-checked results, the same results as
the embedded store, parameters that stay parameters, and clear errors when something is missing."""

from __future__ import annotations

import pytest

from argassets.political import neo4j_export as nx
from argassets.political import neo4j_graph as ng
from argassets.political.retrieval import neo4j_store
from argassets.political.retrieval.api import Retriever
from argassets.political.retrieval.embedded_store import EmbeddedStore, positions_table
from argassets.political.retrieval.model import EmbeddingModel
from argassets.political.retrieval.neo4j_store import Neo4jRetrievalError, Neo4jStore
from argassets.political.retrieval.query import PoliticalFilter, RetrievalError, RetrievalQuery
from tests.political.retrieval_graph import (
    EXPECTED_TYPICAL_RIGHT,
    QUERY,
    arguments_frame,
    embedding_model_fixture,  # noqa: F401 - the session fixture embedding_model
    keys,
    real_embeddings,
    relations_frame,
    stats_frame,
    synthetic_embeddings,
    synthetic_store,
)

pytestmark = pytest.mark.neo4j

QUERIES = [
    RetrievalQuery("q", "vector", k=3),
    RetrievalQuery("q", "vector", k=3, filter=PoliticalFilter("E1", 60, 90)),
    RetrievalQuery("q", "vector", k=5, force="Asserting"),
    RetrievalQuery("q", "vector", k=5, filter=PoliticalFilter("E1", 60, 90, max_std=10, max_prob_na=0.2)),
    RetrievalQuery("q", "typical", k=1, filter=PoliticalFilter("E1", 60, 90)),
    RetrievalQuery("q", "typical", k=3),
    RetrievalQuery("q", "chosen", k=2, relations=("SUPPORTS",), neighbour_forces=("Asserting",), direction="incoming"),
    RetrievalQuery("q", "chosen", k=2, relations=("SUPPORTS",), neighbour_forces=("Arguing",), direction="outgoing"),
    RetrievalQuery(
        "q", "chosen", k=5, relations=("ATTACKS", "IS_A_REPHRASE_OF"), neighbour_forces=("Asserting", "Arguing")
    ),
]


def _load(driver, database: str, embeddings) -> None:
    nx.export_kb(
        driver, database, arguments_frame(), relations_frame(), predictions=nx.prediction_properties([stats_frame()])
    )
    neo4j_store.drop_retrieval_indexes(driver, database)
    neo4j_store.write_embeddings(driver, database, embeddings)
    dims = int(embeddings["dimensions"].iloc[0])
    neo4j_store.ensure_retrieval_indexes(driver, database, dims, ["E1"])


def _comparable(results: list) -> list[tuple]:
    return [(*keys([r])[0], r.neighbour_force, round(r.similarity, 4), r.position) for r in results]


def test_neo4j_returns_the_hand_checked_results_and_the_embedded_stores(neo4j_driver, neo4j_server) -> None:
    database = neo4j_server.database
    _load(neo4j_driver, database, synthetic_embeddings())
    exact, indexed, embedded = (
        Neo4jStore(neo4j_driver, database, exact=True),
        Neo4jStore(neo4j_driver, database),
        synthetic_store(),
    )
    typical = exact.search(QUERIES[4], QUERY)
    assert keys(typical) == EXPECTED_TYPICAL_RIGHT
    assert [r.argument_id for r in exact.search(QUERIES[1], QUERY)] == ["a1", "a2", "a4"]
    for query in QUERIES:
        expected = _comparable(embedded.search(query, QUERY))
        assert _comparable(exact.search(query, QUERY)) == expected, query
        assert _comparable(indexed.search(query, QUERY)) == expected, query


def test_real_model_same_results_and_injection_changes_nothing(
    neo4j_driver, neo4j_server, embedding_model: EmbeddingModel
) -> None:
    database = neo4j_server.database
    embeddings = real_embeddings(embedding_model)
    _load(neo4j_driver, database, embeddings)
    store = Neo4jStore(neo4j_driver, database, exact=True)
    neo4j = Retriever(store, embedding_model, store.embedding_model())
    embedded = Retriever(
        EmbeddedStore.from_tables(arguments_frame(), relations_frame(), embeddings, positions_table([stats_frame()])),
        embedding_model,
        str(embeddings["model"].iloc[0]),
    )
    before = ng.graph_counts(neo4j_driver, database)
    crafted = "x'}) MATCH (n) DETACH DELETE n // \" $vector `pred_e1_mean`"
    for query in QUERIES:
        query = RetrievalQuery(
            crafted,
            query.method,
            query.k,
            query.force,
            query.relations,
            query.neighbour_forces,
            query.direction,
            query.filter,
        )
        assert _comparable(neo4j.retrieve(query)) == _comparable(embedded.retrieve(query))
    with pytest.raises(RetrievalError, match="has no positions in Neo4j"):
        neo4j.retrieve(RetrievalQuery("q", filter=PoliticalFilter("E1` }) DETACH DELETE a //", 10, 20)))
    with pytest.raises(RetrievalError, match="finite number"):
        neo4j.retrieve(RetrievalQuery("q", filter=PoliticalFilter("E1", "10 OR true", 20)))  # type: ignore[arg-type]
    with pytest.raises(RetrievalError, match="relations must be among"):
        neo4j.retrieve(
            RetrievalQuery("q", "chosen", relations=("SUPPORTS]-() DETACH DELETE a //",), neighbour_forces=("x",))
        )
    assert ng.graph_counts(neo4j_driver, database) == before
    assert neo4j_store.check_ready(neo4j_driver, database)["embedded"] == 7


def test_missing_index_or_embeddings_name_what_to_materialise(neo4j_driver, neo4j_server) -> None:
    database = neo4j_server.database
    nx.export_kb(neo4j_driver, database, arguments_frame(), relations_frame())
    neo4j_store.drop_retrieval_indexes(neo4j_driver, database)
    store = Neo4jStore(neo4j_driver, database)
    with pytest.raises(
        Neo4jRetrievalError,
        match=r"no vector index 'argument_embedding': run `dagster asset materialize .*neo4j_political_kb_embeddings`",
    ):
        store.search(RetrievalQuery("q"), QUERY)
    neo4j_store.ensure_retrieval_indexes(neo4j_driver, database, 4)
    with pytest.raises(Neo4jRetrievalError, match="none of the 7 Argument nodes .* has an embedding"):
        store.search(RetrievalQuery("q"), QUERY)
    # another model's dimensions: the index is rebuilt, not left silently unused
    neo4j_store.ensure_retrieval_indexes(neo4j_driver, database, 8)
    assert neo4j_store.vector_index_dimensions(neo4j_driver, database) == 8
    with pytest.raises(Neo4jRetrievalError, match=r"not in Neo4j: run `dagster asset materialize .*neo4j_political_kb"):
        extra = synthetic_embeddings()
        extra.loc[0, "argument_id"] = "not-exported"
        neo4j_store.write_embeddings(neo4j_driver, database, extra)


def test_store_checks_readiness_once_it_has_succeeded(neo4j_driver, neo4j_server, monkeypatch) -> None:
    database = neo4j_server.database
    _load(neo4j_driver, database, synthetic_embeddings())
    checks: list[str] = []

    def counted(driver, name: str) -> dict:
        checks.append(name)
        return check_ready(driver, name)

    check_ready = neo4j_store.check_ready
    monkeypatch.setattr(neo4j_store, "check_ready", counted)
    store = Neo4jStore(neo4j_driver, database)
    for query in QUERIES:
        store.search(query, QUERY)
    store.embedding_model()
    # each check reads every node's embedding: once per store, not once per query
    assert checks == [database]
