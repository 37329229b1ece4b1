"""Benchmark: the CPU entry in float32 against bfloat16, in one run, each against its matmul roof.

For each dtype: the roof is torch's matmul of 512x576 by 576x1536 (SmolLM2-135M's hidden size 576
and MLP size 1536) with ``--threads`` threads, in GFLOPS; then vLLM's CPU engine of the registry
entry ``smollm2-135m-vllm`` with that dtype (started once, not timed) judges the first
``--prompts`` zero-shot logic comparisons of topic 1 of the published Webis corpus x 3 runs, the
judge's request shape (``n = 3``, guided choice A/B/Tie, one seed per request), ``--repeats``
times (prefix cache reset between). Effective GFLOPS count the linear layers only (2 x parameters
per token; the tied output layer only for sampled tokens; attention left out), so they are a floor.
``cpu_native`` (argassets.platform.judging.engines.cpu_dtype) picks bfloat16 only where the CPU has native
bfloat16; on other CPUs bfloat16 runs here too, to show why it is not picked (use few prompts).

Usage::

    .venv/bin/python benchmarks/bench_vllm_dtype.py [--prompts 48] [--repeats 1] [--threads 2]

Prints a Markdown table; writes ``benchmarks/results/bench_vllm_dtype.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
N_RUNS = 3
DTYPES = ("float32", "bfloat16")
MATMUL = (512, 576, 1536)


def matmul_roof_gflops(dtype: str, threads: int, seconds: float = 2.0) -> float:
    """GFLOPS of torch's 512x576x1536 matmul in ``dtype`` on ``threads`` threads (best of repeated timings)."""
    import torch

    torch.set_num_threads(threads)
    m, k, n = MATMUL
    a = torch.randn(m, k, dtype=getattr(torch, dtype))
    b = torch.randn(k, n, dtype=getattr(torch, dtype))
    torch.matmul(a, b)  # warm-up (kernel selection, allocation)
    best = float("inf")
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - started)
    return 2 * m * k * n / best / 1e9


def zero_shot_prompts(n_prompts: int) -> list[tuple[str, str, str]]:
    """(system, user, prompt_sha256) of the first zero-shot logic comparisons of topic 1."""
    from argassets.argument_quality.corpus import load_corpus, locate_corpus
    from argassets.argument_quality.prompts import render_prompts
    from argassets.platform.paths import resolve_data_dir

    data_dir = resolve_data_dir()
    if data_dir is None:
        raise SystemExit("needs the published data: set ARGASSETS_DATA_DIR")
    arguments, comparisons = load_corpus(locate_corpus(data_dir))
    chosen = comparisons[(comparisons["topic_id"] == 1) & (comparisons["dimension"] == "logic")]
    prompts = render_prompts(chosen, arguments, strategies=("zero",)).sort_values("comparison_id")
    if len(prompts) < n_prompts:
        raise SystemExit(f"only {len(prompts)} zero-shot prompts of topic 1, logic")
    return list(prompts[["system", "user", "prompt_sha256"]].head(n_prompts).itertuples(index=False, name=None))


def parameter_counts(folder: str) -> tuple[int, int]:
    """(parameters of the model's body, parameters of its embedding / tied output layer)."""
    from safetensors import safe_open

    body = head = 0
    for path in sorted(Path(folder).glob("*.safetensors")):
        with safe_open(str(path), framework="pt") as tensors:
            for name in tensors.keys():  # noqa: SIM118 (safe_open is no mapping)
                numel = tensors.get_slice(name).get_shape()
                size = 1
                for dim in numel:
                    size *= int(dim)
                if "embed_tokens" in name or "lm_head" in name:
                    head = max(head, size)
                else:
                    body += size
    return body, head


def judge_with(dtype: str, prompts: list[tuple[str, str, str]], repeats: int) -> dict[str, Any]:
    """Start the CPU entry's engine in ``dtype`` and time ``repeats`` passes over ``prompts`` x 3 runs."""
    import vllm
    from vllm.sampling_params import StructuredOutputsParams

    from argassets.platform.judging.engines import build_judge
    from argassets.platform.judging.engines.vllm_backend import VLLMJudge
    from argassets.platform.judging.interface import request_seed
    from argassets.platform.pairwise.labels import LABELS
    from argassets.studies import load_registry

    entry = load_registry().get("smollm2-135m-vllm").model_copy(update={"dtype": dtype})
    judge = build_judge(entry)
    assert isinstance(judge, VLLMJudge) and judge.engine["dtype"] == dtype
    started = time.perf_counter()
    llm = judge.llm()
    start_s = time.perf_counter() - started
    params = [
        vllm.SamplingParams(
            n=N_RUNS,
            temperature=1.0,
            top_p=1.0,
            max_tokens=16,
            seed=request_seed(entry.seed, sha),
            structured_outputs=StructuredOutputsParams(choice=list(LABELS)),
        )
        for _, _, sha in prompts
    ]
    messages = [[{"role": "system", "content": s}, {"role": "user", "content": u}] for s, u, _ in prompts]
    seconds: list[float] = []
    labels: collections.Counter[str] = collections.Counter()
    prompt_tokens = generated_tokens = 0
    try:
        for _ in range(repeats):
            llm.reset_prefix_cache()
            started = time.perf_counter()
            outputs = llm.chat(messages, sampling_params=params, use_tqdm=False)
            seconds.append(time.perf_counter() - started)
            labels.update(o.text.strip() for out in outputs for o in out.outputs)
            prompt_tokens += sum(len(out.prompt_token_ids or ()) for out in outputs)
            generated_tokens += sum(len(o.token_ids) for out in outputs for o in out.outputs)
    finally:
        body, head = parameter_counts(judge.engine["model"])
        judge.close()
    total_s = sum(seconds)
    flops = 2 * body * (prompt_tokens + generated_tokens) + 2 * head * generated_tokens
    return {
        "engine_start_s": round(start_s, 1),
        "seconds": [round(s, 2) for s in seconds],
        "completions_per_s": round(len(prompts) * N_RUNS * repeats / total_s, 3),
        "labels": dict(sorted(labels.items())),
        "prompt_tokens": prompt_tokens,
        "generated_tokens": generated_tokens,
        "effective_gflops": round(flops / total_s / 1e9, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=48, help="zero-shot comparisons to judge")
    parser.add_argument("--repeats", type=int, default=1, help="passes over the prompts per dtype")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of the matmul roof")
    args = parser.parse_args()
    from argassets.platform.judging.engines.cpu_dtype import cpu_flags, engine_dtype

    prompts = zero_shot_prompts(args.prompts)
    results: dict[str, Any] = {"prompts": args.prompts, "runs": N_RUNS, "repeats": args.repeats}
    results["cpu_native_picks"] = engine_dtype("cpu_native")
    results["native_bf16_flags"] = sorted(cpu_flags() & {"avx512_bf16", "amx_bf16"})
    for dtype in DTYPES:
        roof = matmul_roof_gflops(dtype, args.threads)
        measured = judge_with(dtype, prompts, args.repeats)
        measured["matmul_roof_gflops"] = round(roof, 1)
        measured["share_of_roof"] = round(measured["effective_gflops"] / roof, 3)
        results[dtype] = measured
    f32, bf16 = results["float32"], results["bfloat16"]
    results["bf16_over_f32_completions"] = round(bf16["completions_per_s"] / f32["completions_per_s"], 3)
    results["bf16_over_f32_roof"] = round(bf16["matmul_roof_gflops"] / f32["matmul_roof_gflops"], 3)
    print(
        f"{args.prompts} zero-shot prompts x {N_RUNS} runs x {args.repeats}; cpu_native picks {results['cpu_native_picks']}\n"
    )
    print("| dtype | matmul roof GFLOPS | completions/s | effective GFLOPS | share of roof | labels |")
    print("|---|---:|---:|---:|---:|---|")
    for dtype in DTYPES:
        r = results[dtype]
        print(
            f"| {dtype} | {r['matmul_roof_gflops']} | {r['completions_per_s']} | {r['effective_gflops']} "
            f"| {r['share_of_roof']} | {r['labels']} |"
        )
    print(
        f"\nbfloat16 / float32: completions {results['bf16_over_f32_completions']}, roof {results['bf16_over_f32_roof']}"
    )
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_vllm_dtype.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":  # vLLM spawns its engine processes: nothing above runs at import
    main()
