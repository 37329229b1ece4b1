"""The embedding dtype: bfloat16 only on CPUs with native bfloat16, part of the model key, ~float32 results."""

from __future__ import annotations

import numpy as np
import pytest

from argassets.political.retrieval.embeddings import embed_arguments
from argassets.political.retrieval.model import (
    EmbeddingModel,
    EmbeddingModelError,
    dtype_of,
    model_identity,
    native_bf16,
)
from tests.political.retrieval_graph import (
    arguments_frame,
    embedding_model_fixture,  # noqa: F401 - the session fixture
)

ZEN3 = "processor\t: 0\nflags\t\t: fpu sse sse2 avx avx2 fma f16c vaes\n"
SAPPHIRE_RAPIDS = "flags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile\n"
UTTERANCES = [
    "Rich people should pay higher taxes.",
    "Taxes on the wealthy drive investment abroad.",
    "The NHS needs more money, not more managers.",
    "Private providers make the health service more efficient.",
    "Brexit gave us back control of our borders.",
    "Leaving the EU has cost jobs in manufacturing.",
    "Immigration fills vital gaps in the workforce.",
    "Net migration is far too high.",
    "We must cut carbon emissions faster.",
    "Green levies push up household energy bills.",
    "Tuition fees should be scrapped.",
    "Graduates should contribute to the cost of their degrees.",
]


def test_bfloat16_is_chosen_by_the_cpu_flags() -> None:
    assert native_bf16(SAPPHIRE_RAPIDS) and native_bf16("flags : avx512_bf16\n")
    assert not native_bf16(ZEN3) and not native_bf16("")


def test_the_dtype_is_part_of_the_model_key(embedding_model: EmbeddingModel) -> None:
    folder = embedding_model.folder
    f32, bf16 = EmbeddingModel(folder, dtype="float32"), EmbeddingModel(folder, dtype="bfloat16")
    assert f32.identity == model_identity(folder) and bf16.identity == f"{model_identity(folder)}+bfloat16"
    assert (dtype_of(f32.identity), dtype_of(bf16.identity)) == ("float32", "bfloat16")
    with pytest.raises(EmbeddingModelError, match="'float16' is not one of float32, bfloat16"):
        EmbeddingModel(folder, dtype="float16")
    # float32 vectors are never reused for a bfloat16 model, nor the other way round
    table, _ = embed_arguments(arguments_frame(), f32)
    _, run = embed_arguments(arguments_frame(), bf16, previous=table)
    assert run.reused == 0 and run.embedded == len(arguments_frame())


def test_bfloat16_neighbours_match_float32(embedding_model: EmbeddingModel) -> None:
    f32 = EmbeddingModel(embedding_model.folder, dtype="float32").encode(UTTERANCES)
    bf16 = EmbeddingModel(embedding_model.folder, dtype="bfloat16").encode(UTTERANCES)
    assert bf16.dtype == np.float32 and np.allclose(np.linalg.norm(bf16, axis=1), 1.0, atol=1e-2)
    assert float((f32 * bf16).sum(axis=1).min()) > 0.98
    k = 3

    def top(matrix: np.ndarray) -> list[set[int]]:
        sims = matrix @ matrix.T
        np.fill_diagonal(sims, -1)
        return [set(np.argsort(-row)[:k]) for row in sims]

    recall = np.mean([len(a & b) / k for a, b in zip(top(f32), top(bf16), strict=True)])
    assert recall >= 0.9
