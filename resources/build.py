"""Every resource of the code location, keyed as assets ask for them: the platform's, then each study's."""

from __future__ import annotations

from typing import Any

from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import judge_resources
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import table_io_manager
from argassets.platform.study import studies


def build_resources() -> dict[str, Any]:
    built: dict[str, Any] = {
        "io_manager": table_io_manager(),
        "data": PublishedDataResource(),
        "registry": ModelRegistryResource(),
        **judge_resources(),
    }
    for study in studies():
        for key, resource in study.resources().items():
            if key in built:
                raise ValueError(f"study '{study.name}' defines resource '{key}', which is already defined")
            built[key] = resource
    return built
