"""Dagster resources of the code location: the platform's and each study's, assembled by ``build.py``.

The classes live with what they serve (:mod:`argassets.platform.resources`, a study's
``resources.py``); the modules here name them for the code location. Configured from environment
variables at run time, never at import.
"""

from resources.data import PublishedDataResource
from resources.registry import ModelRegistryResource
from resources.storage import duckdb_io_manager

__all__ = ["ModelRegistryResource", "PublishedDataResource", "duckdb_io_manager"]
