"""The model registry as a resource, so runs and sensors read the same validated file."""

from __future__ import annotations

import dagster as dg

from argassets.platform.registry.entries import ModelRegistry, load_registry
from argassets.platform.registry.model_entry import ModelEntry


class ModelRegistryResource(dg.ConfigurableResource):
    """Reads ``data/models.toml`` (or ``$ARGASSETS_MODELS``, or ``path``) and validates it."""

    path: str | None = None

    def load(self) -> ModelRegistry:
        return load_registry(self.path)

    def entry(self, name: str) -> ModelEntry:
        return self.load().get(name)
