"""The ``openai`` engine's requests as batch-file lines: the bytes its live requests carry.

The body is :meth:`OpenAIJudge.request_body` encoded by httpx's own JSON encoder, the one its client
uses to post (``ensure_ascii=False``, no spaces), so a batch line's ``body`` is byte for byte what
the live judge sends for the same request and run (tested against a local server). The seed is the
live judge's: ``sampling.run_seed(run)``.
"""

from __future__ import annotations

import httpx

from argassets.platform.judging.batch_files import BatchFormat
from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.interface import ChatRequest, SamplingParams
from argassets.platform.registry.entries import ModelEntry

__all__ = ["OpenAIBatchFormat", "batch_format"]


class OpenAIBatchFormat:
    """Batch lines of an :class:`OpenAIJudge` (its model id, structured-output mode and knobs)."""

    backend = "openai-batch"

    def __init__(self, judge: OpenAIJudge):
        self.judge = judge

    def body(self, request: ChatRequest, sampling: SamplingParams, run: int) -> bytes:
        return httpx.Request("POST", self.judge.url, json=self.judge.request_body(request, sampling, run)).content

    def seed(self, request: ChatRequest, sampling: SamplingParams, run: int) -> int | None:
        return sampling.run_seed(run)


def batch_format(entry: ModelEntry, structured_output: str = "json_schema") -> BatchFormat:
    """The batch lines of a registry entry's engine: ``openai`` (its live bodies) or ``vllm_batch``
    (``vllm run-batch``'s); other backends have no batch files."""
    if entry.backend == "openai":
        judge = OpenAIJudge(
            entry.model_id or entry.name,
            "http://batch.invalid/v1",  # never contacted: only the bodies are used
            structured_output=structured_output,  # type: ignore[arg-type]
            server_sampling_defaults=entry.server_sampling_defaults,
        )
        return OpenAIBatchFormat(judge)
    if entry.backend == "vllm_batch":
        from argassets.platform.judging.engines.vllm_run_batch import VLLMBatchFormat

        return VLLMBatchFormat(entry.model_id or entry.name)
    raise ValueError(f"model '{entry.name}': backend {entry.backend!r} has no batch files (openai and vllm_batch have)")
