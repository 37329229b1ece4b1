"""The judge and cache resources (defined in the platform: :mod:`argassets.platform.resources.judges`)."""

from argassets.platform.resources.judges import (
    STRUCTURED_OUTPUT_ENV_VAR,
    JudgeResource,
    JudgmentCacheResource,
    judge_resources,
)

__all__ = ["STRUCTURED_OUTPUT_ENV_VAR", "JudgeResource", "JudgmentCacheResource", "judge_resources"]
