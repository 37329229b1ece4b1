"""Every resource of the code location, keyed as assets ask for them."""

from __future__ import annotations

from typing import Any

from resources.data import PublishedDataResource
from resources.judges import judge_resources
from resources.neo4j import neo4j_resources
from resources.registry import ModelRegistryResource
from resources.storage import table_io_manager


def build_resources() -> dict[str, Any]:
    return {
        "io_manager": table_io_manager(),
        "data": PublishedDataResource(),
        "registry": ModelRegistryResource(),
        **judge_resources(),
        **neo4j_resources(),
    }
