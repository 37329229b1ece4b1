"""The order requests are sent in: shared prompt prefixes next to each other.

A prompt is rendered as the chat template's head, the system text, the template's middle, the user
text and its tail, so two prompts share a rendered prefix as long as they share a system text and
then the start of the user text (Study A: the dimension and strategy, the few-shot block, then
"Argument A: ..."). Sorting by ``(system, user)`` therefore puts every group of prompts that share a
prefix in one run of adjacent requests, whatever order the study's table has: an engine that keeps
only the previous prompt's prefix (llama.cpp) then computes what a cache keeping every prefix would,
and one with a bounded cache (vLLM) reuses a block while it is still there. The order of the
prompts' token ids would group the same prompts; it needs the tokenizer and gave the same prefill
on Study A (docs/judgments.md, "Prefix order and the prefill floor"), so the text is the key.

Only the order of sending changes: seeds are per prompt and run, results are reported in the
table's order. Judges that compute no prompt (the baselines, imports) declare ``prefix_order =
False`` and are sent the table's order: sorting 125,568 prompts costs a fraction of a second they
would gain nothing for.
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
