"""The ``longer-wins`` engine: the longer argument text wins, a baseline that needs no model."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from argassets.platform.judging.interface import Judge, JudgeSettings
from argassets.platform.registry.model_entry import ModelEntry, judge_engine


@judge_engine("longer-wins")
class LongerWinsEntry(ModelEntry):
    """The longer of the two texts wins, Tie on equal length; no parameter decides anything else."""

    backend: Literal["longer-wins"]

    is_baseline: ClassVar[bool] = True

    def identity_fields(self) -> dict[str, Any]:
        return {}

    def build_judge(self, settings: JudgeSettings) -> Judge:
        from argassets.platform.judging.engines.baselines import LongerWinsJudge

        return LongerWinsJudge()

    def engine_batch_size(self) -> int:
        return 50_000
