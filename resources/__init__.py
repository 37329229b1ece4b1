"""Dagster resources: configured from environment variables at run time, never at import."""

from resources.data import PublishedDataResource
from resources.registry import ModelRegistryResource
from resources.storage import duckdb_io_manager

__all__ = ["ModelRegistryResource", "PublishedDataResource", "duckdb_io_manager"]
