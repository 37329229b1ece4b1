"""Benchmark: the per-completion work of a baseline's judging, the shortcuts against what they replace.

``run-default`` judges 369,414 completions per Study A baseline. Per completion the judging path
(:mod:`argassets.platform.judging.incremental` with the SQLite cache) encodes the label
probabilities twice (store, and the row kept in memory), decodes them once (the report), and asks
each request for its prompt hash about four times. Measured in one run, on the random baseline's
own distributions (uniform over A/B/Tie, a fresh dictionary per completion as the judge gives it):

- ``encode``: :func:`encode_label_probs` (memoised per distinct value) against the plain canonical
  JSON it returns (``json.dumps`` each time);
- ``decode``: :func:`decode_label_probs` (memoised, a fresh copy each call) against ``json.loads``;
- ``prompt hash``: :attr:`ChatRequest.prompt_sha256` read 4 times per request (computed once)
  against :func:`messages_sha256` computed 4 times;
- ``judging``: completions per second of the whole path (random judge, SQLite cache in a
  temporary folder, 3 runs per request, batches of 50,000), no alternative: an absolute figure.

Usage::

    .venv/bin/python benchmarks/bench_baseline_judging.py [--completions 300000] [--requests 40000]

Prints a Markdown table and writes ``benchmarks/results/bench_baseline_judging.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from argassets.platform.judging.engines.baselines import RandomJudge  # noqa: E402
from argassets.platform.judging.incremental import judge_incrementally  # noqa: E402
from argassets.platform.judging.interface import ChatRequest, SamplingParams, messages_sha256  # noqa: E402
from argassets.platform.pairwise.labels import LABELS  # noqa: E402
from argassets.platform.storage.judgment_cache.codec import decode_label_probs, encode_label_probs
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache  # noqa: E402

SYSTEM = "You compare two arguments on one quality dimension and answer A, B or Tie. " * 20


def _seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _requests(n: int) -> list[ChatRequest]:
    return [ChatRequest(f"p{i}", SYSTEM, f"Argument A: text {i}.\nArgument B: text {i + 1}.", LABELS) for i in range(n)]


def compare(completions: int, requests: int) -> list[dict]:
    probs = [{label: 1.0 / len(LABELS) for label in LABELS} for _ in range(completions)]
    reference = json.dumps({k: float(v) for k, v in probs[0].items()}, sort_keys=True, separators=(",", ":"))
    assert encode_label_probs(probs[0]) == reference
    rows = []
    old = _seconds(
        lambda: [
            json.dumps({str(k): float(v) for k, v in p.items()}, sort_keys=True, separators=(",", ":")) for p in probs
        ]
    )
    new = _seconds(lambda: [encode_label_probs(p) for p in probs])
    rows.append({"case": "encode", "items": completions, "old_s": old, "new_s": new})
    stored = [reference] * completions
    old = _seconds(lambda: [{str(k): float(v) for k, v in json.loads(s).items()} for s in stored])
    new = _seconds(lambda: [decode_label_probs(s) for s in stored])
    rows.append({"case": "decode", "items": completions, "old_s": old, "new_s": new})
    chats = _requests(requests)
    old = _seconds(lambda: [messages_sha256(r.system, r.user) for r in chats for _ in range(4)])
    new = _seconds(lambda: [r.prompt_sha256 for r in chats for _ in range(4)])
    rows.append({"case": "prompt hash (4 reads per request)", "items": requests, "old_s": old, "new_s": new})
    for row in rows:
        row["speedup"] = row["old_s"] / row["new_s"]
    return rows


def judging(requests: int) -> dict:
    chats = _requests(requests)
    sampling = SamplingParams(temperature=1.0, seed=0)
    with tempfile.TemporaryDirectory() as folder:
        cache = JudgmentCache(Path(folder) / "cache.sqlite")
        started = time.perf_counter()
        out = judge_incrementally(RandomJudge(0), "random", chats, sampling, 3, cache, batch_size=50_000)
        elapsed = time.perf_counter() - started
        cache.close()
    return {"case": "judging (random, SQLite)", "items": len(out), "new_s": elapsed, "per_s": len(out) / elapsed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--completions", type=int, default=300_000)
    parser.add_argument("--requests", type=int, default=40_000)
    args = parser.parse_args()
    rows = compare(args.completions, args.requests)
    whole = judging(args.requests)
    print("| case | items | old (s) | new (s) | old / new |")  # noqa: T201
    print("|---|---:|---:|---:|---:|")  # noqa: T201
    for row in rows:
        print(f"| {row['case']} | {row['items']:,} | {row['old_s']:.2f} | {row['new_s']:.2f} | {row['speedup']:.1f}x |")  # noqa: T201
    print(f"| {whole['case']} | {whole['items']:,} | | {whole['new_s']:.2f} | {whole['per_s']:,.0f}/s |")  # noqa: T201
    out = ROOT / "benchmarks" / "results" / "bench_baseline_judging.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "judging": whole}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
