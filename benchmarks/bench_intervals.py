"""Benchmark: the platform's vectorised clustered BCa vs a plain loop over resamples vs evalica's bootstrap.

One judge's labels against the experts' (A, B or Tie) in clustered comparisons (topics, as in
Webis-ArgQuality-20; the judge's agreement varies by topic), and the 95% interval of
Krippendorff's alpha (nominal), the figure all three can compute:

- **platform**: :func:`argassets.platform.stats.intervals.cluster_bootstrap` over the topics, the
  statistic vectorised from per-topic confusion matrices (``scipy.stats.bootstrap``, BCa);
- **loop**: the same BCa over the topics by ``scipy.stats.bootstrap(vectorized=False)``, i.e. a
  Python loop over resamples, each computing alpha with the ``krippendorff`` package on the
  comparisons of the drawn topics (the usual way to write it);
- **evalica**: ``evalica.alpha_bootstrap`` (0.4.2, its Rust solver), Krippendorff's KALPHA
  bootstrap: it resamples pairable values, not clusters, so its interval is narrower (it does
  not know about the topics); the table shows it beside the others.

One run of each on the same data, the same number of resamples; ratios are times relative to
the platform. Small by default (20 topics x 100 comparisons, 1000 resamples: seconds); ``--per-topic
700 --resamples 2000`` is the size of one Webis dimension with the platform's default resamples.

Usage::

    .venv/bin/python benchmarks/bench_intervals.py [--topics 20] [--per-topic 100] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import platform
import time

import krippendorff
import numpy as np
import pandas as pd
from scipy import stats

from argassets.platform.stats.cluster_metrics import nominal_alpha_from_coincidence, weighted_tables
from argassets.platform.stats.intervals import BootstrapSettings, cluster_bootstrap


def _data(topics: int, per_topic: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Topic, expert label and judge label of every comparison."""
    rng = np.random.default_rng(seed)
    topic = np.repeat(np.arange(topics), per_topic)
    agreement = rng.beta(7, 3, size=topics)[topic]
    expert = rng.choice(3, size=topic.size, p=[0.45, 0.45, 0.10])
    judge = np.where(rng.random(topic.size) < agreement, expert, (expert + rng.integers(1, 3, topic.size)) % 3)
    return topic, expert, judge


def platform_interval(topic, expert, judge, settings: BootstrapSettings) -> tuple[float, float]:
    topics = int(topic.max()) + 1
    confusion = np.zeros((topics, 3, 3))
    np.add.at(confusion, (topic, judge, expert), 1.0)

    def statistic(weights: np.ndarray) -> np.ndarray:
        table = weighted_tables(weights, confusion)
        return nominal_alpha_from_coincidence(table + np.swapaxes(table, 1, 2))[None, :]

    result = cluster_bootstrap(statistic, topics, ["alpha"], settings, what="benchmark alpha")
    return float(result.low[0]), float(result.high[0])


def loop_interval(topic, expert, judge, settings: BootstrapSettings) -> tuple[float, float]:
    rows_of = [np.flatnonzero(topic == t) for t in range(int(topic.max()) + 1)]

    def statistic(indices: np.ndarray) -> float:
        rows = np.concatenate([rows_of[int(t)] for t in indices])
        data = np.vstack([expert[rows], judge[rows]]).astype(float)
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))

    result = stats.bootstrap(
        (np.arange(len(rows_of)),),
        statistic,
        vectorized=False,
        n_resamples=settings.n_resamples,
        confidence_level=settings.level,
        method="BCa",
        random_state=np.random.default_rng(settings.seed),
    )
    widen = settings.expansion(len(rows_of))  # the platform's small-cluster widening, for a like-for-like interval
    point = statistic(np.arange(len(rows_of)))
    low, high = result.confidence_interval.low, result.confidence_interval.high
    return point - widen * (point - low), point + widen * (high - point)


def evalica_interval(topic, expert, judge, settings: BootstrapSettings) -> tuple[float, float]:
    import evalica

    data = pd.DataFrame([expert, judge])
    result = evalica.alpha_bootstrap(data, "nominal", n_resamples=settings.n_resamples, random_state=settings.seed)
    return float(result.low), float(result.high)


def _cpu() -> str:
    """The CPU's model name and whether it has AVX-512 (Linux), else the machine type."""
    try:
        text = open("/proc/cpuinfo", encoding="utf-8").read()
    except OSError:
        return platform.machine()
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), "")
    return f"{name or platform.machine()} ({'AVX-512' if 'avx512f' in text else 'no AVX-512'})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--per-topic", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    settings = BootstrapSettings(n_resamples=args.resamples)
    topic, expert, judge = _data(args.topics, args.per_topic, args.seed)
    point = krippendorff.alpha(
        reliability_data=np.vstack([expert, judge]).astype(float), level_of_measurement="nominal"
    )
    print(f"{args.topics} topics x {args.per_topic} comparisons, {args.resamples} resamples, alpha = {point:.4f}")
    print(f"CPU: {_cpu()}")
    rows = []
    for name, method in (("platform", platform_interval), ("loop", loop_interval), ("evalica", evalica_interval)):
        started = time.perf_counter()
        low, high = method(topic, expert, judge, settings)
        rows.append((name, time.perf_counter() - started, low, high))
    base = rows[0][1]
    print(f"{'method':<10} {'seconds':>9} {'x platform':>11} {'95% interval':>20}  unit resampled")
    units = {"platform": "topic (BCa, widened)", "loop": "topic (BCa, widened)", "evalica": "value (KALPHA)"}
    for name, seconds, low, high in rows:
        print(f"{name:<10} {seconds:>9.3f} {seconds / base:>11.1f} {f'[{low:.4f}, {high:.4f}]':>20}  {units[name]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
