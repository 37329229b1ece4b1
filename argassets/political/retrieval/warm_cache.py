"""Embed the knowledge base's arguments into the embedding cache every home shares, once per machine.

``python -m argassets.political.retrieval.warm_cache`` (``scripts/install`` runs it when the
published data is there) reads QT30 from the published data folder, builds the KB arguments with
the same functions as the ``political_kb_arguments`` asset, and embeds every text the cache lacks,
printing its progress; afterwards ``run-default`` in any new home reads the vectors in seconds.
Run again, it embeds nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

from argassets.platform.paths import resolve_data_dir
from argassets.platform.storage.embedding_cache import EmbeddingCache
from argassets.political import aif
from argassets.political import episodes as aif_episodes
from argassets.political import knowledge_base as kb_graph
from argassets.political.retrieval.embeddings import EmbeddingRun, embed_arguments
from argassets.political.retrieval.model import load_embedding_model


def kb_arguments(data_dir: Path) -> pd.DataFrame:
    """The KB arguments of the QT30 release in ``data_dir/qt30`` (as ``political_kb_arguments``)."""
    corpus = aif.load_corpus(data_dir / "qt30")
    nodes, edges = kb_graph.corpus_tables(corpus, aif_episodes.assign_episodes(corpus))
    return kb_graph.build_arguments(nodes, edges, kb_graph.union_graph(nodes, edges))


def warm(data_dir: Path, cache: EmbeddingCache, chunk_size: int = 1024) -> EmbeddingRun:
    """Embed the KB's texts the cache lacks; progress on stderr, one line per chunk."""
    arguments = kb_arguments(data_dir)
    model = load_embedding_model()
    started = time.perf_counter()

    def progress(line: str) -> None:
        print(f"embeddings: {line}", file=sys.stderr, flush=True)  # noqa: T201

    progress(f"{len(arguments)} KB arguments, model {model.identity}, cache {cache.path}")
    _, run = embed_arguments(arguments, model, chunk_size=chunk_size, log=progress, cache=cache)
    progress(f"{run.embedded} embedded, {run.from_cache} already cached, in {time.perf_counter() - started:.0f} s")
    return run


def main() -> int:
    data_dir = resolve_data_dir()
    if data_dir is None or not (data_dir / "qt30").is_dir():
        print("embeddings: no published QT30 folder (ARGASSETS_DATA_DIR); nothing to embed", file=sys.stderr)  # noqa: T201
        return 0
    with EmbeddingCache() as cache:
        warm(data_dir, cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
