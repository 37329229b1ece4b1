"""Retrieval library on the embedded store: the three methods, directions, filters, validation,
embeddings (real all-MiniLM-L6-v2), generation prompts. No server."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from argassets.political.retrieval.embedded_store import EmbeddedStore, positions_table
from argassets.political.retrieval.embeddings import argument_text, embed_arguments, embedding_matrix
from argassets.political.retrieval.generation import debater_request, persona_request, select_examples
from argassets.political.retrieval.model import (
    EmbeddingModel,
    EmbeddingModelError,
    extracted_model_dir,
    packaged_model_zip,
)
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
    synthetic_store,
)


def ids(results: list) -> list[str]:
    return [r.argument_id for r in results]


def test_vector_method_hand_checked() -> None:
    store = synthetic_store()
    assert ids(store.search(RetrievalQuery("q", "vector", k=3), QUERY)) == ["a1", "a7", "a2"]
    right = store.search(RetrievalQuery("q", "vector", k=3, filter=PoliticalFilter("E1", 60, 90)), QUERY)
    assert ids(right) == ["a1", "a2", "a4"]  # a7 has no position; a3 is left
    assert [r.position for r in right] == [70.0, 85.0, 65.0]
    assert [round(r.similarity, 6) for r in right] == [1.0, 0.8, 0.0]
    assert ids(store.search(RetrievalQuery("q", "vector", k=2, force="Asserting"), QUERY)) == ["a1", "a7"]
    strict = PoliticalFilter("E1", 60, 90, max_std=10, max_prob_na=0.2)
    assert ids(store.search(RetrievalQuery("q", "vector", k=5, filter=strict), QUERY)) == ["a1", "a4"]
    # a tie in similarity (a4 and a5 both 0) is broken by argument id
    assert ids(store.search(RetrievalQuery("q", "vector", k=5, filter=PoliticalFilter("E1", 0, 100)), QUERY)) == [
        "a1",
        "a2",
        "a3",
        "a4",
        "a5",
    ]


def test_typical_method_hand_checked() -> None:
    store = synthetic_store()
    results = store.search(RetrievalQuery("q", "typical", k=1, filter=PoliticalFilter("E1", 60, 90)), QUERY)
    assert keys(results) == EXPECTED_TYPICAL_RIGHT
    assert {r.neighbour_force for r in results if r.relation == "ATTACKS" and r.direction == "incoming"} == {
        "Asserting",
        "Disagreeing",
    }


def test_chosen_method_and_every_direction() -> None:
    store = synthetic_store()
    incoming = RetrievalQuery(
        "q", "chosen", k=2, relations=("SUPPORTS",), neighbour_forces=("Asserting",), direction="incoming"
    )
    assert keys(store.search(incoming, QUERY)) == [
        ("SUPPORTS", "incoming", "a1", "a3"),
        ("SUPPORTS", "incoming", "a1", "a7"),
    ]
    outgoing = RetrievalQuery(
        "q", "chosen", k=2, relations=("SUPPORTS",), neighbour_forces=("Arguing",), direction="outgoing"
    )
    assert keys(store.search(outgoing, QUERY)) == [("SUPPORTS", "outgoing", "a1", "a2")]
    both = RetrievalQuery("q", "chosen", k=5, relations=("ATTACKS",), neighbour_forces=("Asserting", "Disagreeing"))
    assert keys(store.search(both, QUERY)) == [
        ("ATTACKS", "incoming", "a2", "a5"),
        ("ATTACKS", "incoming", "a1", "a4"),
        ("ATTACKS", "outgoing", "a4", "a1"),
    ]
    # every pair's direction agrees with the relations table
    edges = {
        (s, r, t)
        for s, r, t in zip(*(relations_frame()[c] for c in ("source_id", "relation", "target_id")), strict=True)
    }
    for r in store.search(RetrievalQuery("q", "typical", k=10), QUERY):
        edge = (
            (r.neighbour_id, r.relation, r.argument_id)
            if r.direction == "incoming"
            else (r.argument_id, r.relation, r.neighbour_id)
        )
        assert edge in edges
    line = store.search(incoming, QUERY)[0].example_line("proposition")
    assert line == "'proposition of a3' -[SUPPORTS]-> 'proposition of a1'"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (RetrievalQuery("q", "vector", k=0), "k must be an integer"),
        (RetrievalQuery("q", "vector", k=2.5), "k must be an integer"),  # type: ignore[arg-type]
        (RetrievalQuery("", "vector"), "utterance is empty"),
        (RetrievalQuery("q", "nearest"), "unknown method"),  # type: ignore[arg-type]
        (
            RetrievalQuery("q", "chosen", relations=("LIKES",), neighbour_forces=("Asserting",)),
            "relations must be among",
        ),
        (RetrievalQuery("q", "chosen"), "needs the neighbour forces"),
        (RetrievalQuery("q", "vector", direction="sideways"), "unknown direction"),  # type: ignore[arg-type]
        (RetrievalQuery("q", filter=PoliticalFilter("E1", 90, 60)), "is empty"),
        (RetrievalQuery("q", filter=PoliticalFilter("E1", -5, 60)), "0..100"),
        (RetrievalQuery("q", filter=PoliticalFilter("E1", 10, 20, max_std=-1)), "max_std"),
        (RetrievalQuery("q", filter=PoliticalFilter("E1", max_prob_na=1.5)), "max_prob_na"),
        (RetrievalQuery("q", filter=PoliticalFilter("E1", "0 OR 1=1", 60)), "finite number"),  # type: ignore[arg-type]
        (RetrievalQuery("q", filter=PoliticalFilter("GPT-9", 10, 20)), "has no positions; known: E1"),
    ],
)
def test_bad_queries_are_named(query: RetrievalQuery, message: str) -> None:
    with pytest.raises(RetrievalError, match=message):
        synthetic_store().search(query, QUERY)


def test_missing_embeddings_name_the_asset() -> None:
    embeddings = real_embeddings_stub = pd.DataFrame(
        {
            "argument_id": ["a1"],
            "text_sha256": ["h"],
            "model": ["m@0"],
            "dimensions": [4],
            "embedding": [[1.0, 0, 0, 0]],
        }
    )
    with pytest.raises(
        LookupError, match=r"materialise political_argument_embeddings\): run `argassets run-default` \(about"
    ):
        EmbeddedStore.from_tables(arguments_frame(), relations_frame(), embeddings, positions_table([stats_frame()]))
    with pytest.raises(
        LookupError, match=r"materialise political_argument_embeddings\): run `argassets run-default` \(about"
    ):
        embedding_matrix(real_embeddings_stub.iloc[0:0])


def test_packaged_model_is_located_and_extracted_once(tmp_path) -> None:
    zip_path = packaged_model_zip()
    assert zip_path.name == "model.zip"
    first = extracted_model_dir(zip_path, root=tmp_path)
    stamp = (first / "config.json").stat().st_mtime_ns
    assert extracted_model_dir(zip_path, root=tmp_path) == first
    assert (first / "config.json").stat().st_mtime_ns == stamp
    with pytest.raises(EmbeddingModelError, match="not installed"):
        packaged_model_zip("no_such_model_package")


def test_real_model_embeds_and_reuses(embedding_model: EmbeddingModel) -> None:
    arguments = arguments_frame()
    table, run = embed_arguments(arguments, embedding_model)
    assert (run.embedded, run.reused) == (7, 0)
    assert table["dimensions"].eq(384).all()
    assert table["model"].iloc[0].startswith("all-MiniLM-L6-v2@")
    vectors = np.asarray(table["embedding"].tolist())
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    changed = arguments.copy()
    changed.loc[2, "proposition"] = "Taxes on the rich must rise"
    again, run2 = embed_arguments(changed, embedding_model, previous=table)
    assert (run2.embedded, run2.reused) == (1, 6)
    assert again["embedding"].iloc[0] == table["embedding"].iloc[0]
    assert again["text_sha256"].iloc[2] != table["text_sha256"].iloc[2]
    other_model = table.assign(model="another-model@0000000000000000")
    _, run3 = embed_arguments(arguments, embedding_model, previous=other_model)
    assert run3.embedded == 7


def test_own_text_ranks_first_with_the_real_model(embedding_model: EmbeddingModel) -> None:
    store = EmbeddedStore.from_tables(
        arguments_frame(), relations_frame(), real_embeddings(embedding_model), positions_table([stats_frame()])
    )
    row = arguments_frame().iloc[3]
    vector = embedding_model.encode([argument_text(row["proposition"], row["locution"])])[0]
    results = store.search(RetrievalQuery("x", "vector", k=3), vector)
    assert results[0].argument_id == "a4"
    assert results[0].similarity == pytest.approx(1.0, abs=1e-5)


def test_prompts_with_and_without_retrieval() -> None:
    results = synthetic_store().search(RetrievalQuery("q", "typical", k=1, filter=PoliticalFilter("E1", 60, 90)), QUERY)
    plain = debater_request("Rich people should pay higher taxes", 60, 90)
    assert "between 60 and 90" in plain.system and "past debates" not in plain.system
    assert plain.user == "Rich people should pay higher taxes"
    grounded = debater_request("Rich people should pay higher taxes", 60, 90, results)
    assert "'Speaker 2: locution of a3' -[SUPPORTS]-> 'Speaker 0: locution of a1'" in grounded.system
    assert grounded.prompt_sha256 != plain.prompt_sha256
    persona = persona_request(10, 30, results[:2])
    assert "between 10 and 30" in persona.user and "locution of a3" in persona.user
    assert "made these arguments" not in persona_request(10, 30).user


def test_examples_are_taken_round_robin_over_groups_closest_group_first() -> None:
    results = synthetic_store().search(RetrievalQuery("q", "typical", k=3), QUERY)
    best: dict[tuple, float] = {}
    for r in results:
        best.setdefault((r.relation, r.direction, r.neighbour_force), round(r.similarity, 5))
    groups = sorted(best, key=lambda g: -best[g])
    assert groups != list(best), "the fixture's closest group should not be listed first"
    chosen = select_examples(results, len(groups) + 1)
    assert [(r.relation, r.direction, r.neighbour_force) for r in chosen[: len(groups)]] == groups
    assert len(chosen) == len(groups) + 1
    assert chosen[-1] == [r for r in results if (r.relation, r.direction, r.neighbour_force) == groups[0]][1]
    assert select_examples(results, 2) == chosen[:2]
    assert select_examples([], 5) == []
