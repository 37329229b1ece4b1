"""Judge resources: one interface, a backend per registry entry (filled in by the judgments work)."""

from __future__ import annotations

from typing import Any


def judge_resources() -> dict[str, Any]:
    """Resources that the judgments assets need, keyed by resource name."""
    return {}
