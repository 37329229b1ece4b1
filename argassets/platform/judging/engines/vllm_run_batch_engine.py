"""The ``vllm_batch`` engine: the ``vllm`` entry's engine, run by ``vllm run-batch`` on batch files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from argassets.platform.judging.engines.vllm_engine import VLLMEntry
from argassets.platform.judging.interface import Judge, JudgeSettings
from argassets.platform.registry.model_entry import judge_engine

if TYPE_CHECKING:
    from argassets.platform.judging.batch_files import BatchFormat

#: Requests per batch, one engine start each: a whole Study A partition (125,568) is one batch.
RUN_BATCH_SIZE = 200_000


@judge_engine("vllm_batch")
class VLLMRunBatchEntry(VLLMEntry):
    """A ``vllm`` entry (same fields, engine arguments, identity fields and tokenizer) whose batches
    go through ``python -m vllm.entrypoints.launchers.run_batch`` as OpenAI-Batch files
    (docs/judgments.md, "Batch files"); its own cache identity (backend ``vllm_batch``)."""

    backend: Literal["vllm_batch"]  # type: ignore[assignment]

    def build_judge(self, settings: JudgeSettings) -> Judge:
        from argassets.platform.judging.engines.vllm_run_batch import VLLMRunBatchJudge

        served = self.model_id or self.name
        return VLLMRunBatchJudge(self.engine_arguments(), served, self.gguf(), device=self.device)

    def engine_batch_size(self) -> int:
        return RUN_BATCH_SIZE

    def batch_format(self, structured_output: str) -> BatchFormat:
        """``run-batch``'s lines: the ``openai`` judge's bodies in ``guided_choice`` mode with the
        ``vllm`` judge's seeds (whatever ``structured_output`` says)."""
        from argassets.platform.judging.engines.vllm_run_batch import VLLMBatchFormat

        return VLLMBatchFormat(self.model_id or self.name)
