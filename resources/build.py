"""The platform's resources of the code location, keyed as assets ask for them (each study adds its own)."""

from __future__ import annotations

from typing import Any

from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import judge_resources
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import table_io_manager
from argassets.platform.study import Studies


def build_resources(studies: Studies) -> dict[str, Any]:
    """Table storage, published data, the registry (validated against ``studies``), judges and the cache."""
    return {
        "io_manager": table_io_manager(),
        "data": PublishedDataResource(),
        "registry": ModelRegistryResource(studies=studies),
        **judge_resources(),
    }
