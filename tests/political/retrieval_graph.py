"""A small KB whose retrieval results are checked by hand, shared by the retrieval tests.

Seven arguments with 4-dimensional embeddings whose cosine to the query ``QUERY = [1, 0, 0, 0]`` is
known exactly, positions under the system ``E1``, and relations of every type. The expected results
below were worked out on paper (docs/retrieval.md describes the rules: filter on the similar
argument, groups per relation, direction and neighbour force, ties by argument id then neighbour id).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from argassets.political.retrieval.embedded_store import EmbeddedStore, positions_table
from argassets.political.retrieval.embeddings import embed_arguments
from argassets.political.retrieval.model import EmbeddingModel, load_embedding_model

QUERY = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)

#: id, force, E1 mean, std, prob_na, embedding (cosine to QUERY in the comment)
ARGUMENTS = [
    ("a1", "Asserting", 70.0, 5.0, 0.0, [1.0, 0.0, 0.0, 0.0]),  # 1.0
    ("a2", "Arguing", 85.0, 30.0, 0.0, [0.8, 0.6, 0.0, 0.0]),  # 0.8
    ("a3", "Asserting", 20.0, 5.0, 0.0, [0.6, 0.8, 0.0, 0.0]),  # 0.6
    ("a4", "Disagreeing", 65.0, 5.0, 0.0, [0.0, 1.0, 0.0, 0.0]),  # 0.0
    ("a5", "Asserting", 50.0, 20.0, 0.0, [0.0, 0.0, 1.0, 0.0]),  # 0.0
    ("a6", "Arguing", 75.0, 5.0, 0.5, [-1.0, 0.0, 0.0, 0.0]),  # -1.0
    ("a7", "Asserting", None, None, 1.0, [0.9, 0.0, 0.43588989, 0.0]),  # 0.9, never scored
]
#: source, relation, target
RELATIONS = [
    ("a3", "SUPPORTS", "a1"),
    ("a4", "ATTACKS", "a1"),
    ("a1", "SUPPORTS", "a2"),
    ("a2", "TRANSITIONS_TO", "a6"),
    ("a6", "IS_A_REPHRASE_OF", "a2"),
    ("a5", "ATTACKS", "a2"),
    ("a7", "SUPPORTS", "a1"),
]

#: typical responses, E1 60-90, k=1, both directions: (relation, direction, argument, neighbour)
EXPECTED_TYPICAL_RIGHT = [
    ("SUPPORTS", "incoming", "a1", "a3"),
    ("SUPPORTS", "outgoing", "a1", "a2"),
    ("ATTACKS", "incoming", "a2", "a5"),
    ("ATTACKS", "incoming", "a1", "a4"),
    ("ATTACKS", "outgoing", "a4", "a1"),
    ("IS_A_REPHRASE_OF", "incoming", "a2", "a6"),
    ("IS_A_REPHRASE_OF", "outgoing", "a6", "a2"),
    ("TRANSITIONS_TO", "incoming", "a6", "a2"),
    ("TRANSITIONS_TO", "outgoing", "a2", "a6"),
]


def arguments_frame() -> pd.DataFrame:
    rows = []
    for i, (aid, force, *_rest) in enumerate(ARGUMENTS):
        rows.append(
            {
                "argument_id": aid,
                "episode": "ep1",
                "nodeset": "1",
                "speaker": f"Speaker {i}",
                "locution": f"Speaker {i}: locution of {aid}",
                "proposition": f"proposition of {aid}",
                "force": force,
                "timestamp": "",
                "l_node_id": f"l{i}",
                "i_node_id": f"i{i}",
                "ya_node_id": f"y{i}",
            }
        )
    return pd.DataFrame(rows)


def relations_frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"source_id": s, "target_id": t, "relation": r, "aif_node_id": f"r{i}", "nodeset": "1"}
            for i, (s, r, t) in enumerate(RELATIONS)
        ]
    )


def stats_frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"system": "E1", "argument_id": aid, "mean": mean, "std": std, "prob_na": na}
            for aid, _, mean, std, na, _ in ARGUMENTS
        ]
    ).astype({"mean": float, "std": float})


def synthetic_embeddings() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "argument_id": [a[0] for a in ARGUMENTS],
            "text_sha256": [f"h{a[0]}" for a in ARGUMENTS],
            "model": "synthetic@0000000000000000",
            "dimensions": 4,
            "embedding": [list(map(float, a[5])) for a in ARGUMENTS],
        }
    )


def synthetic_store() -> EmbeddedStore:
    return EmbeddedStore.from_tables(
        arguments_frame(), relations_frame(), synthetic_embeddings(), positions_table([stats_frame()])
    )


@pytest.fixture(scope="session", name="embedding_model")
def embedding_model_fixture() -> EmbeddingModel:
    """The real all-MiniLM-L6-v2 from the installed package (extracted once)."""
    return load_embedding_model()


def real_embeddings(model: EmbeddingModel) -> pd.DataFrame:
    table, _ = embed_arguments(arguments_frame(), model)
    return table


def keys(results: list) -> list[tuple[str, str, str, str]]:
    return [(r.relation, r.direction, r.argument_id, r.neighbour_id) for r in results]
