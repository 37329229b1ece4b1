"""One embedding per KB argument: its proposition and locution, embedded together.

Embeddings are keyed by ``(text_sha256, model)``: a text embedded before by the same model (same
weights) is reused from the previous table or from the embedding cache shared by every home
(:mod:`argassets.platform.storage.embedding_cache`), so a re-materialisation, a second home or a
fresh DuckDB file embeds only new or changed texts, and a new model embeds everything again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from argassets.platform.operations.remedies import missing
from argassets.platform.storage.embedding_cache import EmbeddingCache

EMBEDDING_COLUMNS = ["argument_id", "text_sha256", "model", "dimensions", "embedding"]


class Embedder(Protocol):
    """What embedding needs of a model: an identity and unit-length vectors."""

    @property
    def identity(self) -> str: ...

    def encode(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class EmbeddingRun:
    """What one embedding pass did."""

    arguments: int
    embedded: int
    reused: int
    seconds: float
    #: Of the reused texts, those read from the shared embedding cache.
    from_cache: int = 0

    @property
    def texts_per_second(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0


def argument_text(proposition: str, locution: str) -> str:
    """The text embedded for an argument: proposition, then locution (as the authors' release)."""
    return f"{proposition or ''}\n{locution or ''}".strip()


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _reusable(previous: pd.DataFrame | None, model: str) -> dict[str, np.ndarray]:
    if previous is None or len(previous) == 0 or not set(EMBEDDING_COLUMNS) <= set(previous.columns):
        return {}
    same = previous[previous["model"] == model]
    return {
        str(h): np.asarray(v, dtype=np.float32) for h, v in zip(same["text_sha256"], same["embedding"], strict=True)
    }


def embed_arguments(
    arguments: pd.DataFrame,
    model: Embedder,
    previous: pd.DataFrame | None = None,
    chunk_size: int = 1024,
    log: Callable[[str], None] | None = None,
    cache: EmbeddingCache | None = None,
) -> tuple[pd.DataFrame, EmbeddingRun]:
    """The embeddings table of ``arguments`` (``argument_id``, ``proposition``, ``locution``).

    Texts whose hash the ``previous`` table or the ``cache`` holds for the same model are not
    embedded again; the others are embedded in chunks of ``chunk_size`` texts, each logged and
    added to the ``cache`` at once (a killed run keeps every finished chunk).
    """
    missing = {"argument_id", "proposition", "locution"} - set(arguments.columns)
    if missing:
        raise ValueError(f"political_kb_arguments lacks columns {sorted(missing)}")
    started = time.perf_counter()
    identity = model.identity
    texts = [argument_text(p, lo) for p, lo in zip(arguments["proposition"], arguments["locution"], strict=True)]
    hashes = [text_sha256(t) for t in texts]
    known = _reusable(previous, identity)
    from_cache = _from_cache(cache, identity, set(hashes), known)
    reused = sum(1 for h in set(hashes) if h in known)
    todo = list(dict.fromkeys((h, t) for h, t in zip(hashes, texts, strict=True) if h not in known))
    # longest first, so that each chunk (and each batch in it) holds texts of similar length: less padding
    todo.sort(key=lambda item: len(item[1]), reverse=True)
    for start in range(0, len(todo), chunk_size):
        chunk = todo[start : start + chunk_size]
        encoded = model.encode([t for _, t in chunk])
        fresh = {h: encoded[i] for i, (h, _) in enumerate(chunk)}
        known.update(fresh)
        if cache is not None:
            cache.put(identity, fresh)
        if log is not None:
            done = min(start + chunk_size, len(todo))
            log(f"embedded {done}/{len(todo)} new texts ({time.perf_counter() - started:.0f} s)")
    vectors = [known[h] for h in hashes]
    table = pd.DataFrame(
        {
            "argument_id": arguments["argument_id"].astype(str).to_numpy(),
            "text_sha256": hashes,
            "model": identity,
            "dimensions": [len(v) for v in vectors],
            "embedding": [v.astype(np.float32).tolist() for v in vectors],
        },
        columns=EMBEDDING_COLUMNS,
    )
    run = EmbeddingRun(len(arguments), len(todo), reused, time.perf_counter() - started, from_cache)
    return table, run


def _from_cache(cache: EmbeddingCache | None, model: str, wanted: set[str], known: dict[str, np.ndarray]) -> int:
    """Add the cache's vectors of ``wanted`` to ``known``; the previous table's vectors the cache
    lacks go into it (a home embedded before the cache existed seeds it). Returns the hits."""
    if cache is None:
        return 0
    cached = cache.get(model, wanted)
    seeds = {h: v for h, v in known.items() if h in wanted and h not in cached}
    if seeds:
        cache.put(model, seeds)
    hits = {h: v for h, v in cached.items() if h not in known}
    known.update(hits)
    return len(hits)


def embedding_matrix(table: pd.DataFrame, argument_ids: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """The argument ids and their embeddings as one float32 matrix (rows in the ids' order)."""
    if table is None or len(table) == 0:
        raise LookupError(missing("no embeddings of the knowledge base (materialise political_argument_embeddings)"))
    models = table["model"].unique()
    if len(models) != 1:
        raise ValueError(f"the embeddings table mixes models {sorted(models)}")
    by_id = dict(zip(table["argument_id"].astype(str), table["embedding"], strict=True))
    ids = list(by_id) if argument_ids is None else [str(i) for i in argument_ids]
    absent = [i for i in ids if i not in by_id]
    if absent:
        raise LookupError(
            missing(
                f"{len(absent)} arguments have no embedding (e.g. {absent[0]}; materialise political_argument_embeddings)"
            )
        )
    return ids, np.asarray([by_id[i] for i in ids], dtype=np.float32)
