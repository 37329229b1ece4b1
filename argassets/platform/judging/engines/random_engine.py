"""The ``random`` engine: a seeded uniform random answer, a baseline that needs no model."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from argassets.platform.judging.interface import Judge, JudgeSettings
from argassets.platform.registry.model_entry import ModelEntry, judge_engine


@judge_engine("random")
class RandomEntry(ModelEntry):
    """A random label (A/B/Tie) or score, deterministic per entry ``seed``, request and run."""

    backend: Literal["random"]

    is_baseline: ClassVar[bool] = True

    def identity_fields(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def build_judge(self, settings: JudgeSettings) -> Judge:
        from argassets.platform.judging.engines.baselines import RandomJudge

        return RandomJudge(seed=self.seed)

    def engine_batch_size(self) -> int:
        return 50_000
