"""The Python API: a retriever (a store and the embedding model) and the generation calls on top.

>>> retriever = Retriever(EmbeddedStore.from_tables(...), load_embedding_model())
>>> results = retriever.retrieve(RetrievalQuery("Rich people should pay higher taxes", method="typical",
...                              filter=PoliticalFilter("E1", 60, 90)))
>>> answer = debate("Rich people should pay higher taxes", 60, 90, results, entry, cache)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from argassets.platform.judging.interface import Judge, SamplingParams
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.storage.judgment_cache.interface import JudgmentStore
from argassets.political.retrieval.generation import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_SAMPLING,
    GeneratedAnswer,
    debater_request,
    generate,
    persona_request,
    select_examples,
)
from argassets.political.retrieval.model import EmbeddingModel
from argassets.political.retrieval.query import RetrievalError, RetrievalQuery, RetrievalResult


class Store(Protocol):
    def search(self, query: RetrievalQuery, vector: np.ndarray) -> list[RetrievalResult]: ...


class ModelMismatchError(RetrievalError):
    """The store's embeddings come from another model than the one embedding the query."""


@dataclass
class Retriever:
    """Embeds the utterance with the store's model and searches the store."""

    store: Store
    model: EmbeddingModel
    #: The model identity the store's embeddings were computed with ("" to skip the check).
    store_model: str = ""
    last_latency_s: float = 0.0

    def retrieve(self, query: RetrievalQuery) -> list[RetrievalResult]:
        query.validate()
        if self.store_model and self.store_model != self.model.identity:
            raise ModelMismatchError(
                f"the store's embeddings come from {self.store_model}, the query model is {self.model.identity}: "
                "use the same model folder, or materialise political_argument_embeddings with this one"
            )
        started = time.perf_counter()
        vector = self.model.encode([query.utterance])[0]
        results = self.store.search(query, vector)
        self.last_latency_s = time.perf_counter() - started
        return results


def debate(
    utterance: str,
    low: float | None,
    high: float | None,
    results: Sequence[RetrievalResult],
    entry: ModelEntry,
    cache: JudgmentStore,
    sampling: SamplingParams = DEFAULT_SAMPLING,
    judge: Judge | None = None,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
) -> GeneratedAnswer:
    """The debater's answer to ``utterance`` from the range ``low``-``high``, shown at most
    ``max_examples`` of ``results`` (no examples when ``results`` is empty)."""
    shown = select_examples(results, max_examples)
    request = debater_request(utterance, low, high, shown)
    return generate("debate", request, shown, entry, cache, sampling, judge)


def persona(
    low: float | None,
    high: float | None,
    results: Sequence[RetrievalResult],
    entry: ModelEntry,
    cache: JudgmentStore,
    sampling: SamplingParams = DEFAULT_SAMPLING,
    judge: Judge | None = None,
    max_examples: int = DEFAULT_MAX_EXAMPLES,
) -> GeneratedAnswer:
    """A persona of the range ``low``-``high``, grounded in at most ``max_examples`` of ``results``."""
    shown = select_examples(results, max_examples)
    request = persona_request(low, high, shown)
    return generate("persona", request, shown, entry, cache, sampling, judge)
