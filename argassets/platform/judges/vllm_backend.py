"""Offline vLLM judge: one model load per partition, large batches, n samples per prompt.

``vllm`` is imported lazily inside :class:`VLLMJudge` (optional extra ``[gpu]``); everything that
decides what is sent (engine arguments, sampling arguments, structured output, chat messages) is
plain Python in :func:`engine_kwargs` and :func:`sampling_kwargs`, so it is tested without vLLM.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any

from argassets.platform.judging import ChatRequest, Completion, SamplingParams, utc_now

__all__ = ["VLLMJudge", "engine_kwargs", "request_seed", "sampling_kwargs", "to_vllm_sampling_params"]


def engine_kwargs(
    model_id: str,
    tensor_parallel_size: int,
    gpu_memory_utilization: float,
    max_model_len: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Arguments of ``vllm.LLM``: tensor parallelism and memory from the registry, prefix caching on."""
    kwargs: dict[str, Any] = {
        "model": model_id,
        "tensor_parallel_size": int(tensor_parallel_size),
        "gpu_memory_utilization": float(gpu_memory_utilization),
        "enable_prefix_caching": True,
        "seed": int(seed),
    }
    if max_model_len is not None:
        kwargs["max_model_len"] = int(max_model_len)
    return kwargs


def request_seed(base_seed: int | None, prompt_sha256: str) -> int | None:
    """A per-prompt seed derived from the base seed and the prompt hash (reproducible, < 2**31)."""
    if base_seed is None:
        return None
    digest = hashlib.sha256(f"{base_seed}:{prompt_sha256}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def sampling_kwargs(
    request: ChatRequest, sampling: SamplingParams, runs: Sequence[int]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Keyword arguments of ``vllm.SamplingParams`` and the structured-output spec of one request.

    The runs are drawn as ``n = len(runs)`` samples of one request (one prefill), seeded by
    :func:`request_seed`. The structured-output spec is ``{"choice": [...]}`` for label requests or
    ``{"json": schema}`` for JSON requests (``None`` when the request restricts nothing).
    """
    kwargs: dict[str, Any] = {
        "n": len(runs),
        "temperature": float(sampling.temperature),
        "top_p": float(sampling.top_p),
        "max_tokens": int(sampling.max_tokens),
        "seed": request_seed(sampling.seed, request.prompt_sha256),
    }
    structured: dict[str, Any] | None = None
    if request.choices:
        structured = {"choice": list(request.choices)}
    elif request.json_schema is not None:
        structured = {"json": request.json_schema}
    return kwargs, structured


def to_vllm_sampling_params(vllm: Any, kwargs: dict[str, Any], structured: dict[str, Any] | None) -> Any:
    """Build a ``vllm.SamplingParams``, using whichever structured-output API the installed vLLM has."""
    if structured is None:
        return vllm.SamplingParams(**kwargs)
    try:  # vLLM >= 0.10.2
        from vllm.sampling_params import StructuredOutputsParams

        return vllm.SamplingParams(**kwargs, structured_outputs=StructuredOutputsParams(**structured))
    except ImportError:  # vLLM 0.6 - 0.10
        from vllm.sampling_params import GuidedDecodingParams

        return vllm.SamplingParams(**kwargs, guided_decoding=GuidedDecodingParams(**structured))


class VLLMJudge:
    """Judgments from ``vllm.LLM`` loaded once (lazily, at the first batch) and reused for every batch.

    Parameters
    ----------
    engine
        :func:`engine_kwargs` of the model.
    llm
        An already built ``vllm.LLM``-like object (tests); default: built from ``engine`` on first use.
    """

    backend = "vllm"
    is_baseline = False

    def __init__(self, engine: dict[str, Any], llm: Any | None = None, vllm_module: Any | None = None):
        self.engine = dict(engine)
        self._llm = llm
        # An engine handed in by the caller is the caller's to free.
        self._owns_llm = llm is None
        self._vllm = vllm_module
        self.loads = 0

    def _module(self) -> Any:
        if self._vllm is None:
            try:
                import vllm
            except ImportError as exc:  # pragma: no cover - depends on the machine
                raise RuntimeError(
                    "the vllm backend needs the optional extra: pip install 'argassets[gpu]' on a CUDA machine"
                ) from exc
            self._vllm = vllm
        return self._vllm

    def close(self) -> None:
        """Drop the engine this judge built, so that its worker processes and memory are released."""
        if self._owns_llm:
            self._llm = None

    def llm(self) -> Any:
        if self._llm is None:
            self._llm = self._module().LLM(**self.engine)
            self.loads += 1
        return self._llm

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        runs = list(runs)
        llm = self.llm()
        vllm = self._module()
        params = []
        seeds = []
        for request in requests:
            kwargs, structured = sampling_kwargs(request, sampling, runs)
            seeds.append(kwargs["seed"])
            params.append(to_vllm_sampling_params(vllm, kwargs, structured))
        requested_at = utc_now()
        started = time.perf_counter()
        outputs = llm.chat([request.messages for request in requests], sampling_params=params, use_tqdm=False)
        elapsed = time.perf_counter() - started
        completed_at = utc_now()
        if len(outputs) != len(requests):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(requests)} requests")
        answers = []
        for output, seed in zip(outputs, seeds, strict=True):
            samples = list(output.outputs)
            if len(samples) != len(runs):
                raise RuntimeError(f"vLLM returned {len(samples)} samples, expected {len(runs)}")
            latency = elapsed
            metrics = getattr(output, "metrics", None)
            if (
                metrics is not None
                and getattr(metrics, "finished_time", None)
                and getattr(metrics, "arrival_time", None)
            ):
                latency = float(metrics.finished_time - metrics.arrival_time)
            answers.append(
                [
                    Completion(sample.text, int(run), seed, latency, requested_at, completed_at)
                    for sample, run in zip(samples, runs, strict=True)
                ]
            )
        return answers
