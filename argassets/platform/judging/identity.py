"""Which model answers: the identity a judgment cache entry and its provenance are keyed by.

The cache keys completions by ``<name>@<identity key>``; each engine says what decides its answers
(:meth:`~argassets.platform.registry.model_entry.ModelEntry.identity_fields`; docs/judgments.md, "Model identity").
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from argassets.platform.registry.model_entry import ModelEntry

__all__ = ["cache_model_key", "identity_key", "model_identity"]

#: Bump when the meaning of an identity field changes.
IDENTITY_VERSION = 1


def model_identity(entry: ModelEntry) -> dict[str, Any]:
    """The identity of an entry's judge as a JSON-able dict (may read the weights file's checksum)."""
    return {"version": IDENTITY_VERSION, "backend": entry.backend, **entry.identity_fields()}


def identity_key(identity: dict[str, Any]) -> str:
    """16 hex characters of the SHA-256 of the identity's canonical JSON."""
    payload = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def cache_model_key(entry: ModelEntry, identity: dict[str, Any] | None = None) -> str:
    """The cache's model key of an entry: ``<name>@<identity key>``."""
    return f"{entry.name}@{identity_key(model_identity(entry) if identity is None else identity)}"
