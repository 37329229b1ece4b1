"""Pointwise and pairwise evaluation of every system, and inter-annotator agreement."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from argassets.political.validation.design import distinct_label_shares
from argassets.political.validation.pointwise import (
    ANNOTATOR_COLUMNS,
    agreed_political,
    agreement_partitions,
    nominal_alpha,
    pointwise_metrics,
    pointwise_partitions,
    predicts_political,
    threshold_political,
)
from argassets.political.validation.ranking import (
    bt_strengths,
    confidence_subsets,
    footrule_similarity,
    kendall_tau_similarity,
    matrix_predictions,
    ordinal_alpha,
    pairwise_macro_f1,
    ranks,
    strength_predictions,
)
from argassets.political.validation.win_matrices import bin_histograms, human_win_matrices, pair_mask, win_matrix

#: Pairwise subsets in report order: all pairs, then (E3-confident, human-confident) cells.
SUBSETS: tuple[str, ...] = ("all", "P11", "P10", "P01", "P00")


@dataclass(frozen=True)
class PairwiseDesign:
    """The pairwise study as arrays: items, pairs in file orientation, human matrices, subsets.

    Build it with :meth:`build`. ``subsets`` maps a subset name to the boolean mask over
    ``pairs``; ``masks`` to the symmetric item mask of that subset's pairs.
    """

    meta_ids: tuple[str, ...]
    pairs: np.ndarray
    human: Mapping[str, np.ndarray]
    subsets: Mapping[str, np.ndarray]
    masks: Mapping[str, np.ndarray]
    votes_per_pair: float

    @classmethod
    def build(
        cls,
        meta_ids: Sequence[str],
        pairs: pd.DataFrame,
        votes: pd.DataFrame,
        e3_scores: Sequence[Sequence[float]],
        votes_per_pair: float = 6.0,
    ) -> PairwiseDesign:
        """Arrange the study: ``pairs`` (``id1``, ``id2``) in file orientation, ``votes`` as in
        :func:`human_win_matrices`, and the E3 scores per item (aligned with ``meta_ids``) that
        define the E3-confident pairs."""
        index = {meta_id: row for row, meta_id in enumerate(meta_ids)}
        pair_index = np.array(
            [(index[a], index[b]) for a, b in zip(pairs["id1"], pairs["id2"], strict=True)], dtype=np.int64
        )
        n = len(meta_ids)
        human = human_win_matrices(n, index, votes)
        e3 = win_matrix(bin_histograms(e3_scores), pair_mask(n, pair_index))
        subsets = confidence_subsets(human["human"], e3, pair_index, votes_per_pair)
        masks = {name: pair_mask(n, pair_index[selected]) for name, selected in subsets.items()}
        return cls(tuple(meta_ids), pair_index.reshape(-1, 2), human, subsets, masks, votes_per_pair)

    @property
    def n_items(self) -> int:
        return len(self.meta_ids)

    def subset_pairs(self, subset: str) -> np.ndarray:
        return self.pairs[self.subsets[subset]]

    def human_ranks(self, subset: str, framing: str = "human") -> tuple[np.ndarray, np.ndarray]:
        """(strengths, ranks) of a human matrix restricted to the subset's pairs."""
        strengths = bt_strengths(self.human[framing] * self.masks[subset])
        return strengths, ranks(strengths)


PAIRWISE_COLUMNS = [
    "system",
    "kind",
    "subset",
    "d_footrule",
    "d_tau",
    "alpha_ordinal",
    "macro_f1",
    "n_pairs",
    "n_items_scored",
]


@dataclass(frozen=True)
class Ranking:
    """One row of the pairwise validation before its metrics: a system's (or context row's) BT
    strengths over the items on one subset, its prediction per pair of the subset, items scored."""

    system: str
    kind: str
    subset: str
    strengths: np.ndarray
    predictions: np.ndarray
    scored: int


def pairwise_rankings(
    design: PairwiseDesign,
    systems: Mapping[str, tuple[str, Sequence[Sequence[float] | None]]],
) -> list[Ranking]:
    """Every system's ranking per subset, then the context rows (human framings, baselines), in report order."""
    out: list[Ranking] = []
    histograms = {
        name: (kind, bin_histograms([list(s) if s is not None else [] for s in scores]), sum(1 for s in scores if s))
        for name, (kind, scores) in systems.items()
    }
    n = design.n_items
    for subset in SUBSETS:
        pairs = design.subset_pairs(subset)
        mask = design.masks[subset]
        human_strengths, _ = design.human_ranks(subset)
        for name, (kind, hist, scored) in histograms.items():
            matrix = win_matrix(hist, mask)
            out.append(Ranking(name, kind, subset, bt_strengths(matrix), matrix_predictions(matrix, pairs), scored))
        for framing in ("left", "right"):
            matrix = design.human[framing] * mask
            strengths = bt_strengths(matrix)
            out.append(Ranking(f"human:{framing}", "human", subset, strengths, matrix_predictions(matrix, pairs), n))
        flat = np.zeros(n)
        out.append(Ranking("baseline:all-equal", "baseline", subset, flat, strength_predictions(flat, pairs), n))
        worst = -human_strengths
        out.append(Ranking("baseline:worst", "baseline", subset, worst, strength_predictions(worst, pairs), n))
    return out


def evaluate_pairwise(
    design: PairwiseDesign,
    systems: Mapping[str, tuple[str, Sequence[Sequence[float] | None]]],
    rankings: Sequence[Ranking] | None = None,
) -> pd.DataFrame:
    """Pairwise validation rows for every system and subset, with the context rows.

    Parameters
    ----------
    design
        :meth:`PairwiseDesign.build` output.
    systems
        ``name -> (kind, scores per item aligned with design.meta_ids)``; ``None`` or an empty list
        means the system has no valid score for that item.
    rankings
        :func:`pairwise_rankings` of the same design and systems, when already computed.

    Returns
    -------
    pandas.DataFrame
        :data:`PAIRWISE_COLUMNS`: per system and subset ``d_footrule``, ``d_tau``,
        ``alpha_ordinal``, ``macro_f1`` and ``n_pairs``; context rows ``human:left``,
        ``human:right`` (each framing's ranking vs the aggregate; F1 with 3 votes per pair),
        ``baseline:all-equal`` (all strengths equal) and ``baseline:worst`` (human strengths negated).
    """
    rows: list[tuple[Any, ...]] = []
    human = {subset: design.human_ranks(subset)[1] for subset in SUBSETS}
    for ranking in rankings if rankings is not None else pairwise_rankings(design, systems):
        pairs = design.subset_pairs(ranking.subset)
        r = ranks(ranking.strengths)
        rows.append(
            (
                ranking.system,
                ranking.kind,
                ranking.subset,
                footrule_similarity(r, human[ranking.subset]),
                kendall_tau_similarity(r, human[ranking.subset]),
                ordinal_alpha(r, human[ranking.subset]),
                pairwise_macro_f1(
                    design.human["human"] * design.masks[ranking.subset],
                    ranking.predictions,
                    pairs,
                    design.votes_per_pair,
                ),
                int(pairs.shape[0]),
                ranking.scored,
            )
        )
    return pd.DataFrame(rows, columns=PAIRWISE_COLUMNS)


def interannotator_agreement(design: PairwiseDesign, votes: pd.DataFrame) -> pd.DataFrame:
    """Human agreement in the pairwise study.

    Rows: ``alpha_ordinal_left_vs_right`` per subset (ordinal alpha between the rankings from the
    left-framed and the right-framed matrices restricted to the subset's pairs), and the share of
    pairs with 1, 2 or 3 distinct labels per framing (all pairs).

    Returns ``statistic``, ``subset``, ``framing``, ``distinct_labels``, ``n_pairs``, ``value``.
    """
    rows: list[tuple[Any, ...]] = []
    for subset in SUBSETS:
        _, left = design.human_ranks(subset, "left")
        _, right = design.human_ranks(subset, "right")
        rows.append(
            (
                "alpha_ordinal_left_vs_right",
                subset,
                "both",
                None,
                int(design.subsets[subset].sum()),
                ordinal_alpha(left, right),
            )
        )
    for record in distinct_label_shares(votes).itertuples(index=False):
        rows.append(
            (
                "share_of_pairs",
                "all",
                record.framing,
                int(record.distinct_labels),
                int(record.n_pairs),
                float(record.share),
            )
        )
    out = pd.DataFrame(rows, columns=["statistic", "subset", "framing", "distinct_labels", "n_pairs", "value"])
    out["distinct_labels"] = pd.array(out["distinct_labels"].tolist(), dtype="Int64")
    return out


POINTWISE_COLUMNS = [
    "system",
    "kind",
    "partition",
    "macro_f1",
    "micro_f1",
    "precision",
    "recall",
    "balanced_accuracy",
    "alpha_nominal",
    "n",
    "missing_share",
]
#: The metric columns an agreement row leaves blank.
_METRICS = ("macro_f1", "micro_f1", "precision", "recall", "balanced_accuracy")


def evaluate_pointwise(
    items: pd.DataFrame,
    systems: Mapping[str, tuple[str, np.ndarray]],
    inter_model_groups: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Pointwise validation rows per system and partition, plus agreement rows.

    Parameters
    ----------
    items
        Pointwise items (``a1_label``..``a3_label``, ``judgements_maj``, ``n_type``).
    systems
        ``name -> (kind, prob_na per item)`` aligned with ``items``; NaN = no prediction for that
        item (the item is left out of that system's rows, and ``n`` says how many remain).
    inter_model_groups
        ``group -> system names`` compared with one another (see :func:`inter_model_rows`), e.g.
        ``{"published": [...]}`` gives ``inter-model:published``,
        ``inter-model:published:threshold`` and ``human-model:published``.

    Returns
    -------
    pandas.DataFrame
        :data:`POINTWISE_COLUMNS`. ``human:inter-annotator`` rows carry the nominal alpha of the three
        crowd labels, inter-model and human-model rows the agreement of a group; their F1 columns
        are NaN. ``missing_share`` is set on inter-model rows only.
    """
    masks = pointwise_partitions(items["n_type"])
    if all(c in items.columns for c in ANNOTATOR_COLUMNS):
        masks |= agreement_partitions(items)  # the paper's unanimous (485) and 2-1 majority (515) items
    gold = items["judgements_maj"].to_numpy(dtype=int)
    labels = items[["a1_label", "a2_label", "a3_label"]].to_numpy(dtype=float).T
    probabilities = {}
    for name, (kind, prob_na) in systems.items():
        values = np.asarray(prob_na, dtype=float)
        if values.shape != gold.shape:
            raise ValueError(f"system {name!r}: {values.size} probabilities for {gold.size} items")
        probabilities[name] = (kind, values)
    rows: list[dict[str, Any]] = []
    for partition, mask in masks.items():
        system_rows: dict[str, dict[str, Any]] = {}
        for name, (kind, values) in probabilities.items():
            keep = mask & ~np.isnan(values)
            if not keep.any():
                continue
            metrics = pointwise_metrics(gold[keep], predicts_political(values[keep]).astype(int))
            system_rows[name] = {"system": name, "kind": kind, "partition": partition, **metrics}
        rows.extend(system_rows.values())
        rows.append(_agreement_row("human:inter-annotator", "human", partition, nominal_alpha(labels[:, mask]), mask))
        for group, names in (inter_model_groups or {}).items():
            members = {name: probabilities[name][1][mask] for name in names if name in probabilities}
            alphas = [system_rows[name]["alpha_nominal"] for name in members if name in system_rows]
            rows.extend(inter_model_rows(group, partition, members, alphas, mask))
    out = pd.DataFrame(rows, columns=POINTWISE_COLUMNS)
    out["n"] = out["n"].astype("int64")
    return out


def inter_model_rows(
    group: str, partition: str, members: Mapping[str, np.ndarray], alphas: Sequence[float], mask: np.ndarray
) -> list[dict[str, Any]]:
    """A group's agreement rows on one partition (none when it has fewer than two members).

    ``inter-model:<group>``: nominal alpha with one rater per member, a member's label counting
    only when its repetitions agree (:func:`agreed_political`, the paper's Figure 2 convention;
    the other cells are missing, their share in ``missing_share``). ``inter-model:<group>:threshold``:
    the same with the platform's label (P(NA) < 0.5). ``human-model:<group>``: the median of
    ``alphas``, the members' alpha against the human majority (the paper's box plot).
    ``n``: items with at least one label.
    """
    if len(members) < 2:
        return []
    probabilities = np.vstack(list(members.values()))
    rows = []
    for suffix, rule in (("", agreed_political), (":threshold", threshold_political)):
        data = rule(probabilities)
        row = _agreement_row(f"inter-model:{group}{suffix}", "inter-model", partition, nominal_alpha(data), mask)
        row |= {"n": int((~np.isnan(data)).any(axis=0).sum()), "missing_share": float(np.isnan(data).mean())}
        rows.append(row)
    median = float(np.nanmedian(alphas)) if np.isfinite(alphas).any() else math.nan
    rows.append(_agreement_row(f"human-model:{group}", "human-model", partition, median, mask))
    return rows


def _agreement_row(system: str, kind: str, partition: str, alpha: float, mask: np.ndarray) -> dict[str, Any]:
    blank = dict.fromkeys(_METRICS, math.nan)
    return {
        "system": system,
        "kind": kind,
        "partition": partition,
        **blank,
        "alpha_nominal": alpha,
        "n": int(mask.sum()),
        "missing_share": math.nan,
    }
