"""Benchmark: probabilities mode against n = 3 sampling on the vLLM CPU entry, in one run.

Both paths judge the same real Study A zero-shot prompts (logic, first ``--prompts`` comparisons of
the published Webis corpus) with the registry entry ``smollm2-135m-vllm``'s engine, started once
and not timed, through the platform's ``vllm`` judge and a fresh in-memory judgment cache:

(a) sampling: 3 runs per prompt as ``n = 3`` samples of one request, the protocol's sampling
    (temperature 1, 16 tokens, top 20 log-probabilities kept);
(b) probabilities mode (``mode = "label_probabilities"``): one one-token forward pass per prompt
    (:func:`argassets.platform.judging.partition.probe_sampling`), the 3 runs drawn from its label
    probabilities (:func:`~argassets.platform.judging.partition.runs_from_probabilities`).

The engine's prefix cache is reset before each path; the paths run in the order a, b, a, b and
each figure is the better of its two rounds. Prints prompts per second and the ratio (b)/(a);
writes ``benchmarks/results/bench_label_probabilities.json``.

Usage::

    .venv/bin/python benchmarks/bench_label_probabilities.py [--prompts 48]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
N_RUNS = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=48, help="zero-shot comparisons to judge")
    args = parser.parse_args()

    from argassets.argument_quality.corpus import find_corpus_files, load_corpus
    from argassets.argument_quality.judgments import AQ_DEFAULT_SAMPLING
    from argassets.argument_quality.prompts import render_prompts
    from argassets.platform.judging.engines import build_judge
    from argassets.platform.judging.engines.vllm_backend import VLLMJudge
    from argassets.platform.judging.incremental import judge_incrementally
    from argassets.platform.judging.interface import ChatRequest
    from argassets.platform.judging.partition import probe_sampling, runs_from_probabilities
    from argassets.platform.pairwise.labels import LABELS
    from argassets.platform.paths import resolve_data_dir
    from argassets.platform.registry.entries import load_registry
    from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache

    data_dir = resolve_data_dir()
    if data_dir is None:
        raise SystemExit("needs the published data: set ARGASSETS_DATA_DIR")
    arguments, comparisons = load_corpus(find_corpus_files(data_dir / "webis-argquality20"))
    chosen = comparisons[comparisons["dimension"] == "logic"].head(args.prompts)
    rendered = render_prompts(chosen, arguments, strategies=("zero",))
    requests = [ChatRequest(row.prompt_id, row.system, row.user, choices=LABELS) for row in rendered.itertuples()]
    entry = load_registry().get("smollm2-135m-vllm")
    judge = build_judge(entry)
    assert isinstance(judge, VLLMJudge)
    started = time.perf_counter()
    llm = judge.llm()
    engine_start_s = time.perf_counter() - started
    sampling = entry.sampling_for(AQ_DEFAULT_SAMPLING)

    def sampled() -> list[Any]:
        return judge_incrementally(judge, "bench", requests, sampling, N_RUNS, JudgmentCache(":memory:"))

    def probabilities() -> list[Any]:
        probes = judge_incrementally(
            judge, "bench", requests, probe_sampling(sampling, requests), 1, JudgmentCache(":memory:")
        )
        return runs_from_probabilities(probes, requests, sampling, N_RUNS)

    timings: dict[str, list[float]] = {"a_sampling_n3": [], "b_label_probabilities": []}
    labels: dict[str, dict[str, int]] = {}
    for _ in range(2):
        for name, path in (("a_sampling_n3", sampled), ("b_label_probabilities", probabilities)):
            llm.reset_prefix_cache()
            started = time.perf_counter()
            completions = path()
            timings[name].append(time.perf_counter() - started)
            assert len(completions) == len(requests) * N_RUNS
            labels[name] = {label: sum(c.text.strip() == label for c in completions) for label in LABELS}
            with_probs = sum(c.label_probs is not None for c in completions)
            labels[name]["with_label_probs"] = with_probs
    judge.close()
    results: dict[str, Any] = {
        "prompts": len(requests),
        "runs": N_RUNS,
        "engine_start_s": round(engine_start_s, 1),
        "note": "shared machine: other processes ran at the same time; the ratio is the figure to read",
    }
    for name, seconds in timings.items():
        best = min(seconds)
        results[name] = {"seconds": [round(s, 2) for s in seconds], "prompts_per_s": round(len(requests) / best, 3)}
        results[name]["labels"] = labels[name]
    ratio = results["b_label_probabilities"]["prompts_per_s"] / results["a_sampling_n3"]["prompts_per_s"]
    results["ratio_b_over_a"] = round(ratio, 2)
    print("| path | prompts/s | seconds (2 rounds) | labels A/B/Tie, with probabilities |")
    print("|---|---|---|---|")
    for name in timings:
        row = results[name]
        counts = row["labels"]
        print(
            f"| {name} | {row['prompts_per_s']} | {row['seconds']} | "
            f"{counts['A']}/{counts['B']}/{counts['Tie']}, {counts['with_label_probs']} |"
        )
    print(f"\nprobabilities mode / n = 3 sampling: {ratio:.2f}x")
    out = ROOT / "benchmarks" / "results" / "bench_label_probabilities.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
