"""Study B's reliability battery: how far to trust a pointwise judge, beside the pointwise human study.

Each judge's 5 repetitions per argument (a score 0-100, NA, or invalid = missing) and the
annotators' political / not political labels become per-debate sums (NA as the humans' "not
political"), and every figure of every row gets its interval from one clustered bootstrap over
the debates (:func:`~argassets.platform.stats.intervals.cluster_bootstrap`, as the validation's
intervals). Alphas come from the platform's coincidence sums (nominal: the NA call; interval: the
scores), tested against ``krippendorff``. How to read it: docs/reliability.md. No Dagster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.platform.pairwise.labels import factorize_columns
from argassets.platform.pairwise.reliability import cluster_counts
from argassets.platform.stats.cluster_metrics import (
    coincidence_from_value_counts,
    interval_alpha_from_sums,
    interval_alpha_sums,
    nominal_alpha_from_coincidence,
)
from argassets.platform.stats.intervals import DEFAULT_SETTINGS, BootstrapSettings, cluster_bootstrap
from argassets.political.validation.annotators import annotator_matrix

__all__ = [
    "BATTERY_COLUMNS",
    "BATTERY_METRICS",
    "DEFAULT_TOLERANCES",
    "FLAGGED_PROPERTY",
    "HUMANS",
    "SCOPES",
    "Answers",
    "PointwiseTolerances",
    "battery_problems",
    "flagged",
    "human_answers",
    "judge_answers",
    "pointwise_human_labels",
    "reliability_battery",
]

#: The human reference row (the pointwise study's annotators).
HUMANS = "humans"
#: ``study``: the pointwise human study's arguments (the humans' items); ``kb``: every argument answered.
SCOPES = ("study", "kb")
#: The battery's figures, in the order of the trust table.
BATTERY_METRICS: tuple[str, ...] = (
    "alpha_score",
    "alpha_na",
    "na_share",
    "na_inconsistent_share",
    "share_50",
    "share_extremes",
    "spread",
)
#: The property a metric flags (the others describe).
FLAGGED_PROPERTY = {"alpha_score": "repetition", "alpha_na": "NA", "share_50": "scale", "share_extremes": "scale"}
BATTERY_COLUMNS = [
    "system",
    "kind",
    "scope",
    "metric",
    "estimate",
    "low",
    "high",
    "interval_method",
    "n",
    "n_debates",
    "flagged",
]
#: Why the humans' score figures are missing (their labels are political or not, no score).
HUMANS_NO_SCORE = "none: the annotators label political or not, no score"
_SCORE_METRICS = ("alpha_score", "share_50", "share_extremes", "spread")


@dataclass(frozen=True)
class PointwiseTolerances:
    """How far a figure may sit from the ideal before a judge is flagged (conventions: docs/reliability.md)."""

    #: Krippendorff's lowest alpha for tentative conclusions (Krippendorff 2004).
    min_alpha: float = 0.667
    max_share_50: float = 0.5
    max_share_extremes: float = 0.5


DEFAULT_TOLERANCES = PointwiseTolerances()


@dataclass(frozen=True)
class Answers:
    """One rater set's answers per unit (an argument): ``na`` 1 NA / 0 score, ``score`` the score; NaN missing."""

    units: np.ndarray
    na: np.ndarray
    score: np.ndarray


def judge_answers(predictions: pd.DataFrame) -> dict[str, Answers]:
    """Per judge: its repetitions per argument as ``(arguments, repetitions)`` matrices (invalid = missing).

    ``predictions`` has ``judge_model, argument_id, score, is_na, is_valid`` (``political_predictions``).
    """
    if predictions.empty:
        return {}
    codes, keys = factorize_columns(predictions, ["judge_model", "argument_id"])
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(keys))
    slot = np.arange(len(codes)) - np.repeat(np.cumsum(counts) - counts, counts)
    valid = predictions["is_valid"].to_numpy(dtype=bool)[order]
    is_na = predictions["is_na"].to_numpy(dtype=bool)[order]
    score = predictions["score"].to_numpy(dtype=float)[order]
    na = np.full((len(keys), int(counts.max())), np.nan)
    scores = np.full(na.shape, np.nan)
    na[codes[order], slot] = np.where(valid, is_na.astype(float), np.nan)
    scores[codes[order], slot] = np.where(valid & ~is_na, score, np.nan)
    # ``keys`` are sorted, so each judge's arguments are one contiguous block.
    systems, starts = np.unique(keys["judge_model"].astype(str).to_numpy(), return_index=True)
    bounds = [*starts[1:], len(keys)]
    arguments = keys["argument_id"].astype(str).to_numpy()
    return {
        str(s): Answers(arguments[a:b], na[a:b], scores[a:b]) for s, a, b in zip(systems, starts, bounds, strict=True)
    }


def human_answers(labels: np.ndarray, units: Sequence[str]) -> Answers:
    """The annotators' labels ``(items, annotators)`` (1 political, 0 not, NaN missing) as answers: not political is NA."""
    labels = np.asarray(labels, dtype=float)
    return Answers(np.asarray(units, dtype=object), np.where(np.isnan(labels), np.nan, 1.0 - labels), labels * np.nan)


def pointwise_human_labels(annotations: pd.DataFrame, study_items: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """The pointwise study's labels ``(items, annotators)`` and each item's argument.

    ``annotations``: :func:`~argassets.political.human_studies.read_annotations` (``task, item,
    participant_id, label``, ...); ``study_items``: ``political_study_items``. An item matched to no
    KB argument has no debate and is left out (the release matches all 1,000).
    """
    items = study_items[(study_items["study"] == "pointwise") & study_items["argument_id"].notna()]
    items = items.drop_duplicates("meta_id")
    rows = annotations[(annotations["task"] == "pointwise") & annotations["item"].isin(items["meta_id"])]
    rows = rows.reset_index(drop=True)
    labels, _ = annotator_matrix(rows, list(items["meta_id"]))
    return labels, [str(a) for a in items["argument_id"]]


def _per_debate(answers: Answers, debate: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The per-debate sums ``(n, ...)`` every figure of one row is computed from."""
    na, score = answers.na, answers.score
    n_na, n_valid = np.nansum(na, axis=1), np.isfinite(na).sum(axis=1)
    n_political = n_valid - n_na  # a judge's scores; an annotator's "political" labels
    present = np.isfinite(score)
    n_score = present.sum(axis=1)
    filled = np.where(present, score, 0.0)
    one = np.zeros(len(debate), dtype=np.int64)

    def sums(values: np.ndarray) -> np.ndarray:
        return cluster_counts(values, one, debate, 1, n)[0]

    value_counts = np.stack([n_political, n_na], axis=1)
    return {
        "coincidence": coincidence_from_value_counts(value_counts, debate, n).reshape(n, 4),
        "interval": interval_alpha_sums(score, debate, n),
        "na_share": np.stack([sums(n_na), sums(n_valid)], axis=1),
        "na_inconsistent_share": np.stack([sums((n_na > 0) & (n_political > 0)), sums(n_valid >= 2)], axis=1),
        "share_50": np.stack([sums((score == 50).sum(axis=1)), sums(n_score)], axis=1),
        "share_extremes": np.stack([sums(((score == 0) | (score == 100)).sum(axis=1)), sums(n_score)], axis=1),
        "spread": np.stack([sums(present.sum(axis=1)), sums(filled.sum(axis=1)), sums((filled**2).sum(axis=1))], 1),
    }


def _figures(parts: dict[str, np.ndarray], weights: np.ndarray) -> np.ndarray:
    """``(metrics, rows, B)`` figures of the stacked per-debate sums ``(rows, debates, ...)`` under ``weights``."""

    def weighted(name: str) -> np.ndarray:
        return np.einsum("bc,rck->rbk", weights, parts[name])

    with np.errstate(all="ignore"):
        coincidence = weighted("coincidence")
        out = {
            "alpha_na": nominal_alpha_from_coincidence(coincidence.reshape(*coincidence.shape[:2], 2, 2)),
            "alpha_score": interval_alpha_from_sums(weighted("interval")),
        }
        for name in ("na_share", "na_inconsistent_share", "share_50", "share_extremes"):
            share = weighted(name)
            out[name] = share[..., 0] / share[..., 1]
        n, s1, s2 = np.moveaxis(weighted("spread"), -1, 0)
        out["spread"] = np.sqrt(np.maximum(s2 / n - (s1 / n) ** 2, 0.0))
    return np.stack([out[m] for m in BATTERY_METRICS])


def flagged(
    metric: np.ndarray, low: np.ndarray, high: np.ndarray, tolerances: PointwiseTolerances = DEFAULT_TOLERANCES
) -> np.ndarray:
    """Per figure: ``True`` when its whole interval lies past its tolerance (only :data:`FLAGGED_PROPERTY` flag)."""
    metric = np.asarray(metric, dtype=object)
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    with np.errstate(invalid="ignore"):
        rules = {
            "alpha_score": high < tolerances.min_alpha,
            "alpha_na": high < tolerances.min_alpha,
            "share_50": low > tolerances.max_share_50,
            "share_extremes": low > tolerances.max_share_extremes,
        }
    out = np.zeros(len(metric), dtype=bool)
    for name, rule in rules.items():
        out |= (metric == name) & rule
    return out


def _rows(judges: dict[str, Answers], humans: Answers | None, study: set[str]) -> list[tuple[str, str, str, Answers]]:
    """``(system, kind, scope, answers)`` per row: the humans first (study scope only), then each judge per scope."""
    rows = [] if humans is None else [(HUMANS, "human", "study", humans)]
    for system, answers in judges.items():
        inside = pd.Index(answers.units).isin(study)
        part = Answers(answers.units[inside], answers.na[inside], answers.score[inside])
        rows += [(system, "judge", "study", part), (system, "judge", "kb", answers)]
    return rows


def _debate_codes(units: np.ndarray, debates: pd.Series, what: str) -> np.ndarray:
    """Each unit's debate code (``debates``: argument -> code); an argument without a debate is refused."""
    codes = pd.Series(np.asarray(units, dtype=object)).map(debates)
    if codes.isna().any():
        missing = units[int(np.flatnonzero(codes.isna().to_numpy())[0])]
        raise ValueError(f"{what}: argument {missing!r} has no debate in political_kb_arguments")
    return codes.to_numpy(dtype=np.int64)


def reliability_battery(
    predictions: pd.DataFrame,
    debates: pd.Series,
    study_arguments: Sequence[str],
    human_labels: np.ndarray | None = None,
    human_arguments: Sequence[str] = (),
    settings: BootstrapSettings = DEFAULT_SETTINGS,
    tolerances: PointwiseTolerances = DEFAULT_TOLERANCES,
) -> pd.DataFrame:
    """The battery per (system, scope, metric), the humans' row first, in long format (:data:`BATTERY_COLUMNS`).

    ``predictions``: ``political_predictions`` (``judge_model, argument_id, score, is_na, is_valid``);
    ``debates``: argument id -> debate (the clusters); ``study_arguments``: the pointwise human
    study's arguments (scope ``study``); ``human_labels`` ``(items, annotators)`` 1 political, 0
    not, NaN missing, the items' arguments ``human_arguments``. A figure that cannot be measured has
    no estimate and says why; ``flagged`` marks an interval wholly past its tolerance (:func:`flagged`).
    """
    codes, names = pd.factorize(pd.Series(debates.to_numpy(dtype=object)))
    debate_code = pd.Series(codes, index=debates.index.astype(str))
    n = len(names)
    humans = None if human_labels is None else human_answers(human_labels, human_arguments)
    rows = _rows(judge_answers(predictions), humans, {str(a) for a in study_arguments})
    tables = [_per_debate(a, _debate_codes(a.units, debate_code, f"{s} ({scope})"), n) for s, _, scope, a in rows]
    parts = {name: np.stack([t[name] for t in tables]) for name in tables[0]} if tables else {}
    keys = [(s, k, scope, m) for m in BATTERY_METRICS for s, k, scope, _ in rows]
    if not keys:
        return pd.DataFrame(columns=BATTERY_COLUMNS)
    intervals = cluster_bootstrap(
        lambda w: _figures(parts, w).reshape(len(keys), len(w)),
        n,
        ["/".join(k) for k in keys],
        settings,
        what="political reliability battery",
    )
    frame = intervals.frame()
    frame[["system", "kind", "scope", "metric"]] = pd.DataFrame(keys, index=frame.index)
    return _finish(frame, parts, tolerances)


def _finish(frame: pd.DataFrame, parts: dict[str, np.ndarray], tolerances: PointwiseTolerances) -> pd.DataFrame:
    """Sample sizes, the ranges' clipping, the humans' unmeasurable figures and the flags."""
    # The values each figure rests on, per (row, debate): pairable values, answers, scores.
    size: dict[str, np.ndarray] = {
        "alpha_score": parts["interval"][..., 0],
        "alpha_na": parts["coincidence"].sum(axis=-1),
        "spread": parts["spread"][..., 0],
    }
    per_metric = [size[m] if m in size else parts[m][..., 1] for m in BATTERY_METRICS]
    frame["n"] = np.concatenate([p.sum(axis=1) for p in per_metric]).astype(np.int64)
    frame["n_debates"] = np.concatenate([(p > 0).sum(axis=1) for p in per_metric]).astype(np.int64)
    # The small-cluster widening can reach past a figure's range; the range bounds the interval.
    upper = np.where(frame["metric"] == "spread", np.inf, 1.0)
    lower = np.where(frame["metric"].str.startswith("alpha"), -np.inf, 0.0)
    frame["low"] = np.maximum(frame["low"].to_numpy(dtype=float), lower)
    frame["high"] = np.minimum(frame["high"].to_numpy(dtype=float), upper)
    unmeasured = (frame["kind"] == "human") & frame["metric"].isin(_SCORE_METRICS)
    frame.loc[unmeasured, "interval_method"] = HUMANS_NO_SCORE
    frame["flagged"] = flagged(
        frame["metric"].to_numpy(), frame["low"].to_numpy(), frame["high"].to_numpy(), tolerances
    )
    return frame[BATTERY_COLUMNS].reset_index(drop=True)


def battery_problems(battery: pd.DataFrame, systems: Sequence[str]) -> pd.DataFrame:
    """Rows that break the battery's promises: a missing (system, scope, metric), a figure outside its interval or range.

    Every system of ``systems`` has every metric in both scopes, the humans every metric in
    ``study`` with a measured alpha of the NA call; estimates lie in their intervals and ranges.
    """
    expected = [(HUMANS, "study")] + [(str(s), scope) for s in systems for scope in SCOPES]
    have = set(zip(battery["system"], battery["scope"], battery["metric"], strict=True))
    problems = [
        {"system": s, "scope": scope, "metric": m, "problem": "missing"}
        for s, scope in expected
        for m in BATTERY_METRICS
        if (s, scope, m) not in have
    ]
    value, low, high = (battery[c].to_numpy(dtype=float) for c in ("estimate", "low", "high"))
    metric = battery["metric"].to_numpy(dtype=object)
    upper = np.where(metric == "spread", np.inf, 1.0)
    lower = np.where(np.char.startswith(metric.astype(str), "alpha"), -np.inf, 0.0)
    with np.errstate(invalid="ignore"):
        bad = (value < lower) | (value > upper) | (low > value + 1e-12) | (high < value - 1e-12)
    humans_alpha = ((battery["system"] == HUMANS) & (battery["metric"] == "alpha_na")).to_numpy()
    unmeasured = humans_alpha & ~np.isfinite(value)
    for i in np.flatnonzero(bad | unmeasured):
        row = battery.iloc[int(i)]
        what = (
            "humans' alpha not measured"
            if unmeasured[i]
            else f"{row['estimate']} outside [{row['low']}, {row['high']}] or its range"
        )
        problems.append({c: row[c] for c in ("system", "scope", "metric")} | {"problem": what})
    return pd.DataFrame(problems, columns=["system", "scope", "metric", "problem"])
