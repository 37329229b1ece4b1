"""Judge backends behind the one :class:`argassets.platform.judging.interface.Judge` interface.

:func:`build_judge` turns a registry entry into a judge. Backends with heavy optional dependencies
(vLLM, llama-cpp-python) import them only when the first batch is judged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from argassets.platform.judging.engines.baselines import LongerWinsJudge, RandomJudge
from argassets.platform.judging.engines.cpu_dtype import engine_dtype
from argassets.platform.judging.engines.importer import ImportJudge
from argassets.platform.judging.engines.llama_cpp_backend import LlamaCppJudge, find_gguf
from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.engines.vllm_backend import VLLMJudge, engine_kwargs
from argassets.platform.judging.engines.vllm_model import converted_model_dir
from argassets.platform.judging.engines.vllm_run_batch import RUN_BATCH_SIZE, build_run_batch_judge
from argassets.platform.judging.interface import Judge
from argassets.platform.paths import resolve_data_dir
from argassets.platform.registry.entries import Backend, ModelEntry
from argassets.platform.study import get_study

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_BASE_URL_ENV",
    "ImportJudge",
    "LlamaCppJudge",
    "LongerWinsJudge",
    "OpenAIJudge",
    "RandomJudge",
    "VLLMJudge",
    "build_judge",
    "default_batch_size",
]

DEFAULT_BASE_URL_ENV = "ARGASSETS_OPENAI_BASE_URL"
DEFAULT_API_KEY_ENV = "ARGASSETS_OPENAI_API_KEY"


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
    """The judge of one registry entry (nothing heavy is loaded yet).

    ``openai`` entries read the endpoint and key from the environment variables named by
    ``base_url_env`` / ``api_key_env`` (default ``ARGASSETS_OPENAI_BASE_URL`` /
    ``ARGASSETS_OPENAI_API_KEY``) when this is called, i.e. at run time. ``import`` entries
    resolve a relative ``path`` below ``data_dir`` (default: the published-data folder).
    """
    env = os.environ if environ is None else environ
    if entry.backend == "random":
        return RandomJudge(seed=entry.seed)
    if entry.backend == "longer-wins":
        return LongerWinsJudge()
    if entry.backend == "import":
        return ImportJudge(
            entry.import_file(resolve_data_dir() if data_dir is None else data_dir),
            model_name=entry.name,
            key_sets=[get_study(name).import_keys for name in entry.studies],
        )
    if entry.backend == "openai":
        url_var = entry.base_url_env or DEFAULT_BASE_URL_ENV
        key_var = entry.api_key_env or DEFAULT_API_KEY_ENV
        base_url = env.get(url_var)
        if not base_url:
            raise ValueError(
                f"model '{entry.name}': set {url_var} to the endpoint's base URL (e.g. http://host:8000/v1)"
            )
        return OpenAIJudge(
            model_id=entry.model_id or entry.name,
            base_url=base_url,
            api_key=env.get(key_var),
            max_concurrency=entry.max_concurrency,
            structured_output=openai_structured_output,  # type: ignore[arg-type]
            timeout_s=openai_timeout_s,
            max_retries=openai_max_retries,
            server_sampling_defaults=entry.server_sampling_defaults,
        )
    if entry.backend == "vllm":
        gguf = find_gguf(entry.gguf_path, entry.gguf_package) if (entry.gguf_path or entry.gguf_package) else None
        model = str(converted_model_dir(gguf)) if gguf is not None else (entry.model_id or entry.name)
        return VLLMJudge(
            engine_kwargs(
                model,
                tensor_parallel_size=entry.gpus,
                gpu_memory_utilization=entry.gpu_memory_utilization,
                max_model_len=entry.max_model_len,
                seed=entry.seed,
                device=entry.device,
                kv_cache_gib=entry.kv_cache_gib,
                enforce_eager=entry.enforce_eager,
                dtype=engine_dtype(entry.dtype),
            ),
            gguf=gguf,
        )
    if entry.backend == "vllm_batch":  # engines/vllm_run_batch.py: the vllm judge's engine, run by run-batch
        return build_run_batch_judge(entry, build_judge(entry.model_copy(update={"backend": "vllm"})))
    if entry.backend == "llama_cpp":
        return LlamaCppJudge(
            find_gguf(entry.gguf_path, entry.gguf_package),
            n_ctx=entry.n_ctx,
            n_threads=llama_threads,
            seed=entry.seed,
        )
    raise ValueError(f"model '{entry.name}': unknown backend {entry.backend!r}")


def default_batch_size(entry: ModelEntry) -> int:
    """Requests per batch (a cache commit each): the entry's ``batch_size``, else large for vLLM and
    small for slow or paid backends."""
    if entry.batch_size is not None:
        return entry.batch_size
    sizes: dict[Backend, int] = {
        "vllm": 8192,
        "vllm_batch": RUN_BATCH_SIZE,
        "openai": max(16, 4 * entry.max_concurrency),
        "llama_cpp": 8,
        "import": 100_000,
        "random": 50_000,
        "longer-wins": 50_000,
    }
    return sizes[entry.backend]
