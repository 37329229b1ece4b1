"""Resampling for the reproduction of Study A's published figures: bootstrap intervals of the
platform's agreement metrics, per configuration and for its mean over the dimensions.

The bootstrap
-------------
Percentile intervals from ``n_bootstrap`` resamples: score metrics resample the configuration's
arguments (pairs of BT z-score and reference z-score) with replacement, label metrics resample its
comparisons (pairs of label and reference label). The BT scores themselves are not refitted per
resample: the interval is the sampling uncertainty of the metric over the corpus's arguments and
comparisons, which is what a second draw of the corpus would change; the run-to-run variation of
the judge is in ``aq_variability_report``. The ``mean`` row's interval is that of the mean over
the dimensions of the same replicate index.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from argassets.argument_quality.published import MEAN_DIMENSION
from argassets.argument_quality.scope import DIMENSIONS
from argassets.platform.pairwise.agreement import (
    LABEL_METRICS,
    SCORE_METRICS,
    kappa_from_confusion,
    krippendorff_alpha_from_confusion,
)

__all__ = ["agreement_pairs", "label_bootstrap", "metric_intervals", "score_bootstrap"]


def _stream(seed: int, key: Sequence[object]) -> np.random.Generator:
    """An independent random stream per configuration, whatever the order configurations come in."""
    return np.random.default_rng([seed, zlib.crc32("\x1f".join(str(k) for k in key).encode())])


def score_bootstrap(x: np.ndarray, y: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Replicates of Pearson, Spearman, Kendall (tau-b), MAE and RMSE from resampled pairs.

    Parameters
    ----------
    x, y
        Paired scores (pairs with a NaN are dropped first).
    n_bootstrap
        Replicates.
    rng
        The random stream.

    Returns
    -------
    dict
        ``metric -> (n_bootstrap,)`` array; a replicate whose correlation is undefined (a constant
        resample) is NaN. All NaN with fewer than two pairs.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    out = {m: np.full(n_bootstrap, np.nan) for m in SCORE_METRICS}
    if n < 2 or n_bootstrap < 1:
        return out
    draws = rng.integers(0, n, size=(n_bootstrap, n))
    xs, ys = x[draws], y[draws]
    diff = xs - ys
    out["mae"] = np.abs(diff).mean(axis=1)
    out["rmse"] = np.sqrt((diff * diff).mean(axis=1))
    out["pearson"] = _rowwise_pearson(xs, ys)
    out["spearman"] = _rowwise_pearson(stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1))
    kendall = np.full(n_bootstrap, np.nan)
    for b in range(n_bootstrap):
        if np.ptp(xs[b]) > 0 and np.ptp(ys[b]) > 0:
            kendall[b] = stats.kendalltau(xs[b], ys[b]).statistic
    out["kendall"] = kendall
    return out


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(all="ignore"):
        r = (xc * yc).sum(axis=1) / denominator
    return np.where(denominator > 0, np.clip(r, -1.0, 1.0), np.nan)


def label_bootstrap(
    a: np.ndarray, b: np.ndarray, n_bootstrap: int, rng: np.random.Generator, n_categories: int = 3
) -> dict[str, np.ndarray]:
    """Replicates of Cohen's kappa, Krippendorff's alpha and percent agreement from resampled units.

    Units where either code is negative (missing) are dropped first, as the report does.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ok = (a >= 0) & (b >= 0)
    a, b = a[ok], b[ok]
    n = len(a)
    out = {m: np.full(n_bootstrap, np.nan) for m in LABEL_METRICS}
    if n < 1 or n_bootstrap < 1:
        return out
    cell = a * n_categories + b
    draws = rng.integers(0, n, size=(n_bootstrap, n))
    flat = (np.arange(n_bootstrap)[:, None] * n_categories * n_categories + cell[draws]).ravel()
    confusion = (
        np.bincount(flat, minlength=n_bootstrap * n_categories * n_categories)
        .reshape(n_bootstrap, n_categories, n_categories)
        .astype(float)
    )
    out["cohen_kappa"] = kappa_from_confusion(confusion)
    out["krippendorff_alpha"] = krippendorff_alpha_from_confusion(confusion)
    out["percent_agreement"] = 100.0 * np.trace(confusion, axis1=1, axis2=2) / n
    return out


def metric_intervals(
    score_pairs: pd.DataFrame,
    label_pairs: pd.DataFrame,
    *,
    n_bootstrap: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Percentile bootstrap intervals of every agreement metric, per configuration and for its mean.

    Parameters
    ----------
    score_pairs
        ``model, strategy, dimension, x, y``: per argument, the configuration's BT z-score and the
        reference z-score.
    label_pairs
        ``model, strategy, dimension, a, b``: per comparison, the configuration's label code and the
        reference label code (negative = missing).
    n_bootstrap, seed, confidence
        Replicates, seed (each configuration draws from its own stream derived from it) and coverage.

    Returns
    -------
    pandas.DataFrame
        ``model, strategy, dimension, metric, ci_low, ci_high, n_bootstrap``; ``dimension = "mean"``
        rows hold the interval of the mean over the dimensions present. NaN where fewer than half
        the replicates are defined.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_bootstrap < 1:
        raise ValueError(f"n_bootstrap must be >= 1, got {n_bootstrap!r}")
    keys = ["model", "strategy", "dimension"]
    replicates: dict[tuple[str, str, str], dict[str, np.ndarray]] = {}
    for key, part in score_pairs.groupby(keys, sort=True):
        replicates.setdefault(key, {}).update(
            score_bootstrap(part["x"].to_numpy(), part["y"].to_numpy(), n_bootstrap, _stream(seed, ("score", *key)))
        )
    for key, part in label_pairs.groupby(keys, sort=True):
        replicates.setdefault(key, {}).update(
            label_bootstrap(part["a"].to_numpy(), part["b"].to_numpy(), n_bootstrap, _stream(seed, ("label", *key)))
        )
    by_config: dict[tuple[str, str], list[dict[str, np.ndarray]]] = {}
    for (model, strategy, _), values in sorted(replicates.items()):
        by_config.setdefault((model, strategy), []).append(values)
    for (model, strategy), parts in by_config.items():
        mean: dict[str, np.ndarray] = {}
        for metric in (*SCORE_METRICS, *LABEL_METRICS):
            stack = [p[metric] for p in parts if metric in p]
            if stack:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: NaN
                    mean[metric] = np.nanmean(np.vstack(stack), axis=0)
        replicates[(model, strategy, MEAN_DIMENSION)] = mean
    tail = (1.0 - confidence) / 2.0
    rows = []
    for (model, strategy, dimension), values in replicates.items():
        for metric, draws in values.items():
            finite = draws[np.isfinite(draws)]
            if len(finite) * 2 < len(draws) or not len(finite):
                low = high = np.nan
            else:
                low, high = np.quantile(finite, [tail, 1.0 - tail])
            rows.append((model, strategy, dimension, metric, float(low), float(high), int(n_bootstrap)))
    out = pd.DataFrame(rows, columns=[*keys, "metric", "ci_low", "ci_high", "n_bootstrap"])
    rank = {d: i for i, d in enumerate([*DIMENSIONS, MEAN_DIMENSION])}
    out = out.assign(_r=out["dimension"].map(rank)).sort_values(["model", "strategy", "_r", "metric"], kind="stable")
    return out.drop(columns="_r").reset_index(drop=True)


def agreement_pairs(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    reference_scores: pd.DataFrame,
    models: Sequence[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairs the agreement metrics of ``models`` are computed from, for :func:`metric_intervals`.

    Parameters
    ----------
    scores
        ``aq_bt_scores``.
    majority
        ``aq_majority_votes``.
    experts
        ``webis_expert_comparisons`` (``comparison_id, dimension, label``).
    reference_scores
        ``dimension``, argument keys and ``published_z`` (the report's reference).
    models
        The models whose configurations are wanted.

    Returns
    -------
    tuple of pandas.DataFrame
        ``(score_pairs, label_pairs)``: ``model, strategy, dimension, x, y`` (BT z-score, reference
        z-score, per argument both have) and ``model, strategy, dimension, a, b`` (label codes of
        the configuration and of the experts, per comparison).
    """
    from argassets.argument_quality.bradley_terry import ITEM_COLUMNS
    from argassets.argument_quality.voting import encode_labels

    keys = ["model", "strategy", "dimension"]
    wanted = list(models)
    mine = scores.loc[scores["model"].isin(wanted), [*keys, *ITEM_COLUMNS, "bt_z"]]
    joined = mine.merge(
        reference_scores[["dimension", *ITEM_COLUMNS, "published_z"]], on=["dimension", *ITEM_COLUMNS], how="inner"
    )
    score_pairs = joined[[*keys]].assign(
        x=joined["bt_z"].to_numpy(dtype=float), y=joined["published_z"].to_numpy(dtype=float)
    )
    labels = majority.loc[majority["model"].isin(wanted), [*keys, "comparison_id", "majority_label"]]
    expert_labels = experts[["dimension", "comparison_id", "label"]].astype({"comparison_id": str})
    labelled = labels.astype({"comparison_id": str}).merge(
        expert_labels, on=["dimension", "comparison_id"], how="inner"
    )
    label_pairs = labelled[[*keys]].assign(
        a=encode_labels(labelled["majority_label"].reset_index(drop=True)),
        b=encode_labels(labelled["label"].reset_index(drop=True)),
    )
    return score_pairs.reset_index(drop=True), label_pairs.reset_index(drop=True)
