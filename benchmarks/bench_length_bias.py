"""Benchmark: the length-controlled BT fit (block Newton) against L-BFGS on the same objective.

Runs on the real expert comparisons of each dimension (13,952 comparisons, 1,269 arguments in 20
topics): :func:`length_controlled_bt` (Newton steps, topic blocks solved in one batched call, BLAS
limited to one thread) against ``scipy.optimize.minimize(method="L-BFGS-B")`` with the analytic
gradient of the same penalised likelihood. Both must reach the same optimum (largest difference of
the strengths and of beta printed); the script prints the median time of each and the ratio.

Usage::

    .venv/bin/python benchmarks/bench_length_bias.py [--repeats 3]

The data folder is ``$ARGASSETS_DATA_DIR`` or ``../shared/data``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import optimize

from argassets.argument_quality.corpus import find_corpus_files, load_corpus
from argassets.argument_quality.length_bias_inputs import comparison_lengths, item_table
from argassets.argument_quality.length_bias_model import length_controlled_bt
from argassets.platform.paths import resolve_data_dir


def _time(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def lbfgs(ia: np.ndarray, ib: np.ndarray, codes: np.ndarray, x: np.ndarray, ridge: float) -> np.ndarray:
    """The same objective (ties as one win each) minimised by L-BFGS; returns ``[theta..., beta]``."""
    win_a, win_b, tie = codes == 0, codes == 1, codes == 2
    winner = np.concatenate([ia[win_a], ib[win_b], ia[tie], ib[tie]])
    loser = np.concatenate([ib[win_a], ia[win_b], ib[tie], ia[tie]])
    d = x[winner] - x[loser]
    n = len(x)

    def value_and_gradient(params: np.ndarray) -> tuple[float, np.ndarray]:
        theta, beta = params[:-1], params[-1]
        eta = theta[winner] - theta[loser] + beta * d
        r = 1.0 / (1.0 + np.exp(-eta)) - 1.0
        value = np.logaddexp(0.0, -eta).sum() + 0.5 * ridge * (theta @ theta + beta * beta)
        grad = np.empty(n + 1)
        grad[:-1] = np.bincount(winner, r, n) - np.bincount(loser, r, n) + ridge * theta
        grad[-1] = (r * d).sum() + ridge * beta
        return float(value), grad

    result = optimize.minimize(
        value_and_gradient,
        np.zeros(n + 1),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 50000, "ftol": 0.0, "gtol": 1e-8},
    )
    return result.x


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each method (median reported)")
    args = parser.parse_args(argv)
    root = resolve_data_dir()
    if root is None:
        print("no data folder: set ARGASSETS_DATA_DIR", file=sys.stderr)
        return 2
    arguments, experts = load_corpus(find_corpus_files(root / "webis-argquality20"))
    comparisons, _ = comparison_lengths(experts, arguments)
    items = item_table(arguments)
    x = np.log(np.maximum(items["text_length"].to_numpy(dtype=float), 1.0))
    topic = items["topic_id"].to_numpy(dtype=np.int64)
    print(
        f"{'dimension':<10} {'newton (s)':>11} {'L-BFGS (s)':>11} {'ratio':>7} {'max |d theta|':>14} {'|d beta|':>10}"
    )
    for dimension, part in comparisons.groupby("dimension", sort=False):
        ia, ib = part["item_a"].to_numpy(), part["item_b"].to_numpy()
        codes = part["expert_code"].to_numpy()
        fast_s, fit = _time(lambda: length_controlled_bt(ia, ib, codes, x, topic, ridge=0.1), args.repeats)  # noqa: B023
        slow_s, params = _time(lambda: lbfgs(ia, ib, codes, x, 0.1), max(1, min(args.repeats, 2)))  # noqa: B023
        d_theta = float(np.abs(fit.theta - params[:-1]).max())
        d_beta = abs(fit.beta - float(params[-1]))
        if d_theta > 1e-4 or d_beta > 1e-4:
            print(f"{dimension}: the two methods disagree ({d_theta:.2e}, {d_beta:.2e})", file=sys.stderr)
            return 1
        print(
            f"{dimension:<10} {fast_s:>11.3f} {slow_s:>11.3f} {slow_s / fast_s:>6.1f}x {d_theta:>14.2e} {d_beta:>10.2e}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
