"""The registry resource (defined in the platform: :mod:`argassets.platform.resources.registry`)."""

from argassets.platform.resources.registry import ModelRegistryResource

__all__ = ["ModelRegistryResource"]
