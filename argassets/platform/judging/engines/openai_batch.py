"""The ``openai`` engine's requests as batch-file lines: the bytes its live requests carry.

The body is :meth:`OpenAIJudge.request_body` encoded by httpx's own JSON encoder, the one its client
uses to post (``ensure_ascii=False``, no spaces), so a batch line's ``body`` is byte for byte what
the live judge sends for the same request and run (tested against a local server). The seed is the
live judge's: ``run_seed(sampling.seed, request.prompt_sha256, run)``.
"""

from __future__ import annotations

import httpx

from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.interface import ChatRequest, SamplingParams, run_seed

__all__ = ["OpenAIBatchFormat"]


class OpenAIBatchFormat:
    """Batch lines of an :class:`OpenAIJudge` (its model id, structured-output mode and knobs)."""

    backend = "openai-batch"

    def __init__(self, judge: OpenAIJudge):
        self.judge = judge

    def body(self, request: ChatRequest, sampling: SamplingParams, run: int) -> bytes:
        return httpx.Request("POST", self.judge.url, json=self.judge.request_body(request, sampling, run)).content

    def seed(self, request: ChatRequest, sampling: SamplingParams, run: int) -> int | None:
        return run_seed(sampling.seed, request.prompt_sha256, run)
