"""The CPU entry's dtype: bfloat16 on CPUs with native bfloat16, float32 elsewhere, and part of its identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from argassets.platform.judging.engines import build_judge, cpu_dtype
from argassets.platform.judging.engines.cpu_dtype import cpu_flags, engine_dtype, native_cpu_dtype
from argassets.platform.judging.engines.vllm_backend import VLLMJudge
from argassets.platform.judging.identity import identity_key, model_identity
from argassets.platform.registry.entries import load_registry, parse_registry

#: Flag lines of two real CPUs: an AVX2-only EPYC (no native bfloat16) and a Sapphire Rapids Xeon.
AVX2_FLAGS = "fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c avx2 fma bmi2"
BF16_FLAGS = "fpu sse2 avx avx2 avx512f avx512bw avx512_vnni avx512_bf16 amx_bf16 amx_tile amx_int8"


def _cpuinfo(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: test\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    return path


def test_the_choice_follows_the_cpu_flags(tmp_path: Path) -> None:
    assert cpu_flags(_cpuinfo(tmp_path, BF16_FLAGS)) >= {"avx512_bf16", "amx_bf16"}
    assert native_cpu_dtype(cpu_flags(_cpuinfo(tmp_path, AVX2_FLAGS))) == "float32"
    assert native_cpu_dtype(cpu_flags(_cpuinfo(tmp_path, BF16_FLAGS))) == "bfloat16"
    assert native_cpu_dtype(frozenset({"avx512f", "avx512_bf16"})) == "bfloat16"  # Zen 4: AVX512-BF16, no AMX
    assert native_cpu_dtype(frozenset({"avx512f", "avx512bw"})) == "float32"  # AVX512 without its BF16 part
    assert cpu_flags(tmp_path / "missing") == frozenset()  # no /proc/cpuinfo (macOS): float32, the safe choice
    assert engine_dtype("cpu_native", frozenset()) == "float32"
    # A pinned dtype stays what it says on every CPU.
    assert engine_dtype("float32", frozenset({"amx_bf16"})) == "float32"
    assert engine_dtype("bfloat16", frozenset()) == "bfloat16"


@pytest.mark.parametrize(("flags", "expected"), [(AVX2_FLAGS, "float32"), (BF16_FLAGS, "bfloat16")])
def test_cpu_entry_judges_and_is_identified_in_the_chosen_dtype(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: str, expected: str
) -> None:
    monkeypatch.setattr(cpu_dtype, "CPUINFO", _cpuinfo(tmp_path, flags))
    entry = load_registry().get("smollm2-135m-vllm")
    assert entry.dtype == "cpu_native"
    judge = build_judge(entry)
    assert isinstance(judge, VLLMJudge) and judge.engine["dtype"] == expected
    identity = model_identity(entry)
    assert identity["engine"]["dtype"] == expected
    # The same draws as an entry pinned to the chosen dtype (float32 caches from before stay valid) ...
    assert identity_key(identity) == identity_key(model_identity(entry.model_copy(update={"dtype": expected})))
    # ... and never those of the other dtype.
    other = "bfloat16" if expected == "float32" else "float32"
    assert identity_key(identity) != identity_key(model_identity(entry.model_copy(update={"dtype": other})))


def test_cpu_native_is_refused_off_the_cpu_build() -> None:
    base = {"name": "m", "backend": "vllm", "studies": ["argument_quality"], "model_id": "x/y", "dtype": "cpu_native"}
    with pytest.raises(ValueError, match="dtype 'cpu_native' only applies to backend 'vllm' with device 'cpu'"):
        parse_registry({"models": [{**base, "gpus": 1}]})
    assert parse_registry({"models": [{**base, "device": "cpu", "gpus": 0}]}).models[0].dtype == "cpu_native"
