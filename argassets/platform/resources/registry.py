"""The model registry as a resource, so runs and sensors read the same validated file."""

# No ``from __future__ import annotations``: Dagster reads ``ResourceDependency`` from the evaluated annotation.
import dagster as dg

from argassets.platform.registry.entries import ModelRegistry, load_registry
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.study import Studies


class ModelRegistryResource(dg.ConfigurableResource):
    """Reads ``data/models.toml`` (or ``$ARGASSETS_MODELS``, or ``path``) and validates it against ``studies``.

    ``studies`` are the code location's (a resource dependency the composition layer gives, never
    configuration): the registry's study names and scopes are checked against them.
    """

    path: str | None = None
    studies: dg.ResourceDependency[Studies]

    def load(self) -> ModelRegistry:
        return load_registry(self.path, studies=self.studies)

    def entry(self, name: str) -> ModelEntry:
        return self.load().get(name)
