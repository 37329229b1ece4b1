"""Text embeddings shared by every Dagster home and DuckDB file of a user: keyed by (model, text hash).

A vector depends only on the model (its weights and dtype: the model's identity) and the text, so
a second home, a fresh DuckDB file or a re-run reuses what any of them embedded before. One SQLite
file (``$ARGASSETS_EMBEDDING_CACHE``, else ``~/.cache/argassets/embeddings.sqlite``) in WAL mode:
writers add rows in transactions (a killed writer leaves every row whole or absent), several
processes may read and write at once (each waits its turn for the write lock), and a row is never
replaced (``INSERT OR IGNORE``: the first vector of a (model, text) stays).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType

import numpy as np

EMBEDDING_CACHE_ENV_VAR = "ARGASSETS_EMBEDDING_CACHE"
#: Rows looked up per SELECT (SQLite's default limit of host parameters is 32,766).
LOOKUP_BATCH = 900
#: How long a writer waits for another's write lock before failing.
BUSY_TIMEOUT_S = 120.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dimensions INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
)
"""


class EmbeddingCacheError(RuntimeError):
    """The cache file cannot be opened or holds a malformed row (names the file)."""


def default_embedding_cache(environ: Mapping[str, str] | None = None) -> Path:
    """``$ARGASSETS_EMBEDDING_CACHE``, else ``~/.cache/argassets/embeddings.sqlite``."""
    env = os.environ if environ is None else environ
    configured = env.get(EMBEDDING_CACHE_ENV_VAR)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "argassets" / "embeddings.sqlite"


class EmbeddingCache:
    """The shared cache; a context manager that closes its connection."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = Path(path) if path is not None else default_embedding_cache()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise EmbeddingCacheError(f"embedding cache {self.path}: {exc} (set {EMBEDDING_CACHE_ENV_VAR})") from exc

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def get(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``hashes`` under ``model`` (float32), by hash; absent hashes are left out."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(wanted), LOOKUP_BATCH):
            batch = wanted[start : start + LOOKUP_BATCH]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT text_sha256, dimensions, vector FROM embeddings WHERE model = ? AND text_sha256 IN ({marks})",
                [model, *batch],
            )
            for text_hash, dimensions, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if len(vector) != dimensions:
                    raise EmbeddingCacheError(
                        f"embedding cache {self.path}: row ({model}, {text_hash}) holds {len(vector)} floats, "
                        f"not {dimensions}"
                    )
                found[text_hash] = vector
        return found

    def put(self, model: str, vectors: Mapping[str, np.ndarray]) -> int:
        """Add ``vectors`` (by text hash) under ``model`` in one transaction; returns the rows added."""
        rows = [
            (model, text_hash, int(np.asarray(v).size), np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for text_hash, v in vectors.items()
        ]
        before = self._db.total_changes
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany("INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?, ?)", rows)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return self._db.total_changes - before

    def count(self, model: str | None = None) -> int:
        """Rows stored (of ``model`` when given)."""
        if model is None:
            return int(self._db.execute("SELECT count(*) FROM embeddings").fetchone()[0])
        return int(self._db.execute("SELECT count(*) FROM embeddings WHERE model = ?", [model]).fetchone()[0])
