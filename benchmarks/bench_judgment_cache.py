"""Benchmark: judgment cache throughput with 8 concurrent writer processes, SQLite against PostgreSQL.

Both backends run the same work in the same run: 8 writer processes (spawned) call
``judge_incrementally`` with an instant judge, so what is measured is the cache itself (lookup,
claim, store of every batch, in one transaction each), not a model. Two workloads:

- ``distinct``: each writer judges its own model (8 partitions at once, the Kubernetes case);
- ``shared``: all 8 judge the same model (two runs of one partition, times four): every key must
  still be sent once, the rest is waiting for claims.

The figure is completions stored per second over all writers (wall time from "go" to the last
writer done); the ratio is PostgreSQL / SQLite. SQLite is a local file (WAL); PostgreSQL is a
throw-away local server from Debian's packages (tests/postgres_server.py), default settings
(``fsync`` on, ``synchronous_commit`` on). Usage::

    .venv/bin/python benchmarks/bench_judgment_cache.py [--prompts 1500] [--batch 64] [--writers 8]

Results are printed as a Markdown table and written to ``benchmarks/results/bench_judgment_cache.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RUNS = 3


class InstantJudge:
    backend = "instant"

    def __init__(self) -> None:
        self.sent = 0

    def complete(self, requests, sampling, runs):  # noqa: ANN001, ANN201
        from argassets.platform.judging.interface import Completion, utc_now

        now = utc_now()
        self.sent += len(requests) * len(runs)
        return [[Completion("A", run, None, 0.0, now, now) for run in runs] for _ in requests]


def _writer(location: str, model: str, prompts: int, batch: int, go: str, ready: str, out: str) -> None:
    from argassets.platform.judging.incremental import judge_incrementally
    from argassets.platform.judging.interface import ChatRequest, SamplingParams
    from argassets.platform.storage.judgment_cache import open_judgment_cache

    requests = [ChatRequest(f"k{i}", "system prompt " * 20, f"user message {i} " * 10) for i in range(prompts)]
    cache = open_judgment_cache(location)
    cache.count()
    Path(ready).touch()
    while not os.path.exists(go):
        time.sleep(0.005)
    judge = InstantJudge()
    started = time.perf_counter()
    judge_incrementally(judge, model, requests, SamplingParams(1.0, seed=0), RUNS, cache, batch_size=batch)
    Path(out).write_text(json.dumps({"sent": judge.sent, "seconds": time.perf_counter() - started}))
    cache.close()


def run_case(location: str, workload: str, writers: int, prompts: int, batch: int, folder: Path) -> dict:
    context = multiprocessing.get_context("spawn")
    folder.mkdir(parents=True, exist_ok=True)
    go = folder / "go"
    procs = []
    for i in range(writers):
        model = "shared" if workload == "shared" else f"model-{i}"
        procs.append(
            context.Process(
                target=_writer,
                args=(
                    location,
                    model,
                    prompts,
                    batch,
                    str(go),
                    str(folder / f"ready-{i}"),
                    str(folder / f"out-{i}.json"),
                ),
            )
        )
    for proc in procs:
        proc.start()
    while not all((folder / f"ready-{i}").exists() for i in range(writers)):
        time.sleep(0.01)
    started = time.perf_counter()
    go.touch()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise RuntimeError(f"a writer failed ({proc.exitcode})")
    wall = time.perf_counter() - started
    outs = [json.loads((folder / f"out-{i}.json").read_text()) for i in range(writers)]
    sent = sum(o["sent"] for o in outs)
    stored = prompts * RUNS * (1 if workload == "shared" else writers)
    if sent != stored:
        raise RuntimeError(f"{workload}: {sent} completions sent for {stored} keys (something was sent twice)")
    return {"stored": stored, "sent": sent, "wall_s": round(wall, 3), "per_s": round(stored / wall, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--prompts", type=int, default=1500, help="prompts per writer (x3 runs)")
    parser.add_argument("--batch", type=int, default=64, help="requests per batch (one transaction each)")
    args = parser.parse_args()

    from tests.postgres_server import TemporaryPostgres

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp, TemporaryPostgres() as server:
        for workload in ("distinct", "shared"):
            for backend in ("sqlite", "postgres"):
                location = str(Path(tmp) / f"{workload}.sqlite") if backend == "sqlite" else server.new_database()
                results[f"{workload}/{backend}"] = run_case(
                    location, workload, args.writers, args.prompts, args.batch, Path(tmp) / f"{workload}-{backend}"
                )
    lines = [
        f"{args.writers} writer processes, {args.prompts} prompts x {RUNS} runs each, batches of {args.batch} "
        f"requests; instant judge (cache cost only); {os.cpu_count()} CPU cores",
        "",
        "| workload | SQLite (local file) completions/s | PostgreSQL completions/s | PostgreSQL / SQLite |",
        "|---|---:|---:|---:|",
    ]
    for workload in ("distinct", "shared"):
        sqlite, pg = results[f"{workload}/sqlite"], results[f"{workload}/postgres"]
        lines.append(
            f"| {workload} ({sqlite['stored']:,} completions) | {sqlite['per_s']:,.0f} | {pg['per_s']:,.0f} | "
            f"{pg['per_s'] / sqlite['per_s']:.2f} |"
        )
    print("\n".join(lines))
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_judgment_cache.json").write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
