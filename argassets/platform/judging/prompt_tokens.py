"""Prompt tokens of a partition's requests: the model's own tokenizer where its engine has one here, else characters / 4."""

from __future__ import annotations

import math
from collections.abc import Sequence

from argassets.platform.judging.interface import ChatRequest
from argassets.platform.registry.model_entry import ModelEntry

#: The usual rule of thumb for English text with BPE tokenizers, stated as such where it is used.
CHARS_PER_TOKEN = 4.0
APPROXIMATION = "approximation: characters / 4"


def approx_tokens(request: ChatRequest) -> int:
    return math.ceil((len(request.system) + len(request.user)) / CHARS_PER_TOKEN)


def prompt_token_counts(entry: ModelEntry, requests: Sequence[ChatRequest]) -> tuple[list[int], str]:
    """Tokens of each request's prompt (chat template included), and how they were counted."""
    tokenizer = entry.prompt_tokenizer() if requests else None
    if tokenizer is None:
        return [approx_tokens(r) for r in requests], APPROXIMATION
    return tokenizer.count(requests), tokenizer.description
