"""Bradley-Terry strengths from win-count matrices: the one BT fit of both studies (docs/pairwise.md)."""

from __future__ import annotations

from typing import Literal

import numpy as np

Engine = Literal["batched", "choix"]

#: ILSR stops when the L1 norm of the change of the parameters is below ``tol`` (choix's default).
DEFAULT_TOL = 1e-8
DEFAULT_MAX_ITER = 1000

#: ILSR iterations allowed to a matrix that Newton's method left unconverged.
_ILSR_FALLBACK_ITERATIONS = 100_000

#: Newton steps in float32 before the remaining matrices continue in float64.
_SINGLE_PRECISION_STEPS = 25


def _newton_step(totals: np.ndarray, wins: np.ndarray, alpha: float, params: np.ndarray) -> np.ndarray:
    """One batched Newton step towards the fixed point of choix's ILSR (see :func:`fit_strengths`)."""
    k, n, _ = totals.shape
    s = np.exp(params - params.max(axis=1, keepdims=True))
    s /= s.sum(axis=1, keepdims=True)
    w = n * s
    # P(i beats j) in logistic form: no 0/0 when both weights underflow.
    p = 1.0 / (1.0 + np.exp(params[:, None, :] - params[:, :, None]))
    expected = totals * p
    grad = expected.sum(axis=2) - wins + alpha * n * (w - 1.0)
    # Off-diagonal Hessian: -N_ij p_ij p_ji - alpha n^2 s_i s_j, with p_ji = 1 - p_ij.
    hess = expected * p
    hess -= expected
    hess -= (alpha * n * n) * (s[:, :, None] * s[:, None, :])
    idx = np.arange(n)
    hess[:, idx, idx] = 0.0
    hess[:, idx, idx] = -hess.sum(axis=2)
    hess += 1.0 / n  # removes the translation null space without changing the step
    try:
        step = -np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        # One singular Hessian fails the whole stack: solve one by one, NaN for the singular ones.
        step = np.full_like(grad, np.nan)
        for i in range(k):
            try:
                step[i] = -np.linalg.solve(hess[i], grad[i])
            except np.linalg.LinAlgError:
                pass
    # Damping: no coordinate moves by more than 2 log-units in one step.
    largest = np.abs(step).max(axis=1, keepdims=True)
    step *= np.minimum(1.0, 2.0 / np.maximum(largest, 1e-300))
    new = params + step
    return new - new.mean(axis=1, keepdims=True)


def _ilsr(
    counts: np.ndarray,
    alpha: float,
    start: np.ndarray | None,
    max_iter: int,
    tol: float,
    index: int,
    n_matrices: int,
) -> np.ndarray:
    """``choix.ilsr_pairwise_dense`` with the one retry rule: ``max_iter`` iterations first, then
    the fallback budget from the same start (choix raises when it has not converged)."""
    import choix  # here, not at the top: choix imports scipy.stats, which a CLI start does not need

    if max_iter > 0:
        try:
            return choix.ilsr_pairwise_dense(counts, alpha=alpha, initial_params=start, max_iter=max_iter, tol=tol)
        except RuntimeError:
            pass
    fallback = max(10 * max_iter, _ILSR_FALLBACK_ITERATIONS)
    try:
        return choix.ilsr_pairwise_dense(counts, alpha=alpha, initial_params=start, max_iter=fallback, tol=tol)
    except RuntimeError:
        raise RuntimeError(
            f"Bradley-Terry did not converge for matrix {index} of {n_matrices}, neither with "
            f"{max_iter} steps nor with {fallback} ILSR iterations"
        ) from None


def _as_stack(counts: np.ndarray) -> tuple[np.ndarray, bool]:
    """``counts`` as a float stack of square matrices, and whether one matrix was given."""
    counts = np.asarray(counts, dtype=float)
    single = counts.ndim == 2
    if single:
        counts = counts[None]
    if counts.ndim != 3 or counts.shape[1] != counts.shape[2]:
        raise ValueError(f"counts must be square matrices, got shape {counts.shape}")
    return counts, single


def _fit_with_choix(
    counts: np.ndarray, alpha: float, params: np.ndarray, given_start: bool, max_iter: int, tol: float
) -> np.ndarray:
    """``choix.ilsr_pairwise_dense`` matrix by matrix (with the retry rule), into ``params``."""
    k = len(counts)
    for i in range(k):
        params[i] = _ilsr(counts[i], alpha, params[i] if given_start else None, max_iter, tol, i, k)
    return params


def _smoothed_start(counts: np.ndarray, wins: np.ndarray) -> np.ndarray:
    """Centred smoothed log win/loss ratios: fewer Newton steps than starting from zero."""
    losses = counts.sum(axis=1)
    params = np.log((wins + 0.5) / (losses + 0.5))
    params -= params.mean(axis=1, keepdims=True)
    return params


def _raise_if_unregularised(alpha: float) -> None:
    """Without ``alpha`` a non-finite Newton step means there is no finite estimate at all."""
    if alpha <= 0:
        raise ValueError(
            "Bradley-Terry strengths could not be computed: a comparison graph is not "
            "connected (or an argument never wins or never loses) and alpha is 0; use alpha > 0"
        )


def _newton_iterations(
    totals: np.ndarray,
    wins: np.ndarray,
    alpha: float,
    params: np.ndarray,
    max_iter: int,
    tol: float,
) -> list[tuple[int, np.ndarray]]:
    """Batched Newton steps from ``params`` until each matrix converges; converged rows are written
    into ``params``. Returns the matrices Newton cannot finish, with the last finite parameters."""
    work = totals.dtype.type
    active = np.arange(len(totals))
    current = params.astype(work)
    unfinished: list[tuple[int, np.ndarray]] = []
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for iteration in range(max_iter):
            if work is np.float32 and iteration == _SINGLE_PRECISION_STEPS:
                # Very unequal strengths can keep float32 steps above tol: finish in float64.
                work = np.float64
                totals, wins, current = totals.astype(work), wins.astype(work), current.astype(work)
            new = _newton_step(totals, wins, alpha, current)
            broken = ~np.isfinite(new).all(axis=1)
            if broken.any():
                _raise_if_unregularised(alpha)
                # Overflow or a singular Hessian (tiny, nearly separable samples): ILSR finishes them.
                unfinished += list(zip(active[broken].tolist(), current[broken], strict=False))
            going = (np.abs(new - current).sum(axis=1) >= tol) & ~broken
            done = ~going & ~broken
            params[active[done]] = new[done]
            if not going.any():
                break
            active, current = active[going], new[going]
            totals, wins = totals[going], wins[going]
        else:
            unfinished += list(zip(active.tolist(), current, strict=False))
    return unfinished


def _fit_batched(
    counts: np.ndarray,
    alpha: float,
    params: np.ndarray,
    given_start: bool,
    max_iter: int,
    tol: float,
    precision: Literal["double", "single"],
) -> np.ndarray:
    """Newton's method on ILSR's fixed-point equations for the whole stack, ILSR for the rest."""
    work = np.float32 if precision == "single" else np.float64
    totals = (counts + np.swapaxes(counts, 1, 2)).astype(work, copy=False)
    wins = counts.sum(axis=2).astype(work, copy=False)
    if not given_start:
        params = _smoothed_start(counts, wins)
    unfinished = _newton_iterations(totals, wins, alpha, params, max_iter, tol)
    # Damped Newton steps can also cycle on nearly separable matrices (a judge whose verdicts are a
    # total order, e.g. longer-wins, leaves only alpha to bound the strengths). ILSR itself always
    # converges with alpha > 0, so the few matrices left are finished by choix from where Newton got.
    for index, start in unfinished:
        params[index] = _ilsr(counts[index], alpha, np.asarray(start, dtype=float), 0, tol, index, len(counts))
        params[index] -= params[index].mean()
    return params


def fit_strengths(
    counts: np.ndarray,
    alpha: float,
    *,
    initial_params: np.ndarray | None = None,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    engine: Engine = "batched",
    precision: Literal["double", "single"] = "double",
) -> np.ndarray:
    """BT strengths of every count matrix of a stack: the estimate of ``choix.ilsr_pairwise_dense``.

    Parameters
    ----------
    counts
        ``(n_matrices, n_items, n_items)`` or ``(n_items, n_items)`` win counts.
    alpha
        Regularisation of ILSR (``alpha`` of ``choix.ilsr_pairwise_dense``); > 0 keeps the estimate
        finite on disconnected graphs.
    initial_params
        Starting log-strengths, ``(n_items,)`` or like the result; default zeros.
    max_iter, tol
        Convergence control of ``choix.ilsr_pairwise_dense``.
    engine
        ``choix`` (``choix.ilsr_pairwise_dense`` per matrix) or ``batched`` (Newton's method on
        ILSR's fixed-point equations, all matrices at once; see the module docstring).
    precision
        ``single`` runs the batched engine in float32 (faster; about 1e-5 accurate, used for
        bootstrap replicates with a ``tol`` of 1e-5 per argument); matrices that have not converged
        after 25 steps (very unequal strengths) continue in float64.

    Returns
    -------
    numpy.ndarray
        Log-strengths centred to mean 0, ``(n_matrices, n_items)`` (or ``(n_items,)``).

    Raises
    ------
    RuntimeError
        A matrix did not converge, neither within ``max_iter`` iterations nor in the fallback of
        ``max(10 * max_iter, 100,000)`` ILSR iterations (the one retry rule of every BT fit).
    ValueError
        ``alpha`` = 0 and no finite estimate (a disconnected comparison graph, or an argument
        that never loses or never wins).
    """
    counts, single = _as_stack(counts)
    k, n, _ = counts.shape
    params = np.zeros((k, n))
    if initial_params is not None:
        params = np.broadcast_to(np.asarray(initial_params, dtype=float), (k, n)).copy()
    if n <= 1 or k == 0:
        params[:] = 0.0
    elif engine == "choix":
        params = _fit_with_choix(counts, alpha, params, initial_params is not None, max_iter, tol)
    elif engine == "batched":
        params = _fit_batched(counts, alpha, params, initial_params is not None, max_iter, tol, precision)
    else:
        raise ValueError(f"engine must be 'batched' or 'choix', got {engine!r}")
    return params[0] if single else params


def z_normalise(values: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """z-scores ``(x - mean) / std`` with the population std, within each group: the one z-score rule.

    NaN values stay NaN and are left out of the mean and std. A group whose finite values have
    no spread (one value, or all equal) gets z = 0 for them: its items are all exactly average,
    which is what a z-score says, and a downstream correlation of a constant vector is NaN
    anyway. (A NaN here would also hide compared items from counts and plots.)

    Parameters
    ----------
    values
        ``(n,)`` or ``(n, k)``: k columns normalised independently.
    groups
        Group code of each row, ``0 .. n_groups-1``; default one group.

    Returns
    -------
    numpy.ndarray
        The z-scores, shaped like ``values``.
    """
    values = np.asarray(values, dtype=float)
    flat = values.ndim == 1
    matrix = values[:, None] if flat else values
    groups = np.zeros(len(matrix), dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    ok = np.isfinite(matrix)
    filled = np.where(ok, matrix, 0.0)
    cnt = np.zeros((n_groups, matrix.shape[1]))
    s1 = np.zeros_like(cnt)
    np.add.at(cnt, groups, ok)
    np.add.at(s1, groups, filled)
    # Spread is max - min, not the std: equal values can leave a rounding-size std.
    high = np.full_like(cnt, -np.inf)
    low = np.full_like(cnt, np.inf)
    np.maximum.at(high, groups, np.where(ok, matrix, -np.inf))
    np.minimum.at(low, groups, np.where(ok, matrix, np.inf))
    spread = (high - low)[groups]
    with np.errstate(all="ignore"):
        mean = s1 / cnt
        dev = np.where(ok, matrix - mean[groups], 0.0)
        s2 = np.zeros_like(cnt)
        np.add.at(s2, groups, dev * dev)
        std = np.sqrt(s2 / cnt)
        z = np.where(spread > 0, dev / std[groups], 0.0)
    out = np.where(ok, z, np.nan)
    return out[:, 0] if flat else out
