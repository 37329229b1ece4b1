"""How much a set of pairwise comparisons says about Bradley-Terry strengths.

Model
-----
With strengths :math:`\\theta` and ``N[i, j]`` comparisons of items *i* and *j* (a tie counted as
the count matrix counts it), the Fisher information of the Bradley-Terry log-likelihood is the
weighted graph Laplacian

.. math:: I_{ij} = -N_{ij} p_{ij} p_{ji}, \\qquad I_{ii} = \\sum_j N_{ij} p_{ij} p_{ji},

with :math:`p_{ij} = 1 / (1 + e^{\\theta_j - \\theta_i})`. It is singular along the common shift of
all strengths; with the strengths centred, their covariance is its pseudo-inverse, and with a
Gaussian prior of precision :math:`\\tau` the posterior covariance (Laplace approximation) is
:math:`(I + \\tau \\mathbb{1})^{-1}`.

Scale-separation reliability (the comparative-judgement literature's SSR, e.g. Verhavert et al.
2018) is the share of the observed variance of the estimates that is not estimation error:
``(var(theta_hat) - mean(se^2)) / var(theta_hat)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fisher_information", "posterior_covariance", "scale_separation_reliability", "standard_errors"]


def _stacked(strengths: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    theta = np.asarray(strengths, dtype=float)
    totals = np.asarray(counts, dtype=float)
    single = theta.ndim == 1
    if single:
        theta, totals = theta[None], totals[None]
    if totals.ndim != 3 or totals.shape[1:] != (theta.shape[1], theta.shape[1]) or len(totals) != len(theta):
        raise ValueError(f"counts {np.shape(counts)} do not match strengths {np.shape(strengths)}")
    return theta, totals, single


def fisher_information(strengths: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The BT Fisher information (a weighted Laplacian) of each matrix of a stack.

    Parameters
    ----------
    strengths
        ``(n,)`` or ``(k, n)`` log-strengths.
    counts
        ``(n, n)`` or ``(k, n, n)`` win counts ``W[i, j]``; only ``W + W^T`` matters.
    """
    theta, wins, single = _stacked(strengths, counts)
    totals = wins + np.swapaxes(wins, 1, 2)
    p = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
    weight = totals * p * (1.0 - p)
    info = -weight
    idx = np.arange(theta.shape[1])
    info[:, idx, idx] = 0.0
    info[:, idx, idx] = weight.sum(axis=2) - weight[:, idx, idx]
    return info[0] if single else info


def posterior_covariance(strengths: np.ndarray, counts: np.ndarray, prior_precision: float) -> np.ndarray:
    """Laplace covariance ``(I + tau 1)^-1`` of the strengths (``tau`` = ``prior_precision`` > 0)."""
    if not prior_precision > 0:
        raise ValueError(f"prior_precision must be > 0, got {prior_precision!r}")
    info = fisher_information(strengths, counts)
    n = info.shape[-1]
    return np.linalg.inv(info + prior_precision * np.eye(n))


def standard_errors(strengths: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Standard errors of centred BT strengths: the square roots of ``diag(pinv(I))``.

    On a disconnected comparison graph the pseudo-inverse gives within-component errors only.
    """
    info = fisher_information(strengths, counts)
    n = info.shape[-1]
    # I + J/n has the same inverse as I on the centred subspace and is invertible when connected.
    shifted = info + 1.0 / n
    try:
        centred = np.linalg.inv(shifted) - 1.0 / n
    except np.linalg.LinAlgError:
        centred = np.linalg.pinv(shifted, hermitian=True) - 1.0 / n
    variances = np.clip(np.diagonal(centred, axis1=-2, axis2=-1), 0.0, None)
    return np.sqrt(variances)


def scale_separation_reliability(strengths: np.ndarray, errors: np.ndarray) -> np.ndarray | float:
    """SSR ``(var(theta_hat) - mean(se^2)) / var(theta_hat)`` per row (population variance).

    Negative when the estimation error exceeds the observed spread (no separation at all).
    """
    theta = np.asarray(strengths, dtype=float)
    se = np.asarray(errors, dtype=float)
    if theta.shape != se.shape:
        raise ValueError(f"strengths {theta.shape} and errors {se.shape} differ in shape")
    observed = theta.var(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ssr = (observed - (se * se).mean(axis=-1)) / observed
    return float(ssr) if np.ndim(ssr) == 0 else ssr
