"""Can a system replace a human annotator? The Alternative Annotator Test and its item-level form.

Both compare, with one annotator held out, how well the system and the held-out annotator agree
with the *remaining* annotators of an item (Calderon, Reichart and Dror 2025, "The Alternative
Annotator Test for LLM-as-a-Judge"). With the accuracy alignment of a discrete label, the
system's score on item ``i`` with annotator ``j`` held out is ``S_f = mean_k 1[f_i = h_ki]`` over
the other annotators ``k`` of the item, the annotator's ``S_h = mean_k 1[h_ji = h_ki]``; the
indicators ``W_f = 1[S_f >= S_h]`` and ``W_h = 1[S_h >= S_f]`` say who represents the rest at
least as well (a tie counts for both).

:func:`alternative_annotator_test` is the published procedure: per annotator with enough items,
a one-sided one-sample t-test of ``d = W_h - W_f`` against ``epsilon`` (H1: ``mean d < epsilon``,
i.e. the system's advantage probability exceeds the annotator's minus ``epsilon``), the
Benjamini-Yekutieli adjustment over the annotators, and the winning rate ``omega`` (share of
annotators whose null is rejected); the system passes when ``omega >= 0.5``.

:func:`held_out_rows` and :func:`replacement_table` give the item-level form used where each
annotator has too few items for a per-annotator test (5 or 6 here; the paper asks for 30): the
same indicators pooled over every (item, held-out annotator), a clustered one-sided bound on
``rho_h - rho_f`` (the mean of ``d``), and a verdict per margin: the system can replace *an
annotator drawn at random* at margin ``epsilon`` when that bound lies below ``epsilon``.
docs/human_replacement.md gives the reasons.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from argassets.political.validation.cluster_bootstrap import LEVEL, N_RESAMPLES, SEED, RatioIntervals
from argassets.political.validation.clustered import Clustering, clustered_intervals

#: The margins swept (the paper suggests 0.1 for crowd-workers, 0.15 skilled, 0.2 experts).
EPSILONS: tuple[float, ...] = (0.05, 0.10, 0.15, 0.20, 0.25, 0.30)
#: The paper's minimum number of items per annotator for its t-test, and its FDR level.
MIN_ITEMS_PER_ANNOTATOR = 30
FDR_Q = 0.05


@dataclass(frozen=True)
class AltTestResult:
    """The published procedure's outcome: ``winning_rate`` (omega), ``advantage_probability`` (rho,
    the mean over tested annotators of the system's ``mean W_f``), ``passed`` (omega >= 0.5), and
    per tested annotator its p-value and whether its null was rejected."""

    winning_rate: float
    advantage_probability: float
    passed: bool
    annotators: tuple[str, ...]
    p_values: np.ndarray
    rejected: np.ndarray


def _paper_p_value(differences: np.ndarray, epsilon: float) -> float:
    """One-sided one-sample t-test of mean(d) < epsilon. A constant ``d`` leaves t undefined: the
    published code gets NaN there, which its Benjamini-Yekutieli step never rejects; 1.0 does the same."""
    if np.ptp(differences) == 0:
        return 1.0
    return float(stats.ttest_1samp(differences, epsilon, alternative="less").pvalue)


def alternative_annotator_test(
    annotations: pd.DataFrame,
    predictions: Mapping[str, int],
    epsilon: float,
    q: float = FDR_Q,
    min_items: int = MIN_ITEMS_PER_ANNOTATOR,
) -> AltTestResult:
    """The Alternative Annotator Test with the accuracy alignment.

    Parameters
    ----------
    annotations
        ``item``, ``participant_id``, ``label`` (one row per label).
    predictions
        The system's label per item.
    epsilon, q, min_items
        The margin, the Benjamini-Yekutieli FDR level, and the fewest items an annotator needs to
        be tested (annotators with fewer are left out, as in the paper's code).

    Raises
    ------
    ValueError
        No annotator with ``min_items`` items that the system labelled and that another annotator
        labelled too (the test does not apply; the message says how many items the largest has).
    """
    rows = annotations[annotations["item"].isin(set(predictions))]
    others = rows.groupby("item")["participant_id"].transform("size") >= 2
    rows = rows[others]
    by_item = {item: dict(zip(g["participant_id"], g["label"], strict=True)) for item, g in rows.groupby("item")}
    tested, p_values, advantages = [], [], []
    for annotator, own in rows.groupby("participant_id", sort=True):
        if len(own) < min_items:
            continue
        w_f, w_h = [], []
        for item, label in zip(own["item"], own["label"], strict=True):
            rest = [v for k, v in by_item[item].items() if k != annotator]
            s_h = float(np.mean([label == v for v in rest]))
            s_f = float(np.mean([predictions[item] == v for v in rest]))
            w_f.append(1.0 if s_f >= s_h else 0.0)
            w_h.append(1.0 if s_h >= s_f else 0.0)
        tested.append(str(annotator))
        p_values.append(_paper_p_value(np.subtract(w_h, w_f), epsilon))
        advantages.append(float(np.mean(w_f)))
    if not tested:
        largest = int(rows.groupby("participant_id").size().max()) if len(rows) else 0
        raise ValueError(
            f"alternative_annotator_test: no annotator has {min_items} items (the largest has {largest}); "
            "use the item-level test (held_out_rows)"
        )
    rejected = multipletests(p_values, alpha=q, method="fdr_by")[0]
    omega = float(np.mean(rejected))
    return AltTestResult(omega, float(np.mean(advantages)), omega >= 0.5, tuple(tested), np.array(p_values), rejected)


def annotator_matrix(annotations: pd.DataFrame, items: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The labels as ``(items, slots)`` (NaN where an item has fewer annotators than the widest), and
    the row of ``annotations`` behind each cell (-1 where empty), items in ``items`` order.

    Raises
    ------
    ValueError
        An item of ``items`` with fewer than two annotators (nobody remains to compare with), or an
        annotation of an item outside ``items``; the message names the item, file, row and participant.
    """
    position = {item: i for i, item in enumerate(items)}
    outside = annotations[~annotations["item"].isin(position)]
    if len(outside):
        raise ValueError(f"{_where(outside.iloc[0])}: item {outside['item'].iloc[0]!r} is not an item of the task")
    codes = annotations["item"].map(position).to_numpy()
    counts = np.bincount(codes, minlength=len(items))
    thin = np.flatnonzero(counts < 2)
    if thin.size:
        item = items[int(thin[0])]
        found = annotations[annotations["item"] == item]
        where = _where(found.iloc[0]) if len(found) else "no annotation"
        raise ValueError(
            f"item {item!r} has {int(counts[thin[0]])} annotator(s) ({where}); leaving one out needs at least two"
        )
    order = np.argsort(codes, kind="stable")
    slot = np.arange(len(codes)) - np.repeat(np.cumsum(counts) - counts, counts)
    labels = np.full((len(items), int(counts.max())), np.nan)
    source_rows = np.full(labels.shape, -1, dtype=np.int64)
    labels[codes[order], slot] = annotations["label"].to_numpy(dtype=float)[order]
    source_rows[codes[order], slot] = order
    return labels, source_rows


def _where(record: pd.Series) -> str:
    """``file data row N, participant P`` of an annotation row (as much as it carries)."""
    parts = []
    if "source" in record and "row" in record:
        parts.append(f"{record['source']} data row {record['row']}")
    if "participant_id" in record:
        parts.append(f"participant {record['participant_id']!r}")
    return ", ".join(parts) or "annotation"


@dataclass(frozen=True)
class HeldOutRows:
    """One row per (item, held-out annotator): ``item`` (index into the items), ``s_h`` (the
    annotator's agreement with the rest) and, per system (rows of the arrays), ``s_f``, ``w_f``,
    ``w_h`` and ``present`` (the system labelled the item)."""

    item: np.ndarray
    s_h: np.ndarray
    s_f: np.ndarray
    w_f: np.ndarray
    w_h: np.ndarray
    present: np.ndarray


def held_out_rows(labels: np.ndarray, predictions: np.ndarray) -> HeldOutRows:
    """The alignment scores and indicators of every (item, held-out annotator) for every system.

    ``labels`` is :func:`annotator_matrix`'s ``(items, slots)``; ``predictions`` is
    ``(systems, items)``, NaN where a system has no label for the item.
    """
    labels = np.asarray(labels, dtype=float)
    predictions = np.atleast_2d(np.asarray(predictions, dtype=float))
    filled = ~np.isnan(labels)
    item, slot = np.nonzero(filled)
    rest = filled[item].copy()
    rest[np.arange(item.size), slot] = False
    n_rest = rest.sum(axis=1)
    held = labels[item, slot]
    s_h = ((labels[item] == held[:, None]) & rest).sum(axis=1) / n_rest
    system = predictions[:, item]  # (systems, rows)
    s_f = ((labels[item][None, :, :] == system[:, :, None]) & rest[None]).sum(axis=2) / n_rest
    present = ~np.isnan(system)
    w_f = np.where(present, (s_f >= s_h).astype(float), np.nan)
    w_h = np.where(present, (s_h >= s_f).astype(float), np.nan)
    return HeldOutRows(item, s_h, np.where(present, s_f, np.nan), w_f, w_h, present)


#: The columns of :func:`replacement_table`.
REPLACEMENT_COLUMNS = [
    "system",
    "kind",
    "n_items",
    "n_rows",
    "agreement_with_rest",
    "agreement_with_rest_low",
    "agreement_with_rest_high",
    "human_agreement_with_rest",
    "advantage_probability",
    "advantage_probability_low",
    "advantage_probability_high",
    "human_advantage_probability",
    "advantage_gap",
    "advantage_gap_upper",
    "min_epsilon",
    "interval_method",
]


def replacement_table(
    rows: HeldOutRows,
    systems: Sequence[tuple[str, str]],
    clustering: Clustering,
    epsilons: Sequence[float] = EPSILONS,
    level: float = LEVEL,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    """Per system: agreement with the rest, advantage probabilities, the gap and the verdicts.

    ``systems`` names the rows of ``rows``' system arrays (``(name, kind)``); ``clustering``
    clusters ``rows`` (:class:`~.clustered.Clustering`: debates, or the pairs' arguments).
    ``advantage_gap`` is ``rho_h - rho_f`` (the mean of ``W_h - W_f``), ``advantage_gap_upper`` its one-sided upper bound at ``level``,
    ``min_epsilon`` the smallest margin the system passes at (the bound, floored at 0), and
    ``replaces_at_<eps>`` whether that bound lies below each margin of ``epsilons``. A
    ``human:rest`` row gives the annotators' own agreement with the rest (the ceiling).
    """
    n_systems = len(systems)
    present = rows.present
    values = np.vstack([np.nan_to_num(rows.s_f), np.nan_to_num(rows.w_f), np.nan_to_num(rows.w_h - rows.w_f)])
    values = np.vstack([values, rows.s_h[None, :]])
    masks = np.vstack([present, present, present, np.ones((1, rows.s_h.size), dtype=bool)])
    intervals = clustered_intervals(values, masks, clustering, level, n_resamples, seed)
    agreement, advantage, gap = (slice(k * n_systems, (k + 1) * n_systems) for k in range(3))
    table = pd.DataFrame(
        {
            "system": [name for name, _ in systems],
            "kind": [kind for _, kind in systems],
            "n_items": [int(np.unique(rows.item[p]).size) for p in present],
            "n_rows": present.sum(axis=1).astype("int64"),
            "agreement_with_rest": intervals.estimate[agreement],
            "agreement_with_rest_low": intervals.low[agreement],
            "agreement_with_rest_high": intervals.high[agreement],
            "human_agreement_with_rest": [float(np.mean(rows.s_h[p])) for p in present],
            "advantage_probability": intervals.estimate[advantage],
            "advantage_probability_low": intervals.low[advantage],
            "advantage_probability_high": intervals.high[advantage],
            "human_advantage_probability": [float(np.nanmean(rows.w_h[k][p])) for k, p in enumerate(present)],
            "advantage_gap": intervals.estimate[gap],
            "advantage_gap_upper": intervals.upper[gap],
            "min_epsilon": np.maximum(intervals.upper[gap], 0.0),
            "interval_method": [
                "/".join(sorted(set(intervals.method[[k, n_systems + k, 2 * n_systems + k]]))) for k in range(n_systems)
            ],
        }
    )
    for epsilon in epsilons:
        table[epsilon_column(epsilon)] = table["advantage_gap_upper"] < epsilon
    return pd.concat([table, pd.DataFrame([_human_row(rows, intervals)])], ignore_index=True)


def _human_row(rows: HeldOutRows, intervals: RatioIntervals) -> dict[str, object]:
    """The annotators' own row: a held-out annotator's agreement with the rest (the last output)."""
    return {
        "system": "human:rest",
        "kind": "human",
        "n_items": int(np.unique(rows.item).size),
        "n_rows": int(rows.s_h.size),
        "agreement_with_rest": intervals.estimate[-1],
        "agreement_with_rest_low": intervals.low[-1],
        "agreement_with_rest_high": intervals.high[-1],
        "human_agreement_with_rest": intervals.estimate[-1],
        "interval_method": str(intervals.method[-1]),
    }


def epsilon_column(epsilon: float) -> str:
    """The verdict column of a margin: ``replaces_at_0_10`` for 0.10."""
    if not 0.0 < epsilon < 1.0 or math.isnan(epsilon):
        raise ValueError(f"a margin epsilon must lie in (0, 1), got {epsilon}")
    return f"replaces_at_{epsilon:.2f}".replace(".", "_")
