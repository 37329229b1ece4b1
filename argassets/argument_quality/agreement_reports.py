"""Agreement reports of Study A: configurations against the experts, model against model, run against run.

The metrics are the platform's pairwise core (:mod:`argassets.platform.pairwise`); this module
names Study A's configurations, comparisons and arguments and adds the mean and flag columns.

Every function takes and returns tidy pandas tables (the shapes of the Dagster assets of the
``aggregation`` and ``reports`` groups) and imports nothing from Dagster, so the whole analysis
runs in a notebook as well::

    majority = majority_votes(judgments)                        # argassets.argument_quality.voting
    scores = llm_bt_scores(majority, experts, arguments)
    report = agreement_report(scores, majority, experts, arguments)

A *configuration* is (model, strategy, dimension); the reports add, per (model, strategy), a row
with ``dimension = "mean"`` holding the mean of each metric over the dimensions present.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.argument_quality.agreement_intervals import (
    AGREEMENT_METRICS,
    CROSS_MODEL_METRICS,
    EXPECTED_LABEL_METRICS,
    INTERVAL_COLUMNS,
    agreement_values,
    best_set_column,
    bound_columns,
    nothing_compared,
    planned_comparisons,
    report_uncertainty,
    typed_comparisons,
    with_intervals,
    without_intervals,
)
from argassets.argument_quality.best import HEADLINE_METRIC, best_candidates, best_configuration
from argassets.argument_quality.bradley_terry import ITEM_COLUMNS
from argassets.argument_quality.bt_scores import CONFIG_COLUMNS, MEAN_DIMENSION, published_scores
from argassets.argument_quality.configurations import ModelInfo, add_flags
from argassets.argument_quality.scope import DIMENSIONS
from argassets.argument_quality.topic_tables import Topics, agreement_tables
from argassets.platform.pairwise.agreement import (
    LABEL_METRICS,
    SCORE_METRICS,
    label_agreement,
    score_agreement,
)
from argassets.platform.pairwise.expected import (
    MAJORITY_PROBABILITY_COLUMNS,
    expected_label_agreement,
)
from argassets.platform.pairwise.labels import LABELS, MISSING, encode_labels, factorize_columns
from argassets.platform.stats.intervals import DEFAULT_SETTINGS, BootstrapSettings

FLAG_COLUMNS = ["scope", "is_baseline", "in_registry"]

AGREEMENT_COLUMNS = [
    *CONFIG_COLUMNS,
    *SCORE_METRICS,
    *LABEL_METRICS,
    *EXPECTED_LABEL_METRICS,
    "n_comparisons",
    "n_expected",
    "n_items",
    "n_no_verdict",
    "correlation_mean",
    "best_set",
    *bound_columns(AGREEMENT_METRICS),
    *INTERVAL_COLUMNS,
    *FLAG_COLUMNS,
]


def configuration_codes(frame: pd.DataFrame, configs: pd.DataFrame) -> np.ndarray:
    """Index of each row's configuration in ``configs`` (-1 when absent)."""
    codes, uniques = factorize_columns(frame, CONFIG_COLUMNS)
    lookup = pd.MultiIndex.from_frame(configs[CONFIG_COLUMNS].astype(str))
    position = lookup.get_indexer(pd.MultiIndex.from_frame(uniques[CONFIG_COLUMNS].astype(str)))
    return position[codes] if len(codes) else codes


def _score_metrics(
    scores: pd.DataFrame, reference: pd.DataFrame, configs: pd.DataFrame, ref_column: str
) -> pd.DataFrame:
    """Score metrics of each configuration's ``bt_z`` against ``reference[ref_column]``."""
    joined = scores[[*CONFIG_COLUMNS, *ITEM_COLUMNS, "bt_z"]].merge(
        reference, on=[c for c in reference.columns if c != ref_column], how="inner"
    )
    rows = []
    groups = {key: part for key, part in joined.groupby(CONFIG_COLUMNS, sort=False)}
    for key in configs[CONFIG_COLUMNS].itertuples(index=False, name=None):
        part = groups.get(tuple(key))
        if part is None:
            metrics = {m: np.nan for m in SCORE_METRICS} | {"n_items": 0.0}
        else:
            metrics = score_agreement(part["bt_z"].to_numpy(), part[ref_column].to_numpy())
        rows.append(metrics)
    out = pd.DataFrame(rows, columns=[*SCORE_METRICS, "n_items"])
    out["n_items"] = out["n_items"].astype(np.int64)
    return out


def _label_metrics(
    majority: pd.DataFrame, reference: pd.DataFrame, configs: pd.DataFrame, ref_label: str
) -> pd.DataFrame:
    """Label metrics of each configuration's majority labels against ``reference[ref_label]``.

    ``reference`` holds ``dimension``, ``comparison_id`` and ``ref_label``, one row per comparison.
    """
    index = pd.MultiIndex.from_frame(reference[["dimension", "comparison_id"]].astype(str))
    if not index.is_unique:
        raise ValueError("reference labels: a comparison occurs twice")
    ref_codes = encode_labels(reference[ref_label].reset_index(drop=True))
    m_codes, m_uniques = factorize_columns(majority, ["dimension", "comparison_id"])
    position = index.get_indexer(pd.MultiIndex.from_frame(m_uniques.astype(str)))[m_codes]
    group = configuration_codes(majority, configs)
    llm = encode_labels(majority["majority_label"].reset_index(drop=True))
    ref = np.where(position >= 0, ref_codes[np.maximum(position, 0)], MISSING)
    present = (group >= 0) & (position >= 0)
    metrics = label_agreement(group[present], llm[present], ref[present], len(configs), len(LABELS))
    no_verdict = np.bincount(group[present & (llm == MISSING)], minlength=len(configs))
    out = pd.DataFrame(metrics)
    out["n_no_verdict"] = no_verdict.astype(np.int64)
    distributions = _majority_distributions(majority)
    expected = expected_label_agreement(group[present], distributions[present], ref[present], len(configs))
    return pd.concat([out, pd.DataFrame(expected)], axis=1)


def _majority_distributions(majority: pd.DataFrame) -> np.ndarray:
    """``(rows, 3)`` probabilities of the majority being A, B, Tie; NaN where not known."""
    if not set(MAJORITY_PROBABILITY_COLUMNS) <= set(majority.columns):
        return np.full((len(majority), len(LABELS)), np.nan)
    return majority[list(MAJORITY_PROBABILITY_COLUMNS)].to_numpy(dtype=float)


def with_mean_rows(
    report: pd.DataFrame,
    metric_columns: Sequence[str],
    sum_columns: Sequence[str],
    keys: Sequence[str] = ("model", "strategy"),
) -> pd.DataFrame:
    """Append, per ``keys`` (a model and strategy), a ``mean`` row: the mean over the dimensions
    present of every metric (NaN ignored) and the sum of every count."""
    if report.empty:
        return report
    keys = list(keys)
    grouped = report.groupby(keys, sort=False, dropna=False)
    mean_rows = pd.concat(
        [grouped[list(metric_columns)].mean(), grouped[list(sum_columns)].sum()], axis=1
    ).reset_index()
    mean_rows["dimension"] = MEAN_DIMENSION
    out = pd.concat([report, mean_rows], ignore_index=True)
    rank = {d: i for i, d in enumerate([*DIMENSIONS, MEAN_DIMENSION])}
    out["_rank"] = out["dimension"].map(rank).fillna(len(rank))
    out = out.sort_values([*keys, "_rank", "dimension"], kind="stable").drop(columns="_rank")
    return out.reset_index(drop=True)


def report_configurations(majority: pd.DataFrame) -> pd.DataFrame:
    """The distinct (model, strategy, dimension) of a majority table, sorted."""
    return factorize_columns(majority, CONFIG_COLUMNS)[1]


@dataclass(frozen=True)
class AgreementAnalysis:
    """The agreement report and its paired comparisons (``aq_comparisons``)."""

    report: pd.DataFrame
    comparisons: pd.DataFrame


def agreement_report(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    info: dict[str, ModelInfo] | None = None,
    *,
    reference: pd.DataFrame | None = None,
    settings: BootstrapSettings | None = DEFAULT_SETTINGS,
    adjustment: str = "holm",
) -> pd.DataFrame:
    """LLM configurations against the experts: one row per configuration, plus the mean rows.

    The report of :func:`agreement_analysis` (which see for the parameters and columns).
    """
    return agreement_analysis(
        scores, majority, experts, arguments, info, reference=reference, settings=settings, adjustment=adjustment
    ).report


def _without_uncertainty(report: pd.DataFrame) -> AgreementAnalysis:
    """The analysis without intervals or comparisons: the best set is the best configuration alone."""
    best = best_configuration(report)
    report = without_intervals(report, AGREEMENT_METRICS)
    report["best_set"] = (report["model"] == best[0]) & (report["strategy"] == best[1]) if best else False
    nothing = nothing_compared(report, DEFAULT_SETTINGS.level, DEFAULT_SETTINGS.seed)
    return AgreementAnalysis(report[AGREEMENT_COLUMNS].reset_index(drop=True), nothing)


def _metric_report(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    reference: pd.DataFrame | None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per configuration, the score and label metrics against the reference; and the reference scores."""
    configs = report_configurations(majority)
    ref_scores = published_scores(arguments) if reference is None else reference
    ref_scores = ref_scores[["dimension", *ITEM_COLUMNS, "published_z"]]
    ref_labels = experts[["comparison_id", "dimension", "label"]].rename(columns={"label": "expert_label"})
    report = pd.concat(
        [
            configs,
            _score_metrics(scores, ref_scores, configs, "published_z"),
            _label_metrics(majority, ref_labels, configs, "expert_label"),
        ],
        axis=1,
    )
    return report, ref_scores


def agreement_analysis(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    info: dict[str, ModelInfo] | None = None,
    *,
    reference: pd.DataFrame | None = None,
    settings: BootstrapSettings | None = DEFAULT_SETTINGS,
    adjustment: str = "holm",
) -> AgreementAnalysis:
    """LLM configurations against the experts, with intervals, paired comparisons and the best set.

    Parameters
    ----------
    scores
        ``aq_bt_scores`` (``model, strategy, dimension``, argument keys, ``bt_z``).
    majority
        ``aq_majority_votes``.
    experts
        ``webis_expert_comparisons`` (the expert labels).
    arguments
        ``webis_arguments`` (the published z-scores, the default reference).
    info
        Model flags (:func:`model_info`).
    reference
        Scores to compare with instead of the published ones: ``dimension``, argument keys and
        ``published_z`` (e.g. the expert BT scores of ``aq_expert_bt_scores``).
    settings, adjustment
        The clustered bootstrap over topics and the p-value adjustment (``holm`` or ``bh``);
        ``settings=None`` leaves the intervals and comparisons out (the best set is then the best alone).

    Returns
    -------
    AgreementAnalysis
        ``report`` (:data:`AGREEMENT_COLUMNS`): Pearson, Spearman, Kendall, MAE, RMSE of ``bt_z``
        against the expert z-scores on the configuration's arguments (``n_items``); Cohen's kappa,
        Krippendorff's alpha and percent agreement of the majority labels against the expert
        labels (``n_comparisons`` with a verdict; ``n_no_verdict`` without); their expected
        values from the label probabilities, ``expected_cohen_kappa`` (kappa of the expected
        confusion matrix) and ``expected_percent_agreement`` over ``n_expected`` comparisons (NaN
        and 0 without probabilities; docs/judgments.md, "Expected figures"); ``correlation_mean``
        (mean of r, rho, tau); ``<metric>_low/_high`` and the interval columns (clustered over
        topics, docs/uncertainty.md); ``best_set`` (:func:`best_configuration` and every
        configuration not significantly worse on :data:`HEADLINE_METRIC`). ``comparisons``
        (:data:`COMPARISON_COLUMNS`): each configuration against the best and against each baseline.
    """
    report, ref_scores = _metric_report(scores, majority, experts, arguments, reference)
    report = _finish_report(report, info or {})
    if settings is None:
        return _without_uncertainty(report)
    return _with_uncertainty(report, scores, majority, experts, ref_scores, settings, adjustment)


def _with_uncertainty(
    report: pd.DataFrame,
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    ref_scores: pd.DataFrame,
    settings: BootstrapSettings,
    adjustment: str,
) -> AgreementAnalysis:
    """The report with its intervals and best set, and its comparisons, from one bootstrap over topics."""
    topics = Topics.of(majority, scores)
    tables = agreement_tables(
        scores,
        majority,
        ref_scores.rename(columns={"published_z": "reference_z"}),
        experts[["comparison_id", "dimension", "label", "topic_id"]].rename(columns={"label": "reference_label"}),
        topics,
    )
    best = best_configuration(report)
    # Compared with the best, or (only baselines judged) the best baseline, as the cross-model report is.
    reference = best or best_configuration(report, baselines=True)
    uncertainty = report_uncertainty(
        tables,
        AGREEMENT_METRICS,
        agreement_values,
        settings,
        len(topics),
        what="aq_agreement_report",
        comparisons=planned_comparisons(report, reference),
        adjustment=adjustment,
    )
    report = with_intervals(report, uncertainty.intervals)
    report["best_set"] = best_set_column(
        report, uncertainty.comparisons, best, best_candidates(report), HEADLINE_METRIC, settings.level
    )
    compared = uncertainty.comparisons
    compared = typed_comparisons(compared) if len(compared) else nothing_compared(report, settings.level, settings.seed)
    return AgreementAnalysis(report[AGREEMENT_COLUMNS].reset_index(drop=True), compared)


def _finish_report(report: pd.DataFrame, info: dict[str, ModelInfo]) -> pd.DataFrame:
    counts = ["n_comparisons", "n_expected", "n_items", "n_no_verdict"]
    report = with_mean_rows(report, [*SCORE_METRICS, *LABEL_METRICS, *EXPECTED_LABEL_METRICS], counts)
    report["correlation_mean"] = report[["pearson", "spearman", "kendall"]].mean(axis=1, skipna=False)
    report = add_flags(report, info) if len(report) else report.assign(scope=None, is_baseline=None, in_registry=None)
    for column in counts:
        report[column] = report[column].astype(np.int64)
    return report.reset_index(drop=True)


def cross_model_report(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    best: tuple[str, str] | None,
    info: dict[str, ModelInfo] | None = None,
    *,
    settings: BootstrapSettings | None = DEFAULT_SETTINGS,
) -> pd.DataFrame:
    """Every configuration against the best one (same dimension): the agreement metrics.

    Scores are compared on the arguments both scored, labels on the comparisons both labelled;
    ``<metric>_low/_high`` and the interval columns as in :func:`agreement_analysis`.
    """
    columns = [
        *CONFIG_COLUMNS,
        "best_model",
        "best_strategy",
        *SCORE_METRICS,
        *LABEL_METRICS,
        "n_comparisons",
        "n_items",
        *bound_columns(CROSS_MODEL_METRICS),
        *INTERVAL_COLUMNS,
        *FLAG_COLUMNS,
    ]
    if best is None or majority.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    best_model, best_strategy = best
    configs = report_configurations(majority)
    is_best_s = (scores["model"] == best_model) & (scores["strategy"] == best_strategy)
    ref_scores = scores.loc[is_best_s, ["dimension", *ITEM_COLUMNS, "bt_z"]].rename(columns={"bt_z": "best_z"})
    is_best_m = (majority["model"] == best_model) & (majority["strategy"] == best_strategy)
    ref_labels = majority.loc[is_best_m, ["comparison_id", "dimension", "majority_label"]].rename(
        columns={"majority_label": "best_label"}
    )
    report = pd.concat(
        [
            configs,
            _score_metrics(scores, ref_scores, configs, "best_z"),
            _label_metrics(majority, ref_labels, configs, "best_label")[[*LABEL_METRICS, "n_comparisons"]],
        ],
        axis=1,
    )
    report["best_model"] = best_model
    report["best_strategy"] = best_strategy
    report = with_mean_rows(
        report,
        [*SCORE_METRICS, *LABEL_METRICS],
        ["n_comparisons", "n_items"],
        keys=["model", "strategy", "best_model", "best_strategy"],
    )
    report = add_flags(report, info or {})
    for column in ("n_comparisons", "n_items"):
        report[column] = report[column].astype(np.int64)
    if settings is None:
        return without_intervals(report, CROSS_MODEL_METRICS)[columns]
    return with_intervals(report, _cross_model_intervals(scores, majority, ref_scores, ref_labels, settings))[columns]


def _cross_model_intervals(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    best_scores: pd.DataFrame,
    best_labels: pd.DataFrame,
    settings: BootstrapSettings,
) -> pd.DataFrame:
    """The cross-model report's intervals: each configuration against the best one's scores and labels."""
    topics = Topics.of(majority, scores)
    tables = agreement_tables(
        scores,
        majority,
        best_scores.rename(columns={"best_z": "reference_z"}),
        best_labels.rename(columns={"best_label": "reference_label"}),
        topics,
    )
    return report_uncertainty(
        tables, CROSS_MODEL_METRICS, agreement_values, settings, len(topics), what="aq_cross_model_report"
    ).intervals
