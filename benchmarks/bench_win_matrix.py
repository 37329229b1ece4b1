"""Benchmark: win matrices from per-argument bin histograms (W = H K H^T) vs looping over repetitions.

Runs on the real pairwise study: the 100 arguments and 934 annotated pairs, with the published
22-model ensemble E1 (``ensemble1``: up to 110 valid scores per argument, the largest ensemble of the
paper) and with the published E3. Both methods must give the same matrix; the script prints the
median time of each and the ratio.

Usage::

    .venv/bin/python benchmarks/bench_win_matrix.py [--repeats 5]

The data folder is ``$ARGASSETS_DATA_DIR`` or ``../shared/data``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from argassets.platform.paths import resolve_data_dir
from argassets.political.human_studies import read_pairwise_study
from argassets.political.validation.win_matrices import bin_histograms, pair_mask, win_matrix, win_matrix_loop


def _time(function, repeats: int) -> tuple[float, np.ndarray]:
    times = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each method (median reported)")
    args = parser.parse_args(argv)
    root = resolve_data_dir()
    if root is None:
        print("no data folder: set ARGASSETS_DATA_DIR", file=sys.stderr)
        return 2
    study = read_pairwise_study(root / "political" / "human")
    meta_ids = list(study.items["meta_id"])
    index = {meta_id: row for row, meta_id in enumerate(meta_ids)}
    pairs = [(index[a], index[b]) for a, b in zip(study.pairs["id1"], study.pairs["id2"], strict=True)]
    print(f"{len(meta_ids)} arguments, {len(pairs)} annotated pairs")
    print(f"{'ensemble':<10} {'scores/arg':>10} {'histogram (ms)':>15} {'loop (ms)':>12} {'ratio':>8}")
    for prefix in ("ensemble1", "ensemble3"):
        frame = study.published[study.published["prefix"] == prefix].set_index("meta_id")
        scores = [list(frame.loc[m, "scores"]) for m in meta_ids]
        fast_s, fast = _time(lambda: win_matrix(bin_histograms(scores), pair_mask(len(scores), pairs)), args.repeats)
        slow_s, slow = _time(lambda: win_matrix_loop(scores, pairs), max(1, min(args.repeats, 3)))
        if not np.allclose(fast, slow):
            print(f"{prefix}: the two methods disagree", file=sys.stderr)
            return 1
        mean_len = float(np.mean([len(s) for s in scores]))
        print(f"{prefix:<10} {mean_len:>10.1f} {fast_s * 1e3:>15.3f} {slow_s * 1e3:>12.1f} {slow_s / fast_s:>7.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
