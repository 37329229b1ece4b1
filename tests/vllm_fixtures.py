"""The real vLLM engine (CPU build) of the registry's ``smollm2-135m-vllm`` entry, started once per session.

Starting the engine takes minutes on 2 cores, so every ``vllm_engine`` test shares one ``vllm.LLM``
built from exactly the engine arguments the registry entry gives the ``vllm`` judge. vLLM starts
its engine core in new processes (spawn); the engine is created here, inside a fixture, never at
import of a ``__main__`` module. Dagster runs reach it through :class:`SharedEngineJudgeResource`,
which builds the registry's judge as usual and hands it the running engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.engines.vllm_backend import VLLMJudge
from argassets.platform.registry.entries import load_registry
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.resources.judges import JudgeResource

#: The registry entry whose engine the tests share.
ENTRY = "smollm2-135m-vllm"
_ENGINE: dict[str, Any] = {}


class SharedEngineJudgeResource(JudgeResource):
    """The registry's ``vllm`` judge, given the session's running engine instead of starting one.

    Refuses entries whose engine arguments differ from the shared engine's, so that a test never
    judges with an engine other than the one its registry entry describes.
    """

    def build(self, entry: ModelEntry) -> Any:
        judge = super().build(entry)
        if not isinstance(judge, VLLMJudge):
            return judge
        shared = _ENGINE.get("judge")
        if shared is None:
            raise RuntimeError("the session's vLLM engine is not started (use the vllm_engine fixture)")
        if judge.engine != shared.engine:
            raise RuntimeError(f"entry '{entry.name}' asks for engine {judge.engine}, the session runs {shared.engine}")
        return VLLMJudge(judge.engine, llm=shared.llm(), gguf=judge.gguf)


@pytest.fixture(scope="session")
def vllm_entry() -> ModelEntry:
    return load_registry().get(ENTRY)


@pytest.fixture(scope="session")
def vllm_engine(vllm_entry: ModelEntry) -> Iterator[VLLMJudge]:
    """A :class:`VLLMJudge` of the registry entry whose engine is running (started once per session)."""
    judge = build_judge(vllm_entry)
    assert isinstance(judge, VLLMJudge)
    judge.llm()  # converts the GGUF if its folder is missing, then starts the engine
    _ENGINE["judge"] = judge
    try:
        yield judge
    finally:
        _ENGINE.pop("judge", None)
        judge.close()
