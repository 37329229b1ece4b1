"""What an engine computed of the prompts it was sent, beside the floor for the same prompts.

docs/judgments.md, "What the engines compute".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from argassets.platform.judging.interface import ChatRequest, Completion, Judge, SamplingParams
from argassets.platform.judging.prefill_floor import PromptPrefixes, ReuseModel, prefill_tokens
from argassets.platform.judging.prompt_token_ids import ChatTokenizer, entry_tokenizer, tokenize_prompts
from argassets.platform.registry.model_entry import ModelEntry

__all__ = ["PrefillCounts", "PrefillMeter", "partition_prefill", "prefill_metadata"]


@dataclass(frozen=True)
class PrefillCounts:
    """Prompt tokens an engine computed and took from its cache, by its own count."""

    computed: int = 0
    reused: int = 0
    #: Where the counts come from (a metric's name, a counter in the judge).
    source: str = ""

    def __add__(self, other: PrefillCounts) -> PrefillCounts:
        return PrefillCounts(self.computed + other.computed, self.reused + other.reused, other.source or self.source)

    def __sub__(self, other: PrefillCounts) -> PrefillCounts:
        return PrefillCounts(self.computed - other.computed, self.reused - other.reused, self.source or other.source)

    @property
    def hit_rate(self) -> float:
        """Share of the prompt tokens the engine took from its cache."""
        total = self.computed + self.reused
        return self.reused / total if total else 0.0


class PrefillMeter:
    """A judge that records what it is sent, for :func:`prefill_metadata` (a :class:`Judge` itself)."""

    def __init__(self, judge: Judge):
        self.judge = judge
        self.backend = judge.backend
        self.prefix_order = bool(getattr(judge, "prefix_order", True))
        self.sent: list[ChatRequest] = []
        #: Sequences each sent prompt became (its runs in that call).
        self.copies: list[int] = []

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        self.sent.extend(requests)
        self.copies.extend([len(runs)] * len(requests))
        return self.judge.complete(requests, sampling, runs)

    def close(self) -> None:
        self.judge.close()

    def counts(self) -> PrefillCounts | None:
        """The engine's own counts over this judge's life, or ``None`` when it keeps none."""
        counts = getattr(self.judge, "prefill_counts", None)
        return counts if isinstance(counts, PrefillCounts) else None

    def reuse_model(self) -> ReuseModel | None:
        model = getattr(self.judge, "reuse_model", None)
        model = model() if callable(model) else model
        return model if isinstance(model, ReuseModel) else None


def _sent_once(meter: PrefillMeter) -> tuple[list[ChatRequest], np.ndarray]:
    """The prompts sent, each once (its first sending), and their sequences in all."""
    first: dict[str, int] = {}
    copies: list[int] = []
    prompts: list[ChatRequest] = []
    for request, n in zip(meter.sent, meter.copies, strict=True):
        index = first.get(request.prompt_sha256)
        if index is None:
            first[request.prompt_sha256] = len(prompts)
            prompts.append(request)
            copies.append(n)
        else:
            copies[index] += n
    return prompts, np.asarray(copies, dtype=np.int64)


def prefill_metadata(meter: PrefillMeter, tokenizer: ChatTokenizer | None) -> dict[str, Any]:
    """The engine's prefill counts beside the floor of its reuse model, as materialisation metadata.

    ``prefill_floor`` is computed for the prompts in the order they were sent, ``prefill_floor_best``
    for the same prompts sorted by token ids (the least any order reaches). Empty when the judge
    counts nothing or sent nothing; without a local tokenizer, the counts alone.
    """
    counts = meter.counts()
    if counts is None or not meter.sent:
        return {}
    metadata: dict[str, Any] = {
        "prefill_computed": counts.computed,
        "prefill_reused": counts.reused,
        "prefix_cache_hit_rate": round(counts.hit_rate, 4),
        "prefill_counted_by": counts.source,
    }
    model = meter.reuse_model()
    if tokenizer is None or model is None:
        metadata["prefill_floor"] = "not computed: no local tokenizer or reuse model for this engine"
        return metadata
    prompts, copies = _sent_once(meter)
    tokenized = tokenize_prompts(tokenizer, prompts)
    prefixes = PromptPrefixes(tokenized)
    sent_order = np.arange(len(prompts))
    floor = prefill_tokens(prefixes, sent_order, model, copies)
    best = prefill_tokens(prefixes, prefixes.sorted, model, copies[prefixes.sorted])
    raw = int((tokenized.lengths * (copies if model.kind == "blocks" else 1)).sum())
    metadata.update(
        {
            "prefill_prompt_tokens": raw,
            "prefill_floor": floor,
            "prefill_floor_best": best,
            "prefill_floor_model": model.describe(),
            "prefill_over_floor": round(counts.computed / floor, 4) if floor else 0.0,
            "prefill_tokenizer": tokenized.method,
        }
    )
    return metadata


def partition_prefill(meter: PrefillMeter, entry: ModelEntry) -> dict[str, Any]:
    """:func:`prefill_metadata` with the entry's own tokenizer (loaded only when the engine counted)."""
    if meter.counts() is None or not meter.sent:
        return {}
    tokenizer = entry_tokenizer(entry)
    try:
        return prefill_metadata(meter, tokenizer)
    finally:
        if tokenizer is not None:
            tokenizer.close()
