"""Clustered intervals of Study B's validation figures: the debates resampled.

The unit resampled is the **debate** an item's argument comes from (its KB argument's episode;
an item with no KB argument is a cluster of its own): arguments of one Question Time debate share
its topics, panel and audience, so they are not independent (docs/uncertainty.md).

Pointwise: every figure is a function of per-debate confusion matrices (a system against the
human majority) or coincidence matrices (the annotators; the models among themselves), summed
under the debate weights; the ``human-model`` row is the median of its members' alphas on the
same resample. Pairwise: each ranking's Bradley-Terry strengths are those of the figure (fitted
once on the subset's pairs); a resample draws debates, the items of the drawn debates are ranked
again among themselves (mid-ranks from per-debate tables) and the figures are computed on them:
footrule, d_tau and ordinal alpha over the drawn items, macro-F1 over the pairs whose two items
were drawn. Refitting BT per resample is not done: at 12 ms per fit (batched Newton, the
development machine under load), 55 systems x 5 subsets x 2000 resamples would take about 55
minutes; so the pairwise interval says how much the figure depends on which debates the study
drew, not how noisy the votes behind each ranking are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.platform.stats.cluster_metrics import (
    classification_metrics,
    coincidence_from_value_counts,
    nominal_alpha_from_coincidence,
    weighted_tables,
)
from argassets.platform.stats.intervals import BootstrapSettings, ClusterIntervals
from argassets.platform.stats.paired import paired_bootstrap
from argassets.political.validation.evaluation import Ranking
from argassets.political.validation.pointwise import (
    agreed_political,
    agreement_partitions,
    pointwise_partitions,
    predicts_political,
    threshold_political,
)
from argassets.political.validation.ranking import ranks

__all__ = [
    "PAIRWISE_METRICS",
    "POINTWISE_METRICS",
    "UNIT",
    "Bootstrapped",
    "debate_clusters",
    "midrank_table",
    "ordinal_alpha_weighted",
    "pairwise_statistic",
    "pointwise_statistic",
    "run_bootstrap",
]

UNIT = "debate"
POINTWISE_METRICS = ("macro_f1", "micro_f1", "precision", "recall", "balanced_accuracy", "alpha_nominal")
PAIRWISE_METRICS = ("d_footrule", "d_tau", "alpha_ordinal", "macro_f1")


def debate_clusters(
    study_items: pd.DataFrame, kb_arguments: pd.DataFrame, study: str, meta_ids: Sequence[str]
) -> tuple[np.ndarray, int]:
    """Cluster code of each study item: its KB argument's debate (episode), else the item alone."""
    matched = study_items[study_items["study"] == study].drop_duplicates("meta_id").set_index("meta_id")["argument_id"]
    episode = kb_arguments.drop_duplicates("argument_id").set_index("argument_id")["episode"]
    labels = []
    for meta_id in meta_ids:
        argument = matched.get(meta_id)
        debate = episode.get(argument) if isinstance(argument, str) else None
        labels.append(f"debate {debate}" if debate is not None and pd.notna(debate) else f"item {meta_id}")
    codes, uniques = pd.factorize(pd.Series(labels))
    return np.asarray(codes, dtype=np.int64), len(uniques)


def _per_cluster(cells: np.ndarray, cluster: np.ndarray, n_clusters: int, n_cells: int) -> np.ndarray:
    return (
        np.bincount(cluster * n_cells + cells, minlength=n_clusters * n_cells)
        .reshape(n_clusters, n_cells)
        .astype(float)
    )


@dataclass(frozen=True)
class _PointwiseParts:
    """Per-debate tables of the report rows: system rows (confusion), agreement rows (coincidence), medians."""

    confusion: np.ndarray  # (clusters, system rows * 4)
    coincidence: np.ndarray  # (clusters, agreement rows * 4)
    medians: list[np.ndarray]  # per human-model row: the system-row positions of its members
    sources: list[tuple[str, int, int]]  # per output: ("system" | "agreement" | "median", position, metric)


def _members_data(
    name: str, partition_mask: np.ndarray, probabilities: Mapping[str, np.ndarray], groups: Mapping[str, Sequence[str]]
) -> np.ndarray:
    """The raters x items labels behind an ``inter-model:<group>[:threshold]`` row."""
    group, _, suffix = name.removeprefix("inter-model:").partition(":")
    rule = threshold_political if suffix == "threshold" else agreed_political
    members = [probabilities[m][partition_mask] for m in groups.get(group, ()) if m in probabilities]
    return rule(np.vstack(members))


def _value_counts(data: np.ndarray) -> np.ndarray:
    """Units x 2 counts of 0 and 1 over the raters (NaN = missing) of a raters x units matrix."""
    return np.stack([(data == 0).sum(axis=0), (data == 1).sum(axis=0)], axis=1)


def pointwise_statistic(
    items: pd.DataFrame,
    systems: Mapping[str, tuple[str, np.ndarray]],
    groups: Mapping[str, Sequence[str]],
    report: pd.DataFrame,
    cluster: np.ndarray,
    n_clusters: int,
) -> tuple[list[tuple[int, str]], _PointwiseParts]:
    """The outputs (report row, metric) with a defined figure and the tables their statistic needs."""
    masks = pointwise_partitions(items["n_type"]) | agreement_partitions(items)
    gold = items["judgements_maj"].to_numpy(dtype=int)
    labels = items[["a1_label", "a2_label", "a3_label"]].to_numpy(dtype=float).T
    probabilities = {name: np.asarray(values, dtype=float) for name, (_, values) in systems.items()}
    confusion, coincidence, medians, outputs, sources = [], [], [], [], []
    system_position: dict[tuple[str, str], int] = {}
    for row in report.itertuples():
        mask = masks[row.partition]
        defined = [m for m in POINTWISE_METRICS if np.isfinite(float(getattr(row, m)))]
        if row.system in probabilities and row.kind not in ("human", "inter-model", "human-model"):
            keep = mask & ~np.isnan(probabilities[row.system])
            predicted = predicts_political(probabilities[row.system][keep]).astype(int)
            confusion.append(_per_cluster(gold[keep] * 2 + predicted, cluster[keep], n_clusters, 4))
            system_position[(row.system, row.partition)] = len(confusion) - 1
            kind, position = "system", len(confusion) - 1
        elif row.system == "human:inter-annotator" or row.system.startswith("inter-model:"):
            data = (
                labels[:, mask]
                if row.system == "human:inter-annotator"
                else _members_data(row.system, mask, probabilities, groups)
            )
            coincidence.append(
                coincidence_from_value_counts(_value_counts(data), cluster[mask], n_clusters).reshape(n_clusters, 4)
            )
            kind, position = "agreement", len(coincidence) - 1
        elif row.system.startswith("human-model:"):
            group = row.system.removeprefix("human-model:")
            members = [
                system_position[(m, row.partition)]
                for m in groups.get(group, ())
                if (m, row.partition) in system_position
            ]
            medians.append(np.asarray(members, dtype=np.int64))
            kind, position = "median", len(medians) - 1
        else:
            continue
        for metric in defined:
            outputs.append((int(row.Index), metric))
            sources.append((kind, position, POINTWISE_METRICS.index(metric)))
    stack = lambda tables: np.concatenate(tables, axis=1) if tables else np.zeros((n_clusters, 0))  # noqa: E731
    return outputs, _PointwiseParts(stack(confusion), stack(coincidence), medians, sources)


def pointwise_values(parts: _PointwiseParts, weights: np.ndarray) -> np.ndarray:
    b = len(weights)
    confusion = weighted_tables(weights, parts.confusion).reshape(b, -1, 2, 2)
    figures = classification_metrics(confusion)
    system = np.stack([figures[m] for m in POINTWISE_METRICS])  # (metrics, B, system rows)
    agreement = nominal_alpha_from_coincidence(weighted_tables(weights, parts.coincidence).reshape(b, -1, 2, 2))
    alpha = POINTWISE_METRICS.index("alpha_nominal")
    out = np.empty((len(parts.sources), b))
    for k, (kind, position, metric) in enumerate(parts.sources):
        if kind == "system":
            out[k] = system[metric, :, position]
        elif kind == "agreement":
            out[k] = agreement[:, position]
        else:
            members = system[alpha][:, parts.medians[position]]
            with np.errstate(all="ignore"):
                out[k] = np.nanmedian(members, axis=1) if members.shape[1] else np.nan
    return out


def midrank_table(values: np.ndarray, cluster: np.ndarray, n_clusters: int) -> np.ndarray:
    """``L[c, i]`` = items of cluster ``c`` with a value below item ``i``'s, plus half those equal."""
    table = np.zeros((n_clusters, len(values)))
    for c in range(n_clusters):
        inside = np.sort(values[cluster == c])
        below = np.searchsorted(inside, values, side="left")
        table[c] = below + 0.5 * (np.searchsorted(inside, values, side="right") - below)
    return table


def ordinal_alpha_weighted(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Ordinal Krippendorff alpha of two raters' values ``(B, n)`` over units with multiplicities ``w``.

    Ordinal alpha is the interval alpha of the values' mid-ranks among all values pooled
    (Krippendorff's ordinal metric: ``delta_ck = M_k - M_c``), so
    ``alpha = 1 - (N - 1) sum_u w_u (M_a - M_b)^2 / (N sum w (M - mean)^2)`` with ``N = 2 sum w``.
    This is the general form (one pooled sort per row); the bootstrap uses
    :func:`ordinal_alpha_midranks`, equal to it on mid-ranks (tested).
    """
    n = a.shape[1]
    values = np.concatenate([a, b], axis=1)
    weight = np.concatenate([w, w], axis=1)
    order = np.argsort(values, axis=1, kind="stable")
    v = np.take_along_axis(values, order, axis=1)
    ww = np.take_along_axis(weight, order, axis=1)
    total = np.cumsum(ww, axis=1)
    starts = np.ones(v.shape, dtype=bool)
    starts[:, 1:] = v[:, 1:] != v[:, :-1]
    ends = np.ones(v.shape, dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    before = np.maximum.accumulate(np.where(starts, total - ww, -np.inf), axis=1)
    after = np.minimum.accumulate(np.where(ends, total, np.inf)[:, ::-1], axis=1)[:, ::-1]
    mid = np.empty_like(v)
    np.put_along_axis(mid, order, (before + after) / 2.0, axis=1)
    return _interval_alpha(mid[:, :n], mid[:, n:], w)


def _cdf_at(values: np.ndarray, weights: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Per row: the weight of ``values`` below each query plus half the weight equal to it.

    Values and queries are mid-ranks under integer weights, hence multiples of 1/2: a histogram on
    the half-integer grid and its running sum answer every query of a row at once (no sorting).
    """
    rows = len(values)
    at_value = np.rint(2.0 * values).astype(np.int64)
    at_query = np.rint(2.0 * queries).astype(np.int64)
    grid = int(max(at_value.max(initial=0), at_query.max(initial=0))) + 1
    offsets = np.arange(rows, dtype=np.int64)[:, None] * grid
    histogram = np.bincount((at_value + offsets).ravel(), weights=weights.ravel(), minlength=rows * grid)
    running = np.cumsum(histogram.reshape(rows, grid), axis=1).ravel()
    where = (at_query + offsets).ravel()
    return (running[where] - 0.5 * histogram[where]).reshape(queries.shape)


def ordinal_alpha_midranks(a: np.ndarray, b: np.ndarray, w: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """:func:`ordinal_alpha_weighted` for mid-ranks under integer weights (multiples of 1/2), rows in chunks.

    A value's pooled mid-rank is its own rater's mid-rank (the value itself) plus the other
    rater's weight below it (half the weight equal): :func:`_cdf_at`.
    """
    out = np.empty(len(a))
    for start in range(0, len(a), chunk):
        part = slice(start, start + chunk)
        x, y, weight = a[part], b[part], w[part]
        ma = x + _cdf_at(y, weight, x)
        mb = y + _cdf_at(x, weight, y)
        out[part] = _interval_alpha(ma, mb, weight)
    return out


def _interval_alpha(ma: np.ndarray, mb: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Interval alpha of two raters' values over units with multiplicities ``w`` (rows)."""
    pooled = 2.0 * w.sum(axis=1)
    with np.errstate(all="ignore"):
        centre = (w * (ma + mb)).sum(axis=1) / pooled
        spread = (w * ((ma - centre[:, None]) ** 2 + (mb - centre[:, None]) ** 2)).sum(axis=1)
        alpha = 1.0 - (pooled - 1.0) * (w * (ma - mb) ** 2).sum(axis=1) / (pooled * spread)
    return np.where(spread > 1e-9 * np.maximum(pooled, 1.0), alpha, np.nan)


@dataclass(frozen=True)
class _PairwiseParts:
    """Per-debate tables of every pairwise ranking, stacked (``K`` rankings, ``S`` subsets), and the outputs' sources.

    ``midranks`` ``(C, K * n)`` and ``human`` ``(C, S * n)``: mid-rank tables; ``subset_of``
    ``(K,)``: each ranking's subset; ``discordance`` ``(K, C, C)``: d_tau's weights by debate pair; ``cells`` ``(K, 4, C, C)``:
    the subset's pairs by (human majority, prediction) and the debates of their items.
    """

    item_cluster: np.ndarray
    midranks: np.ndarray
    human: np.ndarray
    subset_of: np.ndarray
    discordance: np.ndarray
    cells: np.ndarray
    sources: list[tuple[int, int]]  # per output: (ranking, metric)


def _discordance(strengths: np.ndarray, human: np.ndarray, onehot: np.ndarray) -> np.ndarray:
    """Per cluster pair: d_tau's discordance (1 for opposite order, 1/2 for a tie in one ranking only)."""
    sa = np.sign(strengths[:, None] - strengths[None, :])
    sb = np.sign(human[:, None] - human[None, :])
    weight = (sa * sb < 0) + 0.5 * ((sa == 0) != (sb == 0))
    return onehot.T @ weight @ onehot


def _pair_cells(design: object, ranking: Ranking, cluster: np.ndarray, n_clusters: int) -> np.ndarray:
    """``(4, C, C)``: the subset's pairs by (human majority, prediction) cell and the debates of their items."""
    pairs = design.subset_pairs(ranking.subset)  # type: ignore[attr-defined]
    gold = design.human["human"][pairs[:, 0], pairs[:, 1]] / design.votes_per_pair >= 0.5  # type: ignore[attr-defined]
    cell = gold.astype(np.int64) * 2 + np.asarray(ranking.predictions, dtype=np.int64)
    flat = (cell * n_clusters + cluster[pairs[:, 0]]) * n_clusters + cluster[pairs[:, 1]]
    return np.bincount(flat, minlength=4 * n_clusters * n_clusters).reshape(4, n_clusters, n_clusters).astype(float)


def pairwise_statistic(
    design: object,
    rankings: Sequence[Ranking],
    report: pd.DataFrame,
    cluster: np.ndarray,
    n_clusters: int,
) -> tuple[list[tuple[int, str]], _PairwiseParts]:
    """The outputs (report row, metric) of the pairwise report and the tables their statistic needs.

    ``report`` is :func:`~argassets.political.validation.evaluation.evaluate_pairwise` of the same
    ``rankings`` (one row each, same order); ``design`` the ``PairwiseDesign``.
    """
    onehot = np.zeros((len(cluster), n_clusters))
    onehot[np.arange(len(cluster)), cluster] = 1.0
    subsets = list(dict.fromkeys(r.subset for r in rankings))
    human_ranks = [ranks(design.human_ranks(s)[0]) for s in subsets]  # type: ignore[attr-defined]
    own = [ranks(r.strengths) for r in rankings]
    subset_of = np.array([subsets.index(r.subset) for r in rankings], dtype=np.int64)
    outputs, sources = [], []
    for k, row in enumerate(report.itertuples()):
        for m, metric in enumerate(PAIRWISE_METRICS):
            if np.isfinite(float(getattr(row, metric))):
                outputs.append((int(row.Index), metric))
                sources.append((k, m))
    stacked = lambda tables: np.concatenate(tables, axis=1) if tables else np.zeros((n_clusters, 0))  # noqa: E731
    parts = _PairwiseParts(
        cluster,
        stacked([midrank_table(r, cluster, n_clusters) for r in own]),
        stacked([midrank_table(r, cluster, n_clusters) for r in human_ranks]),
        subset_of,
        np.array([_discordance(r, human_ranks[s], onehot) for r, s in zip(own, subset_of, strict=True)]).reshape(
            len(own), n_clusters, n_clusters
        ),
        np.array([_pair_cells(design, r, cluster, n_clusters) for r in rankings]).reshape(
            len(rankings), 4, n_clusters, n_clusters
        ),
        sources,
    )
    return outputs, parts


def _quadratic_stack(weights: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """``w T_k w`` for every row of ``weights`` ``(B, C)`` and table ``(..., C, C)``: ``(B, ...)``."""
    c = weights.shape[1]
    lead = tables.shape[:-2]
    moved = np.moveaxis(tables.reshape(-1, c, c), 1, 0).reshape(c, -1)  # (C, tables * C)
    inner = (weights @ moved).reshape(len(weights), -1, c)
    return (inner * weights[:, None, :]).sum(axis=2).reshape(len(weights), *lead)


def pairwise_values(parts: _PairwiseParts, weights: np.ndarray, chunk: int = 48) -> np.ndarray:
    b, k = len(weights), len(parts.subset_of)
    w = weights[:, parts.item_cluster]
    n = w.shape[1]
    drawn = w.sum(axis=1)[:, None]
    human = (weights @ parts.human).reshape(b, -1, n)
    values = np.empty((4, b, k))
    # Rankings in chunks: arrays of (resamples, rankings, items) stay small enough for the caches.
    for start in range(0, k, chunk):
        part = slice(start, min(start + chunk, k))
        size = part.stop - part.start
        own = (weights @ parts.midranks[:, part.start * n : part.stop * n]).reshape(b, size, n)
        theirs = human[:, parts.subset_of[part]]
        with np.errstate(all="ignore"):
            values[0, :, part] = 1.0 - (w[:, None, :] * np.abs(own - theirs)).sum(axis=2) / (drawn * drawn / 2.0)
            discordant = 0.5 * _quadratic_stack(weights, parts.discordance[part])
            values[1, :, part] = 1.0 - discordant / (drawn * (drawn - 1.0) / 2.0)
            weights_k = np.broadcast_to(w[:, None, :], own.shape).reshape(b * size, n)
            alpha = ordinal_alpha_midranks(own.reshape(b * size, n), theirs.reshape(b * size, n), weights_k)
            values[2, :, part] = alpha.reshape(b, size)
            confusion = _quadratic_stack(weights, parts.cells[part]).reshape(b, size, 2, 2)
            values[3, :, part] = classification_metrics(confusion)["macro_f1"]
    return np.stack([values[m, :, r] for r, m in parts.sources]) if parts.sources else np.zeros((0, b))


@dataclass(frozen=True)
class Bootstrapped:
    """One report's bootstrap: the intervals of its outputs and the differences of its comparisons."""

    outputs: list[tuple[int, str]]
    levels: ClusterIntervals
    differences: pd.DataFrame


def run_bootstrap(
    parts: _PointwiseParts | _PairwiseParts,
    outputs: list[tuple[int, str]],
    comparisons: Sequence[tuple[tuple[int, str], tuple[int, str], tuple]],
    n_clusters: int,
    settings: BootstrapSettings,
    *,
    what: str,
    adjustment: str = "holm",
) -> Bootstrapped:
    """One paired bootstrap over the debates: every output's interval and each comparison's difference.

    ``comparisons``: ((row, metric), (reference row, metric), family label).
    """
    position = {output: k for k, output in enumerate(outputs)}
    kept = [c for c in comparisons if c[0] in position and c[1] in position]
    if len(kept) != len(comparisons):
        raise ValueError(f"{what}: a comparison names a figure without an interval")
    values = pointwise_values if isinstance(parts, _PointwiseParts) else pairwise_values
    result = paired_bootstrap(
        lambda weights: values(parts, weights),  # type: ignore[arg-type]
        n_clusters,
        [f"row {row}: {metric}" for row, metric in outputs],
        [(position[a], position[b]) for a, b, _ in comparisons],
        settings,
        what=what,
        adjustment=adjustment,
        families=[family for _, _, family in comparisons],
    )
    return Bootstrapped(outputs, result.levels, result.differences)
