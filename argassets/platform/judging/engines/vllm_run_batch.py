"""A judge that answers each batch through ``vllm run-batch`` on its OpenAI-Batch file (docs/judgments.md,
"Batch files"; the registry entry is :mod:`~argassets.platform.judging.engines.vllm_run_batch_engine`)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from argassets.platform.judging.batch_files import BatchScope, parse_result_line, request_line
from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.engines.vllm_backend import serve_args
from argassets.platform.judging.engines.vllm_engine import VLLM_DEFAULT_BLOCK
from argassets.platform.judging.engines.vllm_model import ensure_converted
from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, run_seed, utc_now
from argassets.platform.judging.prefill_floor import ReuseModel

__all__ = ["VLLMBatchFormat", "VLLMRunBatchJudge", "run_batch_command"]


class VLLMBatchFormat:
    """Batch lines for ``vllm run-batch``: the ``openai`` judge's bodies, seeded per prompt and run as
    the ``vllm`` judge seeds them (:func:`run_seed`, shared by every engine)."""

    backend = "vllm_batch"

    def __init__(self, served_model_name: str):
        # Never posts: only its request bodies are used.
        self._bodies = OpenAIJudge(served_model_name, "http://127.0.0.1:9/v1", structured_output="guided_choice")

    def body(self, request: ChatRequest, sampling: SamplingParams, run: int) -> bytes:
        return httpx.Request("POST", self._bodies.url, json=self._bodies.request_body(request, sampling, run)).content

    def seed(self, request: ChatRequest, sampling: SamplingParams, run: int) -> int | None:
        return run_seed(sampling.seed, request.prompt_sha256, run)

    def close(self) -> None:
        self._bodies.close()


def run_batch_command(engine: dict[str, Any], served_model_name: str, source: Path, target: Path) -> list[str]:
    """The command that answers ``source`` into ``target`` with the engine ``vllm.LLM(**engine)`` would run."""
    runner = [sys.executable, "-m", "vllm.entrypoints.launchers.run_batch", "-i", str(source), "-o", str(target)]
    return runner + serve_args(engine, served_model_name, positional_model=False)


class VLLMRunBatchJudge:
    """Judgments from ``vllm run-batch`` on the batch file of each call (see the module docstring)."""

    backend = "vllm_batch"
    is_baseline = False

    def __init__(
        self,
        engine: dict[str, Any],
        served_model_name: str,
        gguf: Path | None = None,
        device: str = "gpu",
        timeout_s: float = 7 * 24 * 3600.0,
    ):
        self.engine = dict(engine)
        self.served_model_name = served_model_name
        self.gguf = gguf
        self.device = device
        self.timeout_s = timeout_s
        self.format = VLLMBatchFormat(served_model_name)
        #: The runner's output of the last call (its log), kept for diagnosis.
        self.last_log = ""

    def reuse_model(self) -> ReuseModel:
        """vLLM's prefix cache with the engine's block size (``block_size`` if set, else vLLM's default)."""
        return ReuseModel("blocks", int(self.engine.get("block_size") or VLLM_DEFAULT_BLOCK[self.device]))

    def close(self) -> None:
        self.format.close()

    def _write(
        self, path: Path, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> BatchScope:
        scope = BatchScope("run-batch", sampling, max(runs) + 1, requests)
        with path.open("wb") as handle:
            written: set[tuple[str, int]] = set()
            for request in requests:
                for run in runs:
                    if (request.prompt_sha256, run) not in written:
                        written.add((request.prompt_sha256, run))
                        body = self.format.body(request, sampling, run)
                        handle.write(request_line(scope.key(request.prompt_sha256, run), body))
        return scope

    def _run(self, source: Path, target: Path) -> None:
        if self.gguf is not None:
            ensure_converted(self.gguf)
        command = run_batch_command(self.engine, self.served_model_name, source, target)
        done = subprocess.run(command, capture_output=True, text=True, timeout=self.timeout_s, env=dict(os.environ))
        self.last_log = (done.stdout or "") + (done.stderr or "")
        if done.returncode != 0 or not target.is_file():
            raise RuntimeError(f"vllm run-batch failed (exit {done.returncode}):\n{self.last_log[-3000:]}")

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        """One ``run-batch`` over every request and run of the batch."""
        runs = [int(run) for run in runs]
        requested_at, started = utc_now(), time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="argassets-run-batch-") as folder:
            source, target = Path(folder) / "requests.jsonl", Path(folder) / "results.jsonl"
            scope = self._write(source, requests, sampling, runs)
            self._run(source, target)
            answers: dict[tuple[str, int], Completion | None] = {}
            for line in target.read_bytes().splitlines():
                if line.strip():
                    key, completion = parse_result_line(line, scope, self.format)
                    answers[(key.prompt_sha256, key.run)] = completion
        elapsed, completed_at = time.perf_counter() - started, utc_now()
        return [[self._completion(answers.get((r.prompt_sha256, run)), r, run, sampling, (requested_at, completed_at, elapsed)) for run in runs] for r in requests]  # fmt: skip

    def _completion(
        self, answer: Completion | None, request: ChatRequest, run: int, sampling: SamplingParams, when: tuple[str, str, float]
    ) -> Completion:  # fmt: skip
        """The runner's answer with the call's times, or a non-answer where it gave none."""
        requested_at, completed_at, elapsed = when
        if answer is None:
            seed = self.format.seed(request, sampling, run)
            return Completion("", run, seed, elapsed, requested_at, completed_at, answered=False)
        return replace(answer, latency_s=elapsed, requested_at=requested_at, completed_at=completed_at)
