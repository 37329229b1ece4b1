"""The dtype vLLM's CPU build computes in, chosen from what the CPU multiplies natively (docs/judgments.md, "The CPU
entry's dtype")."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CPU_NATIVE", "NATIVE_BF16_FLAGS", "cpu_flags", "engine_dtype", "native_cpu_dtype"]

#: The registry's dtype that stands for "bfloat16 where native, else float32".
CPU_NATIVE = "cpu_native"
#: ``/proc/cpuinfo`` flags of instructions that multiply bfloat16 matrices natively.
NATIVE_BF16_FLAGS: frozenset[str] = frozenset({"avx512_bf16", "amx_bf16"})
CPUINFO = Path("/proc/cpuinfo")


def cpu_flags(cpuinfo: Path | None = None) -> frozenset[str]:
    """The flags of the first processor in ``cpuinfo`` (default :data:`CPUINFO`; none when it is missing)."""
    try:
        text = (CPUINFO if cpuinfo is None else cpuinfo).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):  # x86 spells it "flags", ARM "Features"
            return frozenset(value.split())
    return frozenset()


def native_cpu_dtype(flags: frozenset[str]) -> str:
    """``bfloat16`` when ``flags`` include native bfloat16 matrix instructions, else ``float32``."""
    return "bfloat16" if flags & NATIVE_BF16_FLAGS else "float32"


def engine_dtype(dtype: str, flags: frozenset[str] | None = None) -> str:
    """The dtype an entry's engine computes in: ``dtype`` itself, or this CPU's choice for ``cpu_native``.

    ``flags`` defaults to this machine's (``/proc/cpuinfo``); tests pass other CPUs' flags.
    """
    if dtype != CPU_NATIVE:
        return dtype
    return native_cpu_dtype(cpu_flags() if flags is None else flags)
