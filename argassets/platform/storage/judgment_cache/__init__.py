"""The judgment cache: completions keyed by model identity, prompt, sampling and run, shared by every run.

:func:`open_judgment_cache` picks the store of a location: :class:`~.sqlite.SQLiteJudgmentStore` (one
machine) or :class:`~.postgres.PostgresJudgmentStore` (many); docs/judgments.md, "The judgment cache".
"""

from __future__ import annotations

import os

from argassets.platform.storage.judgment_cache.interface import JudgmentStore
from argassets.platform.storage.judgment_cache.location import is_postgres_url
from argassets.platform.storage.judgment_cache.postgres import PostgresJudgmentStore
from argassets.platform.storage.judgment_cache.sqlite import SQLiteJudgmentStore


def open_judgment_cache(location: str | os.PathLike[str], timeout_s: float = 120.0) -> JudgmentStore:
    """The cache at ``location``: PostgreSQL for a ``postgresql://`` URL, else a SQLite file."""
    if is_postgres_url(location):
        return PostgresJudgmentStore(str(location))
    return SQLiteJudgmentStore(location, timeout_s=timeout_s)
