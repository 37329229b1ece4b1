"""Adaptive pairwise judging: which pairs to judge next, and when to stop.

A partition's comparison graph (every candidate pair, in groups such as topics; Bradley-Terry is
fitted per group) is judged in rounds. A round is a list of pair ids. :func:`plan_round` takes the
candidates and every judgment so far (with the round it was judged in) and returns the next
round, or the decision to stop with its reason. It keeps no state: the same inputs and seed give
the same round, so a judging step can cache each round's judgments and resume anywhere.

Round 0
    Covers the graph: every item gets ``cover`` pairs where its candidates allow (pairs taken in
    a seeded random order), then random pairs up to ``first_round`` of the candidates.

Later rounds (expected information gain)
    The strengths are fitted on all judgments (the platform's BT fit, ``BTSettings``) and their
    Laplace posterior covariance ``Sigma`` is taken from the Fisher information plus a Gaussian
    prior of precision ``prior_precision``. A candidate pair (i, j) not yet judged is scored by the
    information its outcome carries about the strengths under that Gaussian approximation,
    ``0.5 log(1 + p (1 - p) v)``, with ``p`` the predicted probability that i wins and ``v`` the
    posterior variance of ``theta_i - theta_j`` (the D-optimal increment; ASAP, Mikhailiuk et
    al. 2020, use the same quantity from a TrueSkill posterior). Pairs are taken by decreasing
    gain, each item at most once per pass, then at most twice, ... (a batch spread over the items
    rather than piled on the most uncertain one), up to ``round_size`` of the candidates.

``selection = "random"`` takes every round uniformly at random instead (the control, and the
calibrated choice for noisy judges: see docs/study_design.md).

Stopping (checked before each round from round 2 on)
    ``rank_stable``: Spearman's rho between the strengths now and those of the latest earlier
    round that held at most ``1 - stability_lag`` of the judged pairs is at least ``stability``
    (a lag, because consecutive small rounds always agree); ``predicted_agreement``: the rho with
    the complete partition predicted from a split-half reliability of the judged pairs and
    Spearman-Brown (:func:`_predicted_agreement`) is at least ``agreement``; ``interval_width``:
    the mean width of the items' 95% posterior intervals is at most ``interval_width``;
    ``budget``: ``max_share`` of the candidates is judged; ``exhausted``: no candidate is left.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from argassets.platform.design.information import posterior_covariance
from argassets.platform.pairwise.bradley_terry import fit_strengths
from argassets.platform.pairwise.labels import encode_labels
from argassets.platform.pairwise.matrices import count_matrices
from argassets.platform.pairwise.scores import DEFAULT_SETTINGS, BTSettings

__all__ = ["AdaptiveSettings", "ComparisonGraph", "RoundPlan", "plan_round", "round_scores"]

CANDIDATE_COLUMNS = ["pair_id", "group", "item_a", "item_b"]
JUDGED_COLUMNS = ["pair_id", "round", "label"]

#: How rounds are chosen: by expected information gain, or uniformly at random (the control).
SELECTIONS: tuple[str, ...] = ("information", "random")

#: Largest group: posterior covariances are dense per group.
MAX_GROUP_ITEMS = 2000

_Z95 = 1.959963984540054


@dataclass(frozen=True)
class AdaptiveSettings:
    """How rounds are chosen and when judging stops (shares are of the candidate pairs)."""

    selection: str = "information"
    first_round: float = 0.1
    round_size: float = 0.05
    cover: int = 1
    prior_precision: float = 0.05
    stability: float | None = 0.99
    stability_lag: float = 0.25
    interval_width: float | None = None
    agreement: float | None = None
    max_share: float = 1.0
    seed: int = 0
    bt: BTSettings = field(default=DEFAULT_SETTINGS)

    def __post_init__(self) -> None:
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        for name in ("first_round", "round_size", "max_share"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise ValueError(f"{name} must be a share in (0, 1], got {value!r}")
        if not 0 < self.stability_lag < 1:
            raise ValueError(f"stability_lag must be a share in (0, 1), got {self.stability_lag!r}")
        if self.cover < 0:
            raise ValueError(f"cover must be >= 0, got {self.cover!r}")
        if not self.prior_precision > 0:
            raise ValueError(f"prior_precision must be > 0, got {self.prior_precision!r}")
        for name in ("stability", "agreement"):
            value = getattr(self, name)
            if value is not None and not -1 <= value <= 1:
                raise ValueError(f"{name} must be a correlation in [-1, 1], got {value!r}")


@dataclass(frozen=True)
class RoundPlan:
    """The next round (``pair_ids``), or ``stop`` with its ``reason``, and where judging stands."""

    round: int
    pair_ids: tuple[Hashable, ...]
    stop: bool
    reason: str
    judged_pairs: int
    candidate_pairs: int
    stability: float
    interval_width: float
    predicted_agreement: float

    @property
    def share_judged(self) -> float:
        return self.judged_pairs / self.candidate_pairs if self.candidate_pairs else math.nan


@dataclass(frozen=True)
class ComparisonGraph:
    """Candidate pairs as arrays: group code and in-group item index of both sides, padded to ``width``."""

    pair_ids: np.ndarray
    group: np.ndarray
    item_a: np.ndarray
    item_b: np.ndarray
    n_groups: int
    width: int
    items: pd.DataFrame  # group, item, index (in-group), gcode

    @classmethod
    def build(cls, candidates: pd.DataFrame) -> ComparisonGraph:
        """Check and code the candidates (``pair_id``, ``group``, ``item_a``, ``item_b``)."""
        missing = [c for c in CANDIDATE_COLUMNS if c not in candidates.columns]
        if missing:
            raise ValueError(f"candidates have no column(s) {missing}")
        repeated = candidates["pair_id"][candidates["pair_id"].duplicated()]
        if len(repeated):
            raise ValueError(f"candidates: pair_id {repeated.iloc[0]!r} occurs twice")
        self_pairs = candidates[candidates["item_a"] == candidates["item_b"]]
        if len(self_pairs):
            raise ValueError(f"candidates: pair {self_pairs['pair_id'].iloc[0]!r} compares an item with itself")
        sides = pd.concat(
            [
                candidates[["group", "item_a"]].set_axis(["group", "item"], axis=1),
                candidates[["group", "item_b"]].set_axis(["group", "item"], axis=1),
            ]
        ).drop_duplicates()
        items = sides.sort_values(["group", "item"], kind="stable").reset_index(drop=True)
        items["gcode"] = pd.factorize(items["group"], sort=True)[0]
        items["index"] = items.groupby("gcode").cumcount()
        width = int(items["index"].max()) + 1 if len(items) else 0
        if width > MAX_GROUP_ITEMS:
            raise ValueError(f"a group has {width} items; at most {MAX_GROUP_ITEMS} are supported")
        keys = pd.MultiIndex.from_frame(items[["group", "item"]])
        a = keys.get_indexer(pd.MultiIndex.from_arrays([candidates["group"], candidates["item_a"]]))
        b = keys.get_indexer(pd.MultiIndex.from_arrays([candidates["group"], candidates["item_b"]]))
        gcode, index = items["gcode"].to_numpy(np.int64), items["index"].to_numpy(np.int64)
        return cls(
            pair_ids=candidates["pair_id"].to_numpy(),
            group=gcode[a],
            item_a=index[a],
            item_b=index[b],
            n_groups=int(items["gcode"].max()) + 1 if len(items) else 0,
            width=width,
            items=items,
        )

    def positions(self, judged: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidate position, round and label code of every judgment; errors name the row."""
        missing = [c for c in JUDGED_COLUMNS if c not in judged.columns]
        if missing:
            raise ValueError(f"judged has no column(s) {missing}")
        position = pd.Index(self.pair_ids).get_indexer(judged["pair_id"])
        if (position < 0).any():
            row = int(np.flatnonzero(position < 0)[0])
            raise ValueError(f"judged row {row}: pair {judged['pair_id'].iloc[row]!r} is not a candidate")
        rounds = pd.to_numeric(judged["round"], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(rounds) | (rounds < 0) | (rounds != np.round(rounds))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"judged row {row}: round {judged['round'].tolist()[row]!r} is not an integer >= 0")
        return position, rounds.astype(np.int64), encode_labels(judged["label"])


def _strengths(
    graph: ComparisonGraph, position: np.ndarray, codes: np.ndarray, bt: BTSettings
) -> tuple[np.ndarray, np.ndarray]:
    """BT strengths per group ``(n_groups, width)`` and the count matrices they come from."""
    counts = count_matrices(
        graph.width,
        graph.group[position],
        graph.n_groups,
        graph.item_a[position],
        graph.item_b[position],
        codes,
        bt.ties,
    )
    theta = fit_strengths(counts, bt.alpha, engine=bt.engine, max_iter=bt.max_iter, tol=bt.tol)
    return theta, counts


def _item_vector(graph: ComparisonGraph, per_group: np.ndarray) -> np.ndarray:
    """The value of every real item (padding dropped), in ``graph.items`` order."""
    return per_group[graph.items["gcode"].to_numpy(), graph.items["index"].to_numpy()]


def round_scores(
    candidates: pd.DataFrame, judged: pd.DataFrame, settings: AdaptiveSettings = AdaptiveSettings()
) -> pd.DataFrame:
    """Every item's BT strength (centred per group) and 95% posterior interval after ``judged``.

    Returns ``group, item, strength, interval_width, n_judgments``.
    """
    graph = ComparisonGraph.build(candidates)
    position, _, codes = graph.positions(judged)
    with threadpool_limits(limits=1, user_api="blas"):
        theta, counts = _strengths(graph, position, codes, settings.bt)
        sd = np.sqrt(np.diagonal(posterior_covariance(theta, counts, settings.prior_precision), axis1=1, axis2=2))
    n = np.zeros((graph.n_groups, graph.width))
    np.add.at(n, (graph.group[position], graph.item_a[position]), 1)
    np.add.at(n, (graph.group[position], graph.item_b[position]), 1)
    return pd.DataFrame(
        {
            "group": graph.items["group"].to_numpy(),
            "item": graph.items["item"].to_numpy(),
            "strength": _item_vector(graph, theta),
            "interval_width": 2 * _Z95 * _item_vector(graph, sd),
            "n_judgments": _item_vector(graph, n).astype(np.int64),
        }
    )


def _cover_round(graph: ComparisonGraph, size: int, cover: int, rng: np.random.Generator) -> list[int]:
    """Round 0: every item ``cover`` pairs where possible, then random pairs up to ``size``."""
    order = rng.permutation(len(graph.pair_ids))
    used = np.zeros((graph.n_groups, graph.width), dtype=np.int64)
    chosen: list[int] = []
    rest: list[int] = []
    for k in order.tolist():
        g, a, b = graph.group[k], graph.item_a[k], graph.item_b[k]
        if used[g, a] < cover or used[g, b] < cover:
            chosen.append(k)
            used[g, a] += 1
            used[g, b] += 1
        else:
            rest.append(k)
    return chosen + rest[: max(0, size - len(chosen))]


def _spread_batch(graph: ComparisonGraph, ranked: np.ndarray, size: int) -> list[int]:
    """Take ``ranked`` candidates in order, each item at most once per pass, until ``size``."""
    used = np.zeros((graph.n_groups, graph.width), dtype=np.int64)
    chosen: list[int] = []
    left = list(ranked)
    passes = 0
    while left and len(chosen) < size:
        passes += 1
        remaining = []
        for k in left:
            g, a, b = graph.group[k], graph.item_a[k], graph.item_b[k]
            if len(chosen) < size and used[g, a] < passes and used[g, b] < passes:
                chosen.append(int(k))
                used[g, a] += 1
                used[g, b] += 1
            else:
                remaining.append(k)
        left = remaining
    return chosen


def _information_round(
    graph: ComparisonGraph,
    judged: np.ndarray,
    theta: np.ndarray,
    sigma: np.ndarray,
    size: int,
    rng: np.random.Generator,
) -> list[int]:
    """The next round by expected information gain (module docstring)."""
    open_pairs = np.flatnonzero(~judged)
    g, a, b = graph.group[open_pairs], graph.item_a[open_pairs], graph.item_b[open_pairs]
    p = 1.0 / (1.0 + np.exp(theta[g, b] - theta[g, a]))
    variance = sigma[g, a, a] + sigma[g, b, b] - 2.0 * sigma[g, a, b]
    gain = 0.5 * np.log1p(p * (1.0 - p) * variance)
    # Seeded tie-breaking far below any real difference in gain.
    ranked = open_pairs[np.lexsort((rng.random(len(open_pairs)), -gain))]
    return _spread_batch(graph, ranked, size)


def _earlier_rounds(rounds: np.ndarray, position: np.ndarray, lag: float) -> np.ndarray:
    """The judgments of the latest earlier state holding at most ``1 - lag`` of the judged pairs
    (at least one round back)."""
    last = int(rounds.max())
    pairs_by = {r: len(np.unique(position[rounds <= r])) for r in range(last)}
    allowed = (1.0 - lag) * len(np.unique(position))
    fits = [r for r, n in pairs_by.items() if n <= allowed]
    return rounds <= (max(fits) if fits else 0)


def _predicted_agreement(
    graph: ComparisonGraph, position: np.ndarray, codes: np.ndarray, bt: BTSettings, rng: np.random.Generator
) -> float:
    """Predicted Spearman rho between the strengths now and those of the complete partition.

    The judged pairs are split at random into two halves; the rho between the halves' strengths is
    the reliability of half the data, Spearman-Brown gives the reliability ``R_n`` of all judged
    pairs and ``R_N`` of every candidate judged alike, and an estimate that holds a part of the
    complete data correlates with the complete estimate by ``sqrt(R_n / R_N)``.
    """
    pairs = np.unique(position)
    if len(pairs) < 4:
        return math.nan
    half = set(rng.permutation(pairs)[: len(pairs) // 2].tolist())
    first = np.fromiter((p in half for p in position), dtype=bool, count=len(position))
    a, _ = _strengths(graph, position[first], codes[first], bt)
    b, _ = _strengths(graph, position[~first], codes[~first], bt)
    r_half = max(_spearman(_item_vector(graph, a), _item_vector(graph, b)), 0.0)
    r_n = 2 * r_half / (1 + r_half)
    k = len(graph.pair_ids) / len(pairs)
    r_all = k * r_n / (1 + (k - 1) * r_n)
    return math.sqrt(r_n / r_all) if r_all > 0 else 0.0


def _stop_reason(plan: dict, settings: AdaptiveSettings, budget_left: int, open_left: int) -> str:
    if open_left == 0:
        return "exhausted"
    if budget_left <= 0:
        return "budget"
    if settings.stability is not None and plan["stability"] >= settings.stability:
        return "rank_stable"
    if settings.interval_width is not None and plan["interval_width"] <= settings.interval_width:
        return "interval_width"
    if settings.agreement is not None and plan["predicted_agreement"] >= settings.agreement:
        return "predicted_agreement"
    return ""


@dataclass
class _Assessment:
    """Where judging stands: the fitted strengths, their posterior covariance, the stopping figures."""

    theta: np.ndarray
    sigma: np.ndarray
    figures: dict[str, float]


def _assess(
    graph: ComparisonGraph,
    position: np.ndarray,
    rounds: np.ndarray,
    codes: np.ndarray,
    settings: AdaptiveSettings,
    rng: np.random.Generator,
) -> _Assessment:
    """Fit the judgments so far and compute every figure a stopping rule reads."""
    theta, counts = _strengths(graph, position, codes, settings.bt)
    sigma = posterior_covariance(theta, counts, settings.prior_precision)
    sd = np.sqrt(np.diagonal(sigma, axis1=1, axis2=2))
    figures = {
        "interval_width": float(np.mean(2 * _Z95 * _item_vector(graph, sd))),
        "predicted_agreement": _predicted_agreement(graph, position, codes, settings.bt, rng),
        "stability": math.nan,
    }
    if int(rounds.max()) >= 1:
        before = _earlier_rounds(rounds, position, settings.stability_lag)
        previous, _ = _strengths(graph, position[before], codes[before], settings.bt)
        figures["stability"] = _spearman(_item_vector(graph, previous), _item_vector(graph, theta))
    return _Assessment(theta, sigma, figures)


def _choose(
    graph: ComparisonGraph,
    is_judged: np.ndarray,
    assessed: _Assessment | None,
    size: int,
    settings: AdaptiveSettings,
    rng: np.random.Generator,
) -> list[int]:
    """The pairs of the next round: random, round 0's cover, or by information gain."""
    if settings.selection == "random":
        return rng.permutation(np.flatnonzero(~is_judged))[:size].tolist()
    if assessed is None:
        return _cover_round(graph, size, settings.cover, rng)
    return _information_round(graph, is_judged, assessed.theta, assessed.sigma, size, rng)


def plan_round(
    candidates: pd.DataFrame, judged: pd.DataFrame, settings: AdaptiveSettings = AdaptiveSettings()
) -> RoundPlan:
    """The next round of pairs to judge, or the decision to stop (module docstring).

    Parameters
    ----------
    candidates
        The partition's comparison graph: ``pair_id`` (unique), ``group`` (BT is fitted per
        group, e.g. a topic), ``item_a``, ``item_b``.
    judged
        Every judgment so far: ``pair_id``, ``round`` (0, 1, ...), ``label`` (``A``, ``B``,
        ``Tie``, or missing for an invalid answer); a pair may have several judgments (runs).
    settings
        :class:`AdaptiveSettings`.
    """
    graph = ComparisonGraph.build(candidates)
    position, rounds, codes = graph.positions(judged)
    total = len(graph.pair_ids)
    is_judged = np.zeros(total, dtype=bool)
    is_judged[position] = True
    next_round = int(rounds.max()) + 1 if len(rounds) else 0
    rng = np.random.default_rng([settings.seed, next_round])
    budget_left = math.floor(settings.max_share * total + 1e-9) - int(is_judged.sum())
    open_left = int((~is_judged).sum())
    with threadpool_limits(limits=1, user_api="blas"):
        assessed = _assess(graph, position, rounds, codes, settings, rng) if next_round > 0 else None
        figures = (
            assessed.figures
            if assessed
            else dict.fromkeys(("stability", "interval_width", "predicted_agreement"), math.nan)
        )
        reason = _stop_reason(figures, settings, budget_left, open_left) if next_round >= 2 else ""
        if not reason and (open_left == 0 or budget_left <= 0):
            reason = "exhausted" if open_left == 0 else "budget"
        chosen: list[int] = []
        if not reason:
            size = math.ceil((settings.first_round if next_round == 0 else settings.round_size) * total)
            chosen = _choose(graph, is_judged, assessed, min(size, budget_left), settings, rng)[:budget_left]
    return RoundPlan(
        round=next_round,
        pair_ids=tuple(graph.pair_ids[chosen].tolist()),
        stop=bool(reason),
        reason=reason,
        judged_pairs=int(is_judged.sum()),
        candidate_pairs=total,
        **figures,
    )


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (scipy.stats imported here: every CLI start imports this module)."""
    from scipy.stats import spearmanr

    return float(spearmanr(a, b)[0])
