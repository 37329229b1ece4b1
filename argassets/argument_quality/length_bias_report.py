"""The length-bias report over the corpus: every configuration against the experts, per dimension
and over all three (its inputs in :mod:`~argassets.argument_quality.length_bias_inputs`, its checks in
:mod:`~argassets.argument_quality.length_bias_checks`).

The measures are in :mod:`argassets.argument_quality.length_bias`, the length-controlled model in
:mod:`argassets.argument_quality.length_bias_model`. Plain pandas, without Dagster.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from argassets.argument_quality.bradley_terry import ITEM_COLUMNS
from argassets.argument_quality.length_bias import (
    longer_share,
    partial_correlation,
    pearson,
)
from argassets.argument_quality.length_bias_inputs import comparison_lengths, item_table
from argassets.argument_quality.length_bias_model import length_controlled_bt
from argassets.argument_quality.scope import DIMENSIONS
from argassets.argument_quality.voting import encode_labels
from argassets.platform.pairwise.agreement import kappa_from_confusion
from argassets.platform.pairwise.bradley_terry import z_normalise

__all__ = [
    "ALL_DIMENSIONS",
    "EXPERTS",
    "KIND_REFERENCE",
    "length_bias_report",
    "report_columns",
]

#: ``kind`` of the experts' rows (the reference every judge is compared with).
KIND_REFERENCE = "reference"
#: ``model`` and ``strategy`` of the experts' rows.
EXPERTS = ("experts", "human")
#: ``dimension`` of the rows pooled over the three dimensions.
ALL_DIMENSIONS = "all"


def report_columns(n_strata: int = 4) -> list[str]:
    """The columns of :func:`length_bias_report`."""
    strata = [f"{m}_q{k + 1}" for m in ("kappa", "agreement", "n") for k in range(n_strata)]
    return [
        "model",
        "strategy",
        "dimension",
        "kind",
        "share_longer",
        "share_longer_experts",
        "delta_share",
        "n_longer",
        "n_decisive",
        *strata,
        "pearson",
        "partial_pearson",
        "length_correlation",
        "lc_beta",
        "lc_pearson",
        "lc_spearman",
        "lc_kendall",
        "n_items",
        "is_baseline",
        "scope",
    ]


def _item_values(frame: pd.DataFrame, items: pd.DataFrame, dimension: str, column: str) -> np.ndarray:
    """``frame[column]`` of every item (NaN where it has none) for one dimension."""
    part = frame.loc[frame["dimension"] == dimension, [*ITEM_COLUMNS, column]]
    if part.duplicated(list(ITEM_COLUMNS)).any():
        raise ValueError(f"{column}: an argument has two values in dimension {dimension!r}")
    merged = items[list(ITEM_COLUMNS)].merge(part, on=list(ITEM_COLUMNS), how="left")
    return merged[column].to_numpy(dtype=float)


def _correlations(theta_z: np.ndarray, reference_z: np.ndarray) -> tuple[float, float, float]:
    ok = np.isfinite(theta_z) & np.isfinite(reference_z)
    if ok.sum() < 2 or np.ptp(theta_z[ok]) == 0 or np.ptp(reference_z[ok]) == 0:
        return float("nan"), float("nan"), float("nan")
    x, y = theta_z[ok], reference_z[ok]
    return (
        float(stats.pearsonr(x, y).statistic),
        float(stats.spearmanr(x, y).statistic),
        float(stats.kendalltau(x, y).statistic),
    )


@dataclass(frozen=True)
class _Corpus:
    """What every configuration's rows are computed against: the expert comparisons with their
    lengths and strata, the arguments, and the experts' z-scores."""

    comparisons: pd.DataFrame
    comp_index: pd.MultiIndex
    items: pd.DataFrame
    log_length: np.ndarray
    topic: np.ndarray
    reference: pd.DataFrame
    n_strata: int
    ridge: float
    ties: str


def _labelled(corpus: _Corpus, part: pd.DataFrame, model: str) -> pd.DataFrame:
    """The expert comparisons a configuration voted on, with its majority label as ``code``."""
    keys = pd.MultiIndex.from_arrays([part["dimension"].astype(str), part["comparison_id"].astype(str)])
    pos = corpus.comp_index.get_indexer(keys)
    if (pos < 0).any():
        row = part.iloc[int(np.flatnonzero(pos < 0)[0])]
        raise ValueError(
            f"aq_majority_votes: comparison {row['comparison_id']!r} ({row['dimension']}) of model "
            f"{model!r} is not in webis_expert_comparisons"
        )
    labelled = corpus.comparisons.iloc[pos].reset_index(drop=True)
    labelled["code"] = encode_labels(part["majority_label"].reset_index(drop=True))
    return labelled


@dataclass
class _Pooled:
    """Counts over the dimensions, for the ``all`` row."""

    strata: np.ndarray
    n_longer: int = 0
    n_decisive: int = 0
    n_longer_experts: int = 0
    n_decisive_experts: int = 0

    def add(self, counts: tuple[int, int, int, int], confusion: np.ndarray) -> None:
        self.n_longer += counts[0]
        self.n_decisive += counts[1]
        self.n_longer_experts += counts[2]
        self.n_decisive_experts += counts[3]
        self.strata = self.strata + confusion


def _dimension_record(
    corpus: _Corpus, sub: pd.DataFrame, dimension: str, judge_z: np.ndarray | None, pooled: _Pooled
) -> dict[str, object]:
    """One configuration's row for one dimension (``judge_z`` None: the experts themselves)."""
    is_expert = judge_z is None
    code = sub["code"].to_numpy(dtype=np.int64)
    expert_code = sub["expert_code"].to_numpy(dtype=np.int64)
    ratio = sub["log_ratio"].to_numpy(dtype=float)
    share, n_longer, n_decisive = longer_share(code, ratio)
    e_share, e_longer, e_decisive = longer_share(expert_code, ratio)
    stratum = sub["stratum"].to_numpy(dtype=np.int64)
    ok = (code >= 0) & (expert_code >= 0)
    flat = (stratum[ok] * 3 + code[ok]) * 3 + expert_code[ok]
    n_strata = corpus.n_strata
    confusion = np.bincount(flat, minlength=n_strata * 9).reshape(n_strata, 3, 3).astype(float)
    ref_z = _item_values(corpus.reference, corpus.items, dimension, "published_z")
    judge_z = ref_z if judge_z is None else judge_z
    theta, beta = _length_controlled(corpus, sub, code)
    lc = _correlations(z_normalise(theta), ref_z)
    log_length = corpus.log_length
    record: dict[str, object] = {
        "dimension": dimension,
        "share_longer": float(share[0]),
        "share_longer_experts": float(e_share[0]),
        "n_longer": int(n_longer[0]),
        "n_decisive": int(n_decisive[0]),
        "pearson": float("nan") if is_expert else pearson(judge_z, ref_z),
        "partial_pearson": float("nan") if is_expert else partial_correlation(judge_z, ref_z, log_length),
        "length_correlation": pearson(judge_z, log_length),
        "lc_beta": beta,
        "lc_pearson": lc[0],
        "lc_spearman": lc[1],
        "lc_kendall": lc[2],
        "n_items": int(np.isfinite(judge_z).sum())
        if is_expert
        else int((np.isfinite(judge_z) & np.isfinite(ref_z)).sum()),
    }
    record.update(_strata_columns(confusion, n_strata))
    pooled.add((int(n_longer[0]), int(n_decisive[0]), int(e_longer[0]), int(e_decisive[0])), confusion)
    return record


def _length_controlled(corpus: _Corpus, sub: pd.DataFrame, code: np.ndarray) -> tuple[np.ndarray, float]:
    """The length-controlled strengths of the items compared (NaN for the others), and beta."""
    seen = np.zeros(len(corpus.items), dtype=bool)
    decided = code >= 0
    seen[sub["item_a"].to_numpy()[decided]] = True
    seen[sub["item_b"].to_numpy()[decided]] = True
    fit = length_controlled_bt(
        sub["item_a"].to_numpy(),
        sub["item_b"].to_numpy(),
        code,
        corpus.log_length,
        corpus.topic,
        ties=corpus.ties,
        ridge=corpus.ridge,
    )
    return np.where(seen, fit.theta, np.nan), fit.beta


#: Columns of the ``all`` row that average the per-dimension values.
_AVERAGED = ("pearson", "partial_pearson", "length_correlation", "lc_beta", "lc_pearson", "lc_spearman", "lc_kendall")


def _total_record(per_dim: list[dict[str, object]], pooled: _Pooled, n_strata: int) -> dict[str, object]:
    """The ``all`` row: pooled counts (shares, strata), averaged correlations and ``lc_beta``."""
    frame = pd.DataFrame(per_dim)
    means = frame[list(_AVERAGED)]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        averaged = {c: float(np.nanmean(means[c].to_numpy(dtype=float))) for c in means.columns}
    return {
        "dimension": ALL_DIMENSIONS,
        "share_longer": pooled.n_longer / pooled.n_decisive if pooled.n_decisive else float("nan"),
        "share_longer_experts": (
            pooled.n_longer_experts / pooled.n_decisive_experts if pooled.n_decisive_experts else float("nan")
        ),
        "n_longer": pooled.n_longer,
        "n_decisive": pooled.n_decisive,
        "n_items": int(frame["n_items"].sum()),
        **averaged,
        **_strata_columns(pooled.strata, n_strata),
    }


def _configuration_records(
    corpus: _Corpus,
    labelled: pd.DataFrame,
    scores: Mapping[tuple[str, str, str], pd.DataFrame] | None,
    configuration: tuple[str, str],
) -> list[dict[str, object]]:
    """A configuration's rows per dimension and over all (``scores`` None: the experts' rows)."""
    per_dim: list[dict[str, object]] = []
    pooled = _Pooled(strata=np.zeros((corpus.n_strata, 3, 3)))
    for dimension in [d for d in DIMENSIONS if d in set(labelled["dimension"])]:
        sub = labelled[labelled["dimension"] == dimension]
        judge_z = None
        if scores is not None:
            own = scores.get((*configuration, dimension))
            judge_z = (
                _item_values(own, corpus.items, dimension, "bt_z")
                if own is not None
                else np.full(len(corpus.items), np.nan)
            )
        per_dim.append(_dimension_record(corpus, sub, dimension, judge_z, pooled))
    if not per_dim:
        return []
    records = [*per_dim, _total_record(per_dim, pooled, corpus.n_strata)]
    if scores is None:  # agreement of the experts with themselves: not a measurement
        for record in records:
            record.update({k: float("nan") for k in list(record) if k.startswith(("kappa_q", "agreement_q"))})
    return records


def _corpus(
    experts: pd.DataFrame, arguments: pd.DataFrame, reference: pd.DataFrame, n_strata: int, ridge: float, ties: str
) -> tuple[_Corpus, pd.DataFrame]:
    comparisons, edges = comparison_lengths(experts, arguments, n_strata)
    items = item_table(arguments)
    comp_index = pd.MultiIndex.from_frame(comparisons[["dimension", "comparison_id"]])
    if not comp_index.is_unique:
        raise ValueError("webis_expert_comparisons: a (dimension, comparison_id) occurs twice")
    corpus = _Corpus(
        comparisons=comparisons,
        comp_index=comp_index,
        items=items,
        log_length=np.log(np.maximum(items["text_length"].to_numpy(dtype=float), 1.0)),
        topic=items["topic_id"].to_numpy(dtype=np.int64),
        reference=reference,
        n_strata=n_strata,
        ridge=ridge,
        ties=ties,
    )
    return corpus, edges


def _report_frame(rows: list[dict[str, object]], n_strata: int) -> pd.DataFrame:
    columns = report_columns(n_strata)
    report = pd.DataFrame(rows)
    if report.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    report["delta_share"] = report["share_longer"] - report["share_longer_experts"]
    for column in ["n_longer", "n_decisive", "n_items", *(f"n_q{k + 1}" for k in range(n_strata))]:
        report[column] = report[column].astype(np.int64)
    return report[columns].reset_index(drop=True)


def length_bias_report(
    experts: pd.DataFrame,
    majority: pd.DataFrame,
    scores: pd.DataFrame,
    arguments: pd.DataFrame,
    reference: pd.DataFrame,
    flags: dict[str, tuple[bool, str]] | None = None,
    *,
    n_strata: int = 4,
    ridge: float = 0.1,
    ties: str = "win_each",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Length bias of the experts and of every configuration, per dimension and over all three.

    Parameters
    ----------
    experts
        ``webis_expert_comparisons``.
    majority
        ``aq_majority_votes`` (``model, strategy, dimension, comparison_id, majority_label``).
    scores
        ``aq_bt_scores`` (``model, strategy, dimension``, argument keys, ``bt_z``).
    arguments
        ``webis_arguments`` (argument keys and ``text_length``).
    reference
        The experts' z-scores: ``dimension``, argument keys, ``published_z``.
    flags
        Model -> ``(is_baseline, scope)``.
    n_strata, ridge, ties
        Length strata (quantiles of the experts' :math:`|\\log(L_a/L_b)|` per dimension), and the
        penalty and tie handling of :func:`length_controlled_bt`.

    Returns
    -------
    tuple of pandas.DataFrame
        ``(report, edges)``. ``report`` (:func:`report_columns`): one row per (model, strategy,
        dimension) and per (model, strategy) over all dimensions (``dimension = "all"``), the
        experts first (``model = "experts"``, ``kind = "reference"``):

        - ``share_longer`` (``n_longer`` of ``n_decisive``): decisive verdicts between unequal
          lengths that go to the longer argument; ``share_longer_experts``: the experts' share on
          the same comparisons; ``delta_share`` the difference;
        - ``kappa_q<k>``, ``agreement_q<k>`` (percent), ``n_q<k>``: agreement with the expert
          labels within length stratum *k* (q1 = most similar lengths);
        - ``pearson`` of the BT z-scores with the experts' z-scores, ``partial_pearson`` the same
          with log length partialled out, ``length_correlation`` of the BT z-scores with log length
          (for the experts: of their own z-scores);
        - ``lc_beta`` and ``lc_pearson``, ``lc_spearman``, ``lc_kendall``: the length coefficient
          of the length-controlled BT fit of the labels, and its z-normalised strengths against
          the experts' z-scores.

        The ``all`` rows pool the counts (shares, strata) and average the correlations and
        ``lc_beta`` over the dimensions. ``edges``: see :func:`comparison_lengths`.
    """
    corpus, edges = _corpus(experts, arguments, reference, n_strata, ridge, ties)
    return _report_frame(_report_rows(corpus, majority, scores, flags or {}), n_strata), edges


def _report_rows(
    corpus: _Corpus, majority: pd.DataFrame, scores: pd.DataFrame, flags: dict[str, tuple[bool, str]]
) -> list[dict[str, object]]:
    """The report's rows of the experts, then of every configuration of ``majority``, sorted."""
    configs: list[tuple[str, str]] = [EXPERTS]
    if len(majority):
        configs += sorted(set(zip(majority["model"].astype(str), majority["strategy"].astype(str), strict=True)))
    grouped_majority = {k: g for k, g in majority.groupby(["model", "strategy"], sort=False)} if len(majority) else {}
    grouped_scores = (
        {k: g for k, g in scores.groupby(["model", "strategy", "dimension"], sort=False)} if len(scores) else {}
    )
    rows: list[dict[str, object]] = []
    for model, strategy in configs:
        if (model, strategy) == EXPERTS:
            kind, baseline, scope = KIND_REFERENCE, False, "full"
            labelled = corpus.comparisons.assign(code=corpus.comparisons["expert_code"])
            records = _configuration_records(corpus, labelled, None, (model, strategy))
        else:
            baseline, scope = flags.get(model, (False, "unknown"))
            kind = "baseline" if baseline else "measured"
            labelled = _labelled(corpus, grouped_majority[(model, strategy)], model)
            records = _configuration_records(corpus, labelled, grouped_scores, (model, strategy))
        meta = {"model": model, "strategy": strategy, "kind": kind, "is_baseline": baseline, "scope": scope}
        rows += [{**meta, **record} for record in records]
    return rows


def _strata_columns(confusion: np.ndarray, n_strata: int) -> dict[str, float | int]:
    total = confusion.sum(axis=(-2, -1))
    kappa = kappa_from_confusion(confusion)
    with np.errstate(all="ignore"):
        percent = np.where(total > 0, 100.0 * np.trace(confusion, axis1=-2, axis2=-1) / total, np.nan)
    out: dict[str, float | int] = {}
    for k in range(n_strata):
        out[f"kappa_q{k + 1}"] = float(kappa[k])
        out[f"agreement_q{k + 1}"] = float(percent[k])
        out[f"n_q{k + 1}"] = int(total[k])
    return out
