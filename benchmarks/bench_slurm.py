"""Benchmark: judging through Slurm against judging locally, and the estimate against the truth.

In one run, on a throw-away one-node Slurm cluster and PostgreSQL server on 127.0.0.1
(tests/slurm_cluster.py, tests/postgres_server.py), with the embedded sample corpus:

1. **Submission-to-start latency**: ``sbatch`` of a job that writes the time it starts, five times
   one after the other; the figure is the median of start - submission.
2. **Three baseline partitions** (``longer-wins``, ``random``, ``random-b``) from a fresh instance:
   ``argassets slurm backfill`` (PostgreSQL instance, three concurrent jobs) against
   ``argassets backfill`` (SQLite instance, in one process, one after the other); both wall times
   include the study inputs. Ratio: Slurm / local.
3. With ``--vllm`` (needs vLLM's CPU build in .venv): the estimate's error for the vLLM CPU entry
   ``smollm2-135m-vllm`` on its pilot scope: a first Slurm run measures the throughput, then
   against an empty cache ``argassets estimate`` predicts the time of a second run, which is then
   made; error = (estimate - measured judging time) / measured.

Usage::

    .venv/bin/python benchmarks/bench_slurm.py [--vllm] [--only-vllm]

Results are printed and written to ``benchmarks/results/bench_slurm.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.postgres_server import TemporaryPostgres  # noqa: E402
from tests.slurm_cluster import TemporarySlurmCluster  # noqa: E402

BIN = Path(sys.executable).parent
BASELINES = "longer-wins,random,random-b"
REGISTRY = """
[slurm]
cpus = 1
mem = "700"

[[models]]
name = "longer-wins"
backend = "longer-wins"
studies = ["argument_quality"]

[[models]]
name = "random"
backend = "random"
studies = ["argument_quality"]
seed = 1

[[models]]
name = "random-b"
backend = "random"
studies = ["argument_quality"]
seed = 2
"""


def submission_latency(work: Path, n: int = 5) -> list[float]:
    """Seconds from ``sbatch`` returning to the job's first line, ``n`` times."""
    latencies = []
    for i in range(n):
        stamp = work / f"start-{i}"
        script = work / f"latency-{i}.sh"
        script.write_text(f"#!/bin/bash\ndate +%s.%N > {stamp}\n", encoding="utf-8")
        submitted = time.time()
        sbatch = ["sbatch", "--parsable", f"--output={work}/latency-{i}.log", str(script)]
        subprocess.run(sbatch, check=True, stdout=subprocess.DEVNULL)
        while not stamp.exists() or not stamp.read_text().strip():
            time.sleep(0.05)
        latencies.append(float(stamp.read_text()) - submitted)
    return latencies


def environment(work: Path, name: str, pg: TemporaryPostgres | None, registry: str) -> dict[str, str]:
    home = work / name / "home"
    home.mkdir(parents=True)
    (work / name / "models.toml").write_text(registry, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGASSETS_", "DAGSTER_"))}
    env.update(
        {
            "DAGSTER_HOME": str(home),
            "ARGASSETS_TABLES": str(work / name / "tables"),
            "ARGASSETS_DUCKDB": str(work / name / "unused.duckdb"),
            "ARGASSETS_DATA_DIR": str(ROOT / "data" / "sample"),
            "ARGASSETS_MODELS": str(work / name / "models.toml"),
            "ARGASSETS_AUTOMATION": "off",
            "PYTHONPATH": str(ROOT),
        }
    )
    if pg is None:
        env["ARGASSETS_CACHE"] = str(work / name / "cache.sqlite")
    else:
        shutil.copyfile(ROOT / "deploy" / "slurm" / "dagster.yaml", home / "dagster.yaml")
        env["ARGASSETS_DAGSTER_PG_URL"] = pg.new_database().replace("postgresql://", "postgresql+psycopg2://")
        env["ARGASSETS_CACHE"] = pg.new_database()
        env["ARGASSETS_SLURM_WORK_DIR"] = str(work / name / "jobs")
    return env


def timed(env: dict[str, str], *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run([str(BIN / "argassets"), *args], cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"argassets {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return elapsed, result.stdout


def vllm_estimate_error(work: Path, pg: TemporaryPostgres) -> dict[str, float]:
    """Estimated against measured judging time of the vLLM CPU entry on its pilot scope."""
    from argassets.studies import load_registry

    entry_text = (ROOT / "data" / "models.toml").read_text(encoding="utf-8")
    block = re.search(r'\[\[models\]\]\nname = "smollm2-135m-vllm"\n.*?(?=\n\[\[models\]\]|\Z)', entry_text, re.S)
    assert block is not None and load_registry().get("smollm2-135m-vllm")
    registry = '[slurm]\ncpus = 2\nmem = "6000"\n\n' + block.group(0) + "\n"
    env = environment(work, "vllm", pg, registry)
    partition = ("slurm", "backfill", "--partitions", "smollm2-135m-vllm", "--study", "argument_quality")
    timed(env, *partition)  # the first run measures the throughput
    env["ARGASSETS_CACHE"] = pg.new_database()  # nothing cached: the second run sends everything
    _, estimate = timed(env, "estimate", "smollm2-135m-vllm", "--study", "argument_quality")
    predicted = float(re.search(r"time: ([0-9.]+) min", estimate).group(1)) * 60  # type: ignore[union-attr]
    timed(env, *partition)
    import dagster as dg

    os.environ.update({k: env[k] for k in ("DAGSTER_HOME", "ARGASSETS_DAGSTER_PG_URL", "ARGASSETS_SLURM_WORK_DIR")})
    with dg.DagsterInstance.get() as instance:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("aq_judgments"), asset_partitions=["smollm2-135m-vllm"]),
            limit=1,
        ).records
        measured = float(records[0].asset_materialization.metadata["elapsed_s"].value)
    return {"estimated_s": predicted, "measured_s": measured, "relative_error": (predicted - measured) / measured}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vllm", action="store_true", help="also the estimate's error for the vLLM CPU entry")
    parser.add_argument("--only-vllm", action="store_true", help="only the estimate's error (skips 1 and 2)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-slurm-"))
    results: dict[str, object] = {"cpus": os.cpu_count(), "load_average_at_start": list(os.getloadavg())}
    with TemporarySlurmCluster() as cluster, TemporaryPostgres() as pg:
        assert os.environ["SLURM_CONF"] == str(cluster.conf)
        if not args.only_vllm:
            latencies = submission_latency(work)
            results["submission_to_start_s"] = {"median": statistics.median(latencies), "all": latencies}
            slurm_s, _ = timed(environment(work, "slurm", pg, REGISTRY), "slurm", "backfill", "--partitions", BASELINES)
            local_s, _ = timed(environment(work, "local", None, REGISTRY), "backfill", "--partitions", BASELINES)
            results["three_baselines_s"] = {
                "slurm": slurm_s,
                "local": local_s,
                "ratio_slurm_over_local": slurm_s / local_s,
            }
        if args.vllm or args.only_vllm:
            results["vllm_cpu_estimate"] = vllm_estimate_error(work, pg)
    results["load_average_at_end"] = list(os.getloadavg())
    shutil.rmtree(work, ignore_errors=True)
    out = ROOT / "benchmarks" / "results" / "bench_slurm.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
