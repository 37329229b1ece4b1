"""The published-data resource (defined in the platform: :mod:`argassets.platform.resources.data`)."""

from argassets.platform.resources.data import PublishedDataResource

__all__ = ["PublishedDataResource"]
