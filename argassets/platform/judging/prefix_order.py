"""The order requests are sent in: shared prompt prefixes next to each other.

docs/judgments.md, "Prefix order and the prefill floor".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from argassets.platform.judging.interface import ChatRequest

__all__ = ["distinct_in_prefix_order", "prefix_key", "prefix_order"]


def prefix_key(request: ChatRequest) -> tuple[str, str]:
    """The sort key that keeps shared rendered prefixes adjacent: system text, then user text."""
    return request.system, request.user


def prefix_order(requests: Sequence[ChatRequest]) -> list[int]:
    """Indices of ``requests`` in prefix order (stable: equal prompts keep their table order)."""
    return sorted(range(len(requests)), key=lambda index: prefix_key(requests[index]))


def distinct_in_prefix_order(requests: Iterable[ChatRequest], sort: bool = True) -> dict[str, ChatRequest]:
    """One request per prompt hash (the first in table order), keyed by hash, in prefix order
    (``sort=False``: in table order, for judges that compute no prompt)."""
    representative: dict[str, ChatRequest] = {}
    for request in requests:
        representative.setdefault(request.prompt_sha256, request)
    if not sort:
        return representative
    return dict(sorted(representative.items(), key=lambda item: prefix_key(item[1])))
