"""The prefill a partition's missing prompts will cost at least, before it runs (for ``argassets estimate``).

The prompts to send are tokenized with the engine's own tokenizer and put in the order the judging
step sends them (:mod:`~argassets.platform.judging.prefix_order`); the floor of the engine's reuse
model (:mod:`~argassets.platform.judging.prefill_floor`) is then what it must compute, and the time
estimate scales with it rather than with the raw prompt tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from argassets.platform.judging.interface import ChatRequest
from argassets.platform.judging.prefill_floor import PromptPrefixes, prefill_tokens
from argassets.platform.judging.prefix_order import prefix_order
from argassets.platform.judging.prompt_token_ids import entry_tokenizer, tokenize_prompts
from argassets.platform.registry.model_entry import ModelEntry

__all__ = ["PrefillEstimate", "estimate_prefill"]


@dataclass(frozen=True)
class PrefillEstimate:
    """The prompt tokens to send and the least of them the engine computes."""

    #: Tokens of each distinct prompt to send (chat template included), in the caller's order.
    counts: list[int]
    #: All runs: ``sum(counts) * n_runs``.
    prompt_tokens: int
    floor: int
    model: str
    tokenizer: str

    @property
    def share(self) -> float:
        return self.floor / self.prompt_tokens if self.prompt_tokens else 0.0

    def describe(self) -> str:
        return (
            f"prefill the engine computes at least: {self.floor} tokens, {100 * self.share:.1f}% of "
            f"{self.prompt_tokens} (floor: {self.model}, prefix order; {self.tokenizer})"
        )


def estimate_prefill(entry: ModelEntry, requests: list[ChatRequest], n_runs: int) -> PrefillEstimate | None:
    """The floor of ``requests`` (distinct prompts, each with ``n_runs`` runs to send), or ``None``
    when the engine's tokenizer is not on this machine or its reuse is unknown."""
    model = entry.prefix_reuse()
    tokenizer = entry_tokenizer(entry) if model is not None and requests else None
    if model is None or tokenizer is None:
        return None
    try:
        tokenized = tokenize_prompts(tokenizer, requests)
    finally:
        tokenizer.close()
    order = np.asarray(prefix_order(requests), dtype=np.int64)
    floor = prefill_tokens(PromptPrefixes(tokenized), order, model, copies=n_runs)
    counts = [int(n) for n in tokenized.lengths]
    return PrefillEstimate(counts, sum(counts) * n_runs, floor, model.describe(), tokenized.method)
