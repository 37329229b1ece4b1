"""What share of QT30's arguments are political, and where does a debate stand? Estimated with the
human labels and every system's predictions (:mod:`~.ppi`).

Two estimands per system, overall and per debate:

``political_share``
    The share of arguments the human majority calls political (``judgements_maj``). Predictions:
    the system's label (P(NA) < 0.5).
``mean_position``
    The mean position of the arguments the humans call political, placed by the system (its mean
    score; arguments the system cannot place, with no valid score, are outside this estimand).
    The humans gave no positions, only the political label, so PPI corrects *which* arguments
    count, not where they sit: ``theta = E[Y pos] / E[Y]``, a ratio of two prediction-powered
    means (``lam = 1``) with the delta-method standard error ``se(PPI of Y (pos - theta)) / E[Y]``.

Scopes: ``buckets`` (the arguments E3's buckets hold, the population the sample speaks for) and,
for the share, ``kb`` (every argument with a prediction): there the unsampled arguments enter by
the system's prediction alone (``ppi``: its interval covers only the sampled part), and the
human-only row gives the bounds the sample alone allows (the unsampled arguments all apolitical,
or all political).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import pandas as pd

from argassets.political.validation.cluster_bootstrap import LEVEL
from argassets.political.validation.pointwise import NA_THRESHOLD
from argassets.political.validation.ppi import Estimate, Strata, naive_mean, stratified_mean, weighted_mean

BUCKETS = ("low", "mid", "high")
ESTIMATORS = ("ppi", "classical", "naive")
#: A debate's estimates need at least this many labelled arguments (of its buckets).
MIN_LABELLED_PER_DEBATE = 5
PPI_COLUMNS = [
    "system",
    "kind",
    "estimand",
    "scope",
    "debate",
    "estimator",
    "estimate",
    "low",
    "high",
    "se",
    "n_labelled",
    "n_population",
    "method",
]
#: What each (scope, estimator) row means, for the reader.
METHODS = {
    ("buckets", "ppi"): "PPI++ per bucket (ppi_py), combined by bucket sizes",
    ("buckets", "classical"): "human labels per bucket, combined by bucket sizes",
    ("buckets", "naive"): "system's predictions alone",
    ("debate", "ppi"): "PPI++ with design weights N_h/n_h (ppi_py)",
    ("debate", "classical"): "human labels with design weights N_h/n_h",
    ("debate", "naive"): "system's predictions alone",
    ("kb", "ppi"): "PPI over the buckets, the system's predictions elsewhere (interval: buckets only)",
    ("kb", "classical"): "bounds: the unsampled arguments all apolitical / all political",
    ("kb", "naive"): "system's predictions alone",
}


class MeanFunction(Protocol):
    """A mean over some labelled and unlabelled items by an estimator (``ppi``, ``classical``, ``naive``)."""

    def __call__(
        self, y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, estimator: str, lam: float | None
    ) -> Estimate: ...


def bucket_ranges(items: pd.DataFrame, e3_column: str = "e3_prob_na") -> dict[str, tuple[float, float]]:
    """Each sampling bucket's range of E3's P(NA), as the sample shows it (``n_type``, ``e3_column``)."""
    ranges = items.groupby("n_type")[e3_column].agg(["min", "max"])
    missing = [b for b in BUCKETS if b not in ranges.index]
    if missing:
        raise ValueError(f"the pointwise sample has no item of bucket {missing[0]!r}")
    return {b: (float(ranges.loc[b, "min"]), float(ranges.loc[b, "max"])) for b in BUCKETS}


def assign_buckets(e3_prob_na: pd.Series, ranges: dict[str, tuple[float, float]]) -> pd.Series:
    """The bucket whose range holds each argument's E3 P(NA), or ``outside`` (also without E3)."""
    bucket = pd.Series("outside", index=e3_prob_na.index, dtype=object)
    for name, (low, high) in ranges.items():
        bucket[(e3_prob_na >= low - 1e-9) & (e3_prob_na <= high + 1e-9)] = name
    return bucket


@dataclass(frozen=True)
class Sample:
    """One system's arguments as arrays: every argument it predicted (``yhat`` = P(NA) < 0.5,
    ``position``: NaN where it has no valid score, ``bucket``, ``debate``), ``labelled`` marking the
    human sample (``y``: the human majority there, NaN elsewhere) and the design weights
    ``N_h / n_h`` on the labelled ones (``w_share``; ``w_position`` over the placed ones)."""

    y: np.ndarray
    yhat: np.ndarray
    position: np.ndarray
    bucket: np.ndarray
    debate: np.ndarray
    labelled: np.ndarray
    w_share: np.ndarray
    w_position: np.ndarray

    def take(self, keep: np.ndarray) -> Sample:
        fields = {name: getattr(self, name)[keep] for name in self.__dataclass_fields__}
        return replace(self, **fields)


def _design_weights(bucket: np.ndarray, labelled: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """``N_h / n_h`` on the labelled arguments among ``counted`` (NaN elsewhere)."""
    weights = np.full(bucket.shape, np.nan)
    for name in BUCKETS:
        here = counted & (bucket == name)
        sampled = int((here & labelled).sum())
        if sampled:
            weights[here & labelled] = here.sum() / sampled
    return weights


def system_sample(items: pd.DataFrame, predictions: pd.DataFrame, arguments: pd.DataFrame) -> Sample:
    """The :class:`Sample` of one system: its predictions on ``arguments`` (the population:
    ``argument_id``, ``bucket``, ``debate``), the labelled ``items`` (``argument_id``, ``y``,
    ``bucket``, the sample's recorded one) marked. Labelled items it did not predict are left out."""
    scored = predictions.merge(arguments, on="argument_id", how="inner")
    labels = items.set_index("argument_id")
    labelled = scored["argument_id"].isin(labels.index).to_numpy()
    bucket = scored["bucket"].to_numpy(dtype=object).copy()
    bucket[labelled] = labels.loc[scored["argument_id"][labelled], "bucket"].to_numpy()
    y = np.full(len(scored), np.nan)
    y[labelled] = labels.loc[scored["argument_id"][labelled], "y"].to_numpy(float)
    position = scored["position"].to_numpy(float)
    placed = ~np.isnan(position) & np.isin(bucket, position_buckets(bucket, labelled, position))
    return Sample(
        y, (scored["prob_na"].to_numpy(float) < NA_THRESHOLD).astype(float), position, bucket,
        scored["debate"].astype(str).to_numpy(), labelled,
        _design_weights(bucket, labelled, np.ones(len(scored), dtype=bool)), _design_weights(bucket, labelled, placed),
    )  # fmt: skip


def position_buckets(bucket: np.ndarray, labelled: np.ndarray, position: np.ndarray) -> tuple[str, ...]:
    """The buckets where the system places (has a valid score for) at least two labelled arguments."""
    placed = labelled & ~np.isnan(position)
    return tuple(b for b in BUCKETS if int((placed & (bucket == b)).sum()) >= 2)


Triple = tuple[np.ndarray, np.ndarray, np.ndarray]


def ratio_estimate(
    mean: MeanFunction, numerators: Triple, denominators: Triple, estimator: str, level: float
) -> Estimate:
    """``theta = mean(numerators) / mean(denominators)`` with the delta-method interval (``lam = 1``).

    Each of ``numerators``/``denominators`` is ``(labels, predictions, unlabelled predictions)``.
    """
    top = mean(numerators[0], numerators[1], numerators[2], estimator, 1.0)
    bottom = mean(denominators[0], denominators[1], denominators[2], estimator, 1.0)
    theta = top.estimate / bottom.estimate
    y, yhat, yhat_u = (n - theta * d for n, d in zip(numerators, denominators, strict=True))
    return Estimate.normal(theta, mean(y, yhat, yhat_u, estimator, 1.0).se / abs(bottom.estimate), level)


def _mean_function(sample: Sample, weight: np.ndarray | None, level: float) -> MeanFunction:
    """Means over ``sample``: stratified by bucket (``weight`` None: the buckets' scope) or with the
    labelled arguments' design weights ``weight`` (a debate)."""
    lab = sample.labelled
    if weight is None:
        names, counts = np.unique(sample.bucket, return_counts=True)
        strata = Strata(
            sample.bucket[lab], sample.bucket[~lab], dict(zip(names.tolist(), counts.tolist(), strict=True))
        )

        def stratified(
            y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, estimator: str, lam: float | None
        ) -> Estimate:
            return stratified_mean(y, yhat, yhat_u, strata, estimator, level, lam)

        return stratified
    weights = weight[lab]

    def weighted(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, estimator: str, lam: float | None) -> Estimate:
        return weighted_mean(y, yhat, yhat_u, weights, estimator, level, lam)

    return weighted


def estimand_rows(sample: Sample, by_debate: bool, usable: tuple[str, ...], level: float = LEVEL) -> list[tuple]:
    """``(estimand, estimator, estimate, n_labelled, n_population)`` of the share and the position.

    ``sample`` holds the arguments of the scope (the buckets, or one debate's part of them);
    ``by_debate`` uses the design weights instead of the buckets' strata; the position is
    estimated over the ``usable`` buckets only (:func:`position_buckets`; none: no position rows).
    """
    lab = sample.labelled
    mean = _mean_function(sample, sample.w_share if by_debate else None, level)
    rows = []
    for estimator in ESTIMATORS:
        lam = None if estimator == "ppi" else 1.0
        estimate = mean(sample.y[lab], sample.yhat[lab], sample.yhat[~lab], estimator, lam)
        rows.append(("political_share", estimator, estimate, int(lab.sum()), lab.size))
    placed = sample.take(~np.isnan(sample.position) & np.isin(sample.bucket, usable))
    if not usable or placed.labelled.sum() < 2:
        return rows
    mean = _mean_function(placed, placed.w_position if by_debate else None, level)
    lab = placed.labelled
    y, yhat, pos = placed.y, placed.yhat, placed.position
    numerators = (y[lab] * pos[lab], yhat[lab] * pos[lab], yhat[~lab] * pos[~lab])
    denominators = (y[lab], yhat[lab], yhat[~lab])
    for estimator in ESTIMATORS:
        estimate = ratio_estimate(mean, numerators, denominators, estimator, level)
        rows.append(("mean_position", estimator, estimate, int(lab.sum()), lab.size))
    return rows


def _kb_rows(buckets: dict[str, Estimate], sample: Sample, level: float) -> list[tuple]:
    """The share over every predicted argument: the buckets by PPI (or the humans' bounds), the
    rest by the system's prediction."""
    inside = np.isin(sample.bucket, BUCKETS)
    share = inside.mean()
    ppi, classical = buckets["ppi"], buckets["classical"]
    combined = share * ppi.estimate + sample.yhat[~inside].sum() / inside.size
    bounds = Estimate(np.nan, np.nan, share * classical.low, share * classical.high + (1 - share))
    n_labelled = int(sample.labelled.sum())
    return [
        ("political_share", "ppi", Estimate.normal(combined, share * ppi.se, level), n_labelled, inside.size),
        ("political_share", "classical", bounds, n_labelled, inside.size),
        ("political_share", "naive", naive_mean(sample.yhat, level), n_labelled, inside.size),
    ]


def system_estimates(
    items: pd.DataFrame, predictions: pd.DataFrame, arguments: pd.DataFrame, level: float = LEVEL
) -> pd.DataFrame:
    """:data:`PPI_COLUMNS` (less ``system`` and ``kind``) of one system: over the buckets, the whole
    KB, and per debate (debates with fewer than :data:`MIN_LABELLED_PER_DEBATE` labelled arguments
    left out). Inputs as :func:`system_sample`; ``predictions``: ``argument_id``, ``prob_na``,
    ``position`` (NaN: no valid score)."""
    sample = system_sample(items, predictions, arguments)
    usable = position_buckets(sample.bucket, sample.labelled, sample.position)
    buckets = sample.take(np.isin(sample.bucket, BUCKETS))
    overall = estimand_rows(buckets, False, usable, level)
    shares = {estimator: e for estimand, estimator, e, _, _ in overall if estimand == "political_share"}
    rows = [("buckets", "buckets", "all", *row) for row in overall]
    rows += [("kb", "kb", "all", *row) for row in _kb_rows(shares, sample, level)]
    for debate in np.unique(buckets.debate):
        here = buckets.take(buckets.debate == debate)
        if here.labelled.sum() >= MIN_LABELLED_PER_DEBATE and (~here.labelled).any():
            rows += [("debate", "buckets", str(debate), *row) for row in estimand_rows(here, True, usable, level)]
    note = f"; position over buckets {', '.join(usable)} (the system places no two sampled arguments of the rest)"
    return pd.DataFrame(
        [
            (estimand, scope, debate, estimator, e.estimate, e.low, e.high, e.se, n_l, n_p,
             METHODS[(kind, estimator)] + (note if estimand == "mean_position" and usable != BUCKETS else ""))
            for kind, scope, debate, estimand, estimator, e, n_l, n_p in rows
        ],
        columns=PPI_COLUMNS[2:],
    )  # fmt: skip
