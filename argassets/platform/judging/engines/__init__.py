"""Judge engines, one module each, registered by name with :func:`~argassets.platform.registry.model_entry.judge_engine`.

Importing this package registers the built-in engines (docs/judgments.md, "Engines").
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from argassets.platform.judging.engines import (
    import_engine,
    llama_cpp_engine,
    longer_wins_engine,
    openai_engine,
    random_engine,
    vllm_engine,
)
from argassets.platform.judging.interface import Judge, JudgeSettings
from argassets.platform.registry.model_entry import ModelEntry

#: The engines that ship with the platform (importing them registers them).
BUILTIN_ENGINES = (vllm_engine, openai_engine, import_engine, llama_cpp_engine, random_engine, longer_wins_engine)

__all__ = ["BUILTIN_ENGINES", "build_judge"]


def build_judge(
    entry: ModelEntry,
    *,
    openai_structured_output: str = "json_schema",
    openai_timeout_s: float = 120.0,
    openai_max_retries: int = 6,
    llama_threads: int | None = None,
    environ: Mapping[str, str] | None = None,
    data_dir: Path | None = None,
) -> Judge:
    """The judge of one registry entry, built by its engine (nothing heavy is loaded yet)."""
    settings = JudgeSettings(
        openai_structured_output=openai_structured_output,
        openai_timeout_s=openai_timeout_s,
        openai_max_retries=openai_max_retries,
        llama_threads=llama_threads,
        environ=environ,
        data_dir=data_dir,
    )
    return entry.build_judge(settings)
