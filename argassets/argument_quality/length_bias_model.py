"""The length-controlled Bradley-Terry model: strengths at equal length, and the preference for length.

.. math:: P(i \\succ j) = \\sigma(\\theta_i - \\theta_j + \\beta (\\log L_i - \\log L_j)),

in the spirit of length-controlled win rates: :math:`\\beta` absorbs the preference for length and
:math:`\\theta` is the strength of the argument at equal length. Because the length is a property of
the argument (not of the comparison), the likelihood alone cannot tell :math:`\\beta x_i` from
:math:`\\theta_i`; the ridge penalty does: at the optimum :math:`\\sum_i x_i \\theta_i = \\beta`
exactly, so :math:`\\beta` is (up to the penalty) the within-topic least-squares slope of the BT
strengths on log length and :math:`\\theta` the part of the strength that length does not explain.
Plain numpy, without Dagster; the metrics are in :mod:`argassets.argument_quality.length_bias`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["LCBTFit", "TIE_WEIGHT", "length_controlled_bt"]

#: Label codes (as :func:`argassets.argument_quality.voting.encode_labels`): A, B, Tie.
_A, _B, _TIE = 0, 1, 2
#: Weight of each side's win in a ``Tie``, per tie rule.
TIE_WEIGHT = {"win_each": 1.0, "half_each": 0.5, "drop": 0.0}


class LCBTFit:
    """A length-controlled Bradley-Terry fit.

    Attributes
    ----------
    theta
        Strength at equal length per item, centred to mean 0 within each block (topic).
    beta
        Log-odds of winning per unit of log length ratio (0 = no length preference).
    iterations
        Newton steps taken.
    """

    __slots__ = ("beta", "iterations", "theta")

    def __init__(self, theta: np.ndarray, beta: float, iterations: int) -> None:
        self.theta = theta
        self.beta = beta
        self.iterations = iterations


def _checked_blocks(
    ia: np.ndarray, ib: np.ndarray, code: np.ndarray, x: np.ndarray, block: np.ndarray | None, ties: str, ridge: float
) -> np.ndarray:
    """The block of every item, once every input is known good (see :func:`length_controlled_bt`)."""
    n = len(x)
    if not (ia.shape == ib.shape == code.shape):
        raise ValueError("item_a, item_b and codes must have one value per comparison")
    if ties not in TIE_WEIGHT:
        raise ValueError(f"ties must be one of {', '.join(TIE_WEIGHT)}, got {ties!r}")
    if not ridge > 0:
        raise ValueError(f"ridge must be > 0, got {ridge!r}")
    if not np.isfinite(x).all():
        raise ValueError("log_length must be finite for every item")
    if len(ia) and (min(ia.min(), ib.min()) < 0 or max(ia.max(), ib.max()) >= n):
        raise ValueError(f"item indices must be in 0..{n - 1}")
    blocks = np.zeros(n, dtype=np.int64) if block is None else np.asarray(block, dtype=np.int64)
    if blocks.shape != (n,):
        raise ValueError(f"block must have one value per item ({n}), got shape {blocks.shape}")
    if len(ia) and (blocks[ia] != blocks[ib]).any():
        i = int(np.flatnonzero(blocks[ia] != blocks[ib])[0])
        raise ValueError(f"comparison {i} crosses blocks ({blocks[ia[i]]} and {blocks[ib[i]]})")
    return blocks


@dataclass(frozen=True)
class _Problem:
    """The penalised likelihood of one fit: observations (winner, loser, weight, length difference)
    and the items of each block padded to one size, so that all blocks are solved in one batched call.
    """

    n: int
    ridge: float
    winner: np.ndarray
    loser: np.ndarray
    weight: np.ndarray
    d: np.ndarray
    n_blocks: int
    k_max: int
    slot: np.ndarray  # position of each item in the padded (blocks, k_max) layout
    padding: np.ndarray
    #: Per observation: where its block's matrix starts, and the winner's and loser's row in it.
    base: np.ndarray
    local_w: np.ndarray
    local_l: np.ndarray

    @classmethod
    def build(
        cls,
        ia: np.ndarray,
        ib: np.ndarray,
        code: np.ndarray,
        x: np.ndarray,
        blocks: np.ndarray,
        ties: str,
        ridge: float,
    ) -> _Problem:
        n = len(x)
        tie_w = TIE_WEIGHT[ties]
        win_a, win_b, tie = code == _A, code == _B, code == _TIE
        winner = np.concatenate([ia[win_a], ib[win_b], ia[tie], ib[tie]])
        loser = np.concatenate([ib[win_a], ia[win_b], ib[tie], ia[tie]])
        weight = np.concatenate([np.ones(win_a.sum() + win_b.sum()), np.full(2 * tie.sum(), tie_w)])
        keep = weight > 0
        winner, loser, weight = winner[keep], loser[keep], weight[keep]
        block_ids, block_of = np.unique(blocks, return_inverse=True)
        size = np.bincount(block_of, minlength=len(block_ids))
        k_max = int(size.max()) if n else 0
        order = np.argsort(block_of, kind="stable")
        local = np.empty(n, dtype=np.int64)
        local[order] = np.arange(n) - np.repeat(np.cumsum(size) - size, size)
        slot = block_of * k_max + local
        padding = np.ones(len(block_ids) * k_max, dtype=bool)
        padding[slot] = False
        obs_block = block_of[winner]
        return cls(
            n=n,
            ridge=ridge,
            winner=winner,
            loser=loser,
            weight=weight,
            d=x[winner] - x[loser],
            n_blocks=len(block_ids),
            k_max=k_max,
            slot=slot,
            padding=padding,
            base=obs_block * k_max * k_max,
            local_w=slot[winner] - obs_block * k_max,
            local_l=slot[loser] - obs_block * k_max,
        )

    def objective(self, theta: np.ndarray, beta: float) -> float:
        eta = theta[self.winner] - theta[self.loser] + beta * self.d
        penalty = 0.5 * self.ridge * ((theta * theta).sum() + beta * beta)
        return float((self.weight * np.logaddexp(0.0, -eta)).sum() + penalty)

    def newton_step(self, theta: np.ndarray, beta: float, fit_beta: bool) -> tuple[np.ndarray, float]:
        """The Newton direction: block-diagonal Hessian of theta, beta eliminated by its Schur complement."""
        n, k_max, n_blocks, ridge = self.n, self.k_max, self.n_blocks, self.ridge
        winner, loser, d = self.winner, self.loser, self.d
        eta = theta[winner] - theta[loser] + beta * d
        p = 1.0 / (1.0 + np.exp(-eta))  # P(winner wins)
        r = self.weight * (p - 1.0)  # d objective / d eta
        s = self.weight * p * (1.0 - p)
        g_theta = np.bincount(winner, r, n) - np.bincount(loser, r, n) + ridge * theta
        g_beta = float((r * d).sum()) + ridge * beta
        h_beta = float((s * d * d).sum()) + ridge
        b_vec = np.bincount(winner, s * d, n) - np.bincount(loser, s * d, n)
        solved = np.linalg.solve(self._hessian(s), self._rhs(g_theta, b_vec)).reshape(n_blocks * k_max, 2)
        u, v = solved[self.slot, 0], solved[self.slot, 1]
        if fit_beta:
            schur = h_beta - float(b_vec @ v)
            step_beta = (float(b_vec @ u) - g_beta) / schur if schur > 1e-300 else 0.0
        else:
            step_beta = 0.0
        return -u - v * step_beta, step_beta

    def _hessian(self, s: np.ndarray) -> np.ndarray:
        """The theta block of the Hessian, one ``(k_max, k_max)`` matrix per block (padding: identity)."""
        k_max, n_blocks = self.k_max, self.n_blocks
        cells = n_blocks * k_max * k_max
        base, lw, ll = self.base, self.local_w, self.local_l
        h = (
            np.bincount(base + lw * k_max + lw, s, cells)
            + np.bincount(base + ll * k_max + ll, s, cells)
            - np.bincount(base + lw * k_max + ll, s, cells)
            - np.bincount(base + ll * k_max + lw, s, cells)
        ).reshape(n_blocks, k_max, k_max)
        diagonal = np.full(n_blocks * k_max, self.ridge)
        diagonal[self.padding] = 1.0  # padded slots: identity rows, right-hand side 0
        h[:, np.arange(k_max), np.arange(k_max)] += diagonal.reshape(n_blocks, k_max)
        return h

    def _rhs(self, g_theta: np.ndarray, b_vec: np.ndarray) -> np.ndarray:
        rhs = np.zeros((self.n_blocks * self.k_max, 2))
        rhs[self.slot, 0] = g_theta
        rhs[self.slot, 1] = b_vec
        return rhs.reshape(self.n_blocks, self.k_max, 2)

    def line_search(
        self, theta: np.ndarray, beta: float, current: float, step_theta: np.ndarray, step_beta: float
    ) -> tuple[np.ndarray, float, float, float]:
        """Step halving until the objective does not grow: new theta, beta, objective and largest change."""
        step = 1.0
        while True:
            candidate_theta = theta + step * step_theta
            candidate_beta = beta + step * step_beta
            value = self.objective(candidate_theta, candidate_beta)
            if value <= current + 1e-12 * max(1.0, abs(current)) or step < 1e-8:
                break
            step *= 0.5
        change = max(float(np.abs(step * step_theta).max(initial=0.0)), abs(step * step_beta))
        return candidate_theta, candidate_beta, value, change


def length_controlled_bt(
    item_a: np.ndarray,
    item_b: np.ndarray,
    codes: np.ndarray,
    log_length: np.ndarray,
    block: np.ndarray | None = None,
    *,
    ties: str = "win_each",
    ridge: float = 0.1,
    fit_beta: bool = True,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> LCBTFit:
    """Bradley-Terry strengths with a length covariate, by penalised maximum likelihood (Newton).

    Each decisive verdict is one observation that the winner :math:`w` beat the loser :math:`l`, with
    :math:`P = \\sigma(\\theta_w - \\theta_l + \\beta (x_w - x_l))`, :math:`x` the log length; ties as the
    platform's BT (``ties``); a ridge penalty keeps the strengths and :math:`\\beta` finite. The model, its
    solver and why it is unique: docs/aggregation.md, "Length bias".

    Parameters
    ----------
    item_a, item_b
        Item index (``0 .. n-1``) of the two sides of each comparison.
    codes
        Label codes (0 = A wins, 1 = B wins, 2 = Tie; negative = missing, ignored).
    log_length
        Covariate of each item (``n`` values), e.g. the log of its length.
    block
        Block (topic) of each item; comparisons must stay within a block. Default: one block.
    ties
        ``win_each``, ``half_each`` or ``drop``.
    ridge
        :math:`\\lambda` > 0.
    fit_beta
        ``False`` fixes :math:`\\beta = 0` (the plain, ridge-penalised BT fit).
    max_iter, tol
        Newton stops when the largest parameter change is below ``tol``; it fails after ``max_iter``.

    Raises
    ------
    ValueError
        Bad shapes, item indices out of range, a comparison across blocks, ``ridge`` <= 0, an
        unknown ``ties``, or a non-finite covariate.
    RuntimeError
        No convergence within ``max_iter`` steps.
    """
    ia, ib = np.asarray(item_a, dtype=np.int64), np.asarray(item_b, dtype=np.int64)
    code, x = np.asarray(codes, dtype=np.int64), np.asarray(log_length, dtype=float)
    blocks = _checked_blocks(ia, ib, code, x, block, ties, ridge)
    return _newton(_Problem.build(ia, ib, code, x, blocks, ties, ridge), len(x), fit_beta, max_iter, tol)


def _newton(problem: _Problem, n_items: int, fit_beta: bool, max_iter: int, tol: float) -> LCBTFit:
    """Newton's method with a step-halving line search from all strengths and ``beta`` at zero."""
    theta = np.zeros(n_items)
    beta = 0.0
    current = problem.objective(theta, beta)
    # The blocks are small (one topic): a multi-threaded BLAS only adds overhead, a lot of it on a
    # loaded machine (measured: 0.09 s against 0.6-4 s per fit on 2 busy cores).
    with threadpool_limits(limits=1, user_api="blas"):
        for iteration in range(1, max_iter + 1):
            step_theta, step_beta = problem.newton_step(theta, beta, fit_beta)
            theta, beta, current, change = problem.line_search(theta, beta, current, step_theta, step_beta)
            if change < tol:
                return LCBTFit(theta, float(beta), iteration)
    raise RuntimeError(f"length-controlled BT did not converge in {max_iter} Newton steps")
