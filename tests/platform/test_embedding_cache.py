"""The embedding cache shared by every home: reuse across tables, concurrent writers, killed writers."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from argassets.platform.storage.embedding_cache import (
    EMBEDDING_CACHE_ENV_VAR,
    EmbeddingCache,
    EmbeddingCacheError,
    default_embedding_cache,
)
from argassets.political.retrieval.embeddings import embed_arguments, text_sha256


class CountingModel:
    """A deterministic fake model that counts the texts it embeds (the real one is a service fixture)."""

    identity = "counting@0000000000000000"

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.encoded += texts
        return np.asarray([_vector(t) for t in texts], dtype=np.float32)


def _vector(text: str) -> np.ndarray:
    rng = np.random.default_rng(int(text_sha256(text)[:8], 16))
    v = rng.normal(size=8)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _arguments(n: int, offset: int = 0) -> pd.DataFrame:
    ids = [f"a{i}" for i in range(offset, offset + n)]
    return pd.DataFrame({"argument_id": ids, "proposition": [f"p {i}" for i in ids], "locution": ids})


def test_the_location_is_the_variable_else_the_user_cache() -> None:
    assert default_embedding_cache({EMBEDDING_CACHE_ENV_VAR: "/x/e.sqlite"}) == Path("/x/e.sqlite")
    assert default_embedding_cache({}) == Path.home() / ".cache" / "argassets" / "embeddings.sqlite"


def test_a_second_home_embeds_nothing_and_gets_the_same_table(tmp_path: Path) -> None:
    model = CountingModel()
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        first, run1 = embed_arguments(_arguments(30), model, previous=None, chunk_size=7, cache=cache)
        assert run1.embedded == 30 and cache.count(model.identity) == 30
        # a fresh DuckDB file: no previous table, every vector from the cache
        model.encoded.clear()
        second, run2 = embed_arguments(_arguments(30), model, previous=None, cache=cache)
    assert model.encoded == [] and run2.embedded == 0 and run2.from_cache == 30
    pd.testing.assert_frame_equal(first, second)
    # another model shares nothing
    other = CountingModel()
    other.identity = "other@1111111111111111"  # type: ignore[misc]
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        _, run3 = embed_arguments(_arguments(30), other, cache=cache)
    assert run3.embedded == 30 and run3.from_cache == 0


def test_a_previous_table_seeds_the_cache(tmp_path: Path) -> None:
    model = CountingModel()
    previous, _ = embed_arguments(_arguments(10), model)  # embedded before the cache existed
    model.encoded.clear()
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        _, run = embed_arguments(_arguments(12), model, previous=previous, cache=cache)
        assert run.embedded == 2 and cache.count(model.identity) == 12
    assert len(model.encoded) == 2


def _writer(path: str, start: int, count: int, pause: float) -> None:
    with EmbeddingCache(path) as cache:
        for i in range(start, start + count):
            cache.put("m", {f"h{i}": np.full(384, i, dtype=np.float32)})
            time.sleep(pause)


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "c.sqlite")
    ctx = multiprocessing.get_context("spawn")
    # overlapping ranges: 0-199 and 100-299, written at once
    writers = [ctx.Process(target=_writer, args=(path, s, 200, 0.0)) for s in (0, 100)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(120)
        assert w.exitcode == 0
    with EmbeddingCache(path) as cache:
        assert cache.count("m") == 300
        got = cache.get("m", [f"h{i}" for i in range(300)])
    assert all(np.array_equal(got[f"h{i}"], np.full(384, i, dtype=np.float32)) for i in range(300))


def test_a_killed_writer_leaves_whole_rows_and_the_cache_usable(tmp_path: Path) -> None:
    path = str(tmp_path / "c.sqlite")
    ctx = multiprocessing.get_context("spawn")
    writer = ctx.Process(target=_writer, args=(path, 0, 100_000, 0.0))
    writer.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if Path(path).exists():
            with sqlite3.connect(path, timeout=30) as db:
                # The file exists a moment before the writer has made its table.
                made = db.execute("select count(*) from sqlite_master where name = 'embeddings'").fetchone()[0]
                if made and db.execute("select count(*) from embeddings").fetchone()[0] > 50:
                    break
    assert writer.pid is not None
    os.kill(writer.pid, signal.SIGKILL)
    writer.join(30)
    assert writer.exitcode == -signal.SIGKILL
    with EmbeddingCache(path) as cache:
        stored = cache.count("m")
        assert stored > 50
        got = cache.get("m", [f"h{i}" for i in range(stored + 100)])  # every stored row is whole
        assert sorted(got) == sorted(f"h{i}" for i in range(stored))
        assert all(v.shape == (384,) for v in got.values())
        assert cache.put("m", {"after": np.ones(384, dtype=np.float32)}) == 1


def test_a_malformed_row_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        cache.put("m", {"h": np.ones(4, dtype=np.float32)})
    with sqlite3.connect(path) as db:
        db.execute("update embeddings set dimensions = 5")
    with EmbeddingCache(path) as cache, pytest.raises(EmbeddingCacheError, match=r"\(m, h\) holds 4 floats, not 5"):
        cache.get("m", ["h"])


def test_warming_embeds_the_kb_once_and_skips_without_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from argassets.political.retrieval import warm_cache

    model = CountingModel()
    monkeypatch.setattr(warm_cache, "kb_arguments", lambda data_dir: _arguments(40))
    monkeypatch.setattr(warm_cache, "load_embedding_model", lambda: model)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        assert warm_cache.warm(tmp_path, cache, chunk_size=16).embedded == 40
        again = warm_cache.warm(tmp_path, cache)
    assert again.embedded == 0 and again.from_cache == 40 and len(model.encoded) == 40
    monkeypatch.setenv("ARGASSETS_DATA_DIR", str(tmp_path / "nothing"))
    monkeypatch.setattr(warm_cache, "resolve_data_dir", lambda: None)
    assert warm_cache.main() == 0 and len(model.encoded) == 40
