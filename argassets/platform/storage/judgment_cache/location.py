"""Where the judgment cache is: ``$ARGASSETS_CACHE`` (a SQLite file or a ``postgresql://`` URL), else a
SQLite file next to the DuckDB file."""

from __future__ import annotations

import os
from pathlib import Path

from argassets.platform.secrets import redact_url

#: Environment variable naming the judgment cache: a SQLite file, or a ``postgresql://`` URL.
CACHE_ENV_VAR = "ARGASSETS_CACHE"


def is_postgres_url(location: str | os.PathLike[str] | None) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def redact_location(location: str) -> str:
    """A location fit for logs and metadata: a URL's password replaced by ``***``."""
    return redact_url(location)


def default_cache_location() -> str:
    """``$ARGASSETS_CACHE`` (a SQLite file or a ``postgresql://`` URL), else
    ``judgment_cache.sqlite`` next to the DuckDB file."""
    from_env = os.environ.get(CACHE_ENV_VAR)
    if from_env:
        return from_env
    from argassets.platform.paths import resolve_duckdb_path

    return str(resolve_duckdb_path().parent / "judgment_cache.sqlite")


def default_cache_path() -> Path:
    """The SQLite judgment cache file (:func:`default_cache_location` when it is not a URL)."""
    location = default_cache_location()
    if is_postgres_url(location):
        raise ValueError(f"{CACHE_ENV_VAR} is a PostgreSQL URL, not a file: {redact_location(location)}")
    return Path(location)
