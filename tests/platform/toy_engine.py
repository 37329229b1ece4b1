"""A toy judge engine, whole in this one file: its typed fields, its judge, identity, batch size and tokenizer.

Importing the module registers it as backend ``toy`` (the decorator is its registration); a registry
entry then reads ``backend = "toy"`` and ``answer = "B"``. It always answers ``answer`` when the
request allows it (else the request's first choice), so its tables are predictable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from argassets.platform.judging.interface import (
    ChatRequest,
    Completion,
    Judge,
    JudgeSettings,
    PromptTokenizer,
    SamplingParams,
    run_seed,
    utc_now,
)
from argassets.platform.registry.model_entry import ModelEntry, judge_engine


class ToyJudge:
    backend = "toy"
    is_baseline = False

    def __init__(self, answer: str):
        self.answer = answer
        self.batches: list[int] = []

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        self.batches.append(len(requests))
        now = utc_now()
        return [
            [
                Completion(
                    self._label(request), run, run_seed(sampling.seed, request.prompt_sha256, run), 0.0, now, now
                )
                for run in runs
            ]
            for request in requests
        ]

    def _label(self, request: ChatRequest) -> str:
        choices = request.choices or (self.answer,)
        return self.answer if self.answer in choices else choices[0]

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class WhitespaceTokenizer:
    description: str = "whitespace words (toy engine)"

    def count(self, requests: Sequence[ChatRequest]) -> list[int]:
        return [len(f"{r.system} {r.user}".split()) for r in requests]


@judge_engine("toy")
class ToyEntry(ModelEntry):
    """A registry entry of the toy engine."""

    backend: Literal["toy"]
    #: The label it gives whenever the request allows it.
    answer: str = "A"

    def identity_fields(self) -> dict[str, Any]:
        return {"answer": self.answer}

    def build_judge(self, settings: JudgeSettings) -> Judge:
        return ToyJudge(self.answer)

    def engine_batch_size(self) -> int:
        return 4

    def prompt_tokenizer(self) -> PromptTokenizer | None:
        return WhitespaceTokenizer()
