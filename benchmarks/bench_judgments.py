"""Benchmark: corpora + prompts + one baseline partition of aq_judgments on the full corpus.

Measures, each phase in a fresh process (so peak memory is the phase's own):

1. ``upstream``: materialise ``webis_arguments``, ``webis_expert_comparisons``,
   ``aq_few_shot_examples`` and ``aq_prompts`` (wall time, peak RSS);
2. ``judgments``: materialise one baseline partition of ``aq_judgments`` from an empty cache;
3. ``rematerialise``: materialise the same partition again; the number of completions the judge is
   asked for must be 0 (counted at the judge itself, and from the asset's metadata).

Usage::

    .venv/bin/python benchmarks/bench_judgments.py [--partition random] [--keep DIR]

Needs the published data (``$ARGASSETS_DATA_DIR`` or ``../shared/data``). Results are printed as a
Markdown table and written to ``benchmarks/results/bench_judgments.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def run_phase(phase: str, partition: str) -> dict:
    """Run one phase in this process and return its measurements."""
    import dagster as dg

    from argassets.argument_quality.assets import corpora, prompts
    from argassets.argument_quality.study import STUDY
    from argassets.platform.judging.engines import baselines
    from argassets.platform.judging.study_asset import judging_asset
    from argassets.platform.registry.partitions import study_partitions
    from argassets.studies import code_location_studies
    from resources.build import build_resources

    sent = {"completions": 0, "calls": 0}
    for cls in (baselines.RandomJudge, baselines.LongerWinsJudge):
        original = cls.complete

        def counting(self, requests, sampling, runs, _original=original):
            sent["calls"] += 1
            sent["completions"] += len(requests) * len(runs)
            return _original(self, requests, sampling, runs)

        cls.complete = counting  # type: ignore[method-assign]

    upstream = [corpora.webis_corpus, prompts.aq_few_shot_examples, prompts.aq_prompts]
    instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()
    for definition in ("judge_models", study_partitions("argument_quality").name):
        if partition not in instance.get_dynamic_partitions(definition):
            instance.add_dynamic_partitions(definition, [partition])
    resources = {**build_resources(code_location_studies()), **STUDY.resources()}
    started = time.perf_counter()
    if phase == "upstream":
        result = dg.materialize(upstream, resources=resources, instance=instance)
        rows = result.asset_materializations_for_node("aq_prompts")[0].metadata["dagster/row_count"].value
        meta = {"aq_prompts_rows": rows}
    else:
        result = dg.materialize(
            [judging_asset(STUDY), *upstream],
            selection=dg.AssetSelection.assets(judging_asset(STUDY)),
            resources=resources,
            instance=instance,
            partition_key=partition,
        )
        md = result.asset_materializations_for_node("aq_judgments")[0].metadata
        meta = {
            "aq_judgments_rows": md["dagster/row_count"].value,
            "completions_sent_metadata": md["completions_sent"].value,
            "completions_from_cache": md["completions_from_cache"].value,
            "judge_calls": sent["calls"],
            "completions_sent_counted": sent["completions"],
        }
    return {
        "phase": phase,
        "wall_s": round(time.perf_counter() - started, 2),
        "peak_rss_mib": round(_peak_rss_mib(), 1),
        **meta,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partition", default="random", help="a baseline registry entry (random, longer-wins)")
    parser.add_argument("--keep", help="folder for the DuckDB file and cache (default: a temporary folder)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.phase:
        print(json.dumps(run_phase(args.phase, args.partition)))
        return

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-judgments-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "dagster_home").mkdir(exist_ok=True)
    env = {
        **os.environ,
        "ARGASSETS_DUCKDB": str(work / "bench.duckdb"),
        "ARGASSETS_CACHE": str(work / "cache.sqlite"),
        "DAGSTER_HOME": str(work / "dagster_home"),
    }
    for stale in ("bench.duckdb", "cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"):
        (work / stale).unlink(missing_ok=True)
    results = []
    for phase in ("upstream", "judgments", "rematerialise"):
        completed = subprocess.run(
            [sys.executable, __file__, "--phase", phase, "--partition", args.partition],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode != 0:
            sys.stderr.write(completed.stderr[-5000:])
            raise SystemExit(f"phase {phase} failed")
        results.append(json.loads(completed.stdout.strip().splitlines()[-1]))

    duckdb_mib = (work / "bench.duckdb").stat().st_size / 2**20
    cache_mib = sum(p.stat().st_size for p in work.glob("cache.sqlite*")) / 2**20
    print(f"partition: {args.partition}; DuckDB file {duckdb_mib:.0f} MiB; judgment cache {cache_mib:.0f} MiB\n")
    print("| phase | wall time (s) | peak RSS (MiB) | rows | completions sent |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        rows = r.get("aq_prompts_rows", r.get("aq_judgments_rows"))
        sent = r.get("completions_sent_counted", "")
        print(f"| {r['phase']} | {r['wall_s']} | {r['peak_rss_mib']} | {rows} | {sent} |")
    remat = results[-1]
    ok = remat["completions_sent_counted"] == 0 and remat["completions_sent_metadata"] == 0
    print(
        f"\nre-materialisation of a complete partition sent {remat['completions_sent_counted']} completions "
        f"({'OK' if ok else 'FAIL: must be 0'})"
    )
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_judgments.json").write_text(
        json.dumps(
            {"partition": args.partition, "duckdb_mib": duckdb_mib, "cache_mib": cache_mib, "phases": results}, indent=2
        )
    )
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
