"""Where the platform reads published data and writes its database, resolved at run time."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR_ENV_VAR = "ARGASSETS_DATA_DIR"
DUCKDB_ENV_VAR = "ARGASSETS_DUCKDB"
SPECS_DIR_ENV_VAR = "ARGASSETS_SPECS_DIR"
#: Embedded sample data (Study A writes its invented corpus there: argument_quality/corpus.py).
SAMPLE_DATA_DIR = PROJECT_ROOT / "data" / "sample"
#: Checkout convention: the shared published data sits beside the project.
SIBLING_SHARED_DATA_DIR = PROJECT_ROOT.parent / "shared" / "data"
#: Checkout convention: the studies' protocol specifications sit beside the project too.
SIBLING_SPECS_DIR = PROJECT_ROOT.parent / "shared" / "specs"
DEFAULT_DUCKDB_PATH = PROJECT_ROOT / "var" / "argassets.duckdb"


def resolve_data_dir(explicit: str | None = None) -> Path | None:
    """The published-data folder: explicit, else ``$ARGASSETS_DATA_DIR``, else ``../shared/data``
    when it exists, else ``None`` (callers then use the Zenodo release or the embedded sample)."""
    if explicit:
        return Path(explicit)
    from_env = os.environ.get(DATA_DIR_ENV_VAR)
    if from_env:
        return Path(from_env)
    if SIBLING_SHARED_DATA_DIR.is_dir():
        return SIBLING_SHARED_DATA_DIR
    return None


def resolve_specs_dir() -> Path:
    """The folder of the protocol specifications: ``$ARGASSETS_SPECS_DIR``, else ``../shared/specs``."""
    from_env = os.environ.get(SPECS_DIR_ENV_VAR)
    return Path(from_env) if from_env else SIBLING_SPECS_DIR


def resolve_duckdb_path(explicit: str | None = None) -> Path:
    """The DuckDB file: explicit, else ``$ARGASSETS_DUCKDB``, else ``var/argassets.duckdb`` (git-ignored)."""
    path = Path(explicit or os.environ.get(DUCKDB_ENV_VAR) or DEFAULT_DUCKDB_PATH)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
