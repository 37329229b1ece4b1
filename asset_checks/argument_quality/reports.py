"""Asset checks: Study A aggregation and reports.

- BT inputs connected: every (configuration, topic) comparison graph is one component; when not,
  the check fails and names the components.
- Metric ranges: every metric of every report lies inside its mathematical range.
- Report rows: one row per configuration present in ``aq_majority_votes`` (plus the mean rows).
- Intervals: every figure of every measured row has an interval containing it, or its row says
  why not (docs/uncertainty.md).
"""

from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.agreement_intervals import AGREEMENT_METRICS, CROSS_MODEL_METRICS, VARIABILITY_METRICS
from argassets.argument_quality.bt_scores import CONFIG_COLUMNS, MEAN_DIMENSION
from argassets.argument_quality.report_checks import (
    disconnected_topics,
    metric_range_violations,
    report_configuration_mismatch,
)
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.stats.tables import interval_problems

CONFIG_IN = {"aq_majority_votes": dg.AssetIn("aq_majority_votes", metadata={"columns": [*CONFIG_COLUMNS, "scope"]})}


def _connected_result(scores: pd.DataFrame, group_columns: list[str]) -> dg.AssetCheckResult:
    if scores.empty:
        return dg.AssetCheckResult(passed=True, metadata={"graphs": 0, "disconnected_graphs": 0})
    split = disconnected_topics(scores, group_columns)
    cells = scores[[*group_columns, "topic_id"]].drop_duplicates() if len(scores) else scores
    metadata: dict[str, Any] = {"graphs": len(cells), "disconnected_graphs": len(split)}
    severity = dg.AssetCheckSeverity.ERROR
    if len(split):
        metadata["components"] = dg.MetadataValue.md(markdown_table(split))
    if len(split) and "model" in group_columns and "scope" in scores.columns:
        # Pilot judges with a restricted scope compare few pairs: expected, so only a warning.
        scoped = split.merge(scores[["model", "scope"]].drop_duplicates(), on="model", how="left")
        if (scoped["scope"].fillna("full") != "full").all():
            severity = dg.AssetCheckSeverity.WARN
    return dg.AssetCheckResult(passed=split.empty, severity=severity, metadata=metadata)


@dg.asset_check(asset="aq_expert_bt_scores")
def aq_expert_bt_scores_connected(aq_expert_bt_scores: pd.DataFrame) -> dg.AssetCheckResult:
    """Every (dimension, topic) expert comparison graph behind the BT scores is connected."""
    return _connected_result(aq_expert_bt_scores, ["dimension"])


@dg.asset_check(asset="aq_bt_scores", additional_ins=CONFIG_IN)
def aq_bt_scores_connected(aq_bt_scores: pd.DataFrame, aq_majority_votes: pd.DataFrame) -> dg.AssetCheckResult:
    """Every (configuration, topic) comparison graph behind the BT scores is connected; else the components."""
    scores = aq_bt_scores
    if len(scores) and "scope" in aq_majority_votes.columns:
        scopes = aq_majority_votes[["model", "scope"]].drop_duplicates("model")
        scores = scores.merge(scopes, on="model", how="left")
    return _connected_result(scores, list(CONFIG_COLUMNS))


def _ranges_result(report: pd.DataFrame) -> dg.AssetCheckResult:
    if report.empty:
        return dg.AssetCheckResult(passed=True, metadata={"rows": 0, "violations": 0})
    bad = metric_range_violations(report)
    metadata: dict[str, Any] = {"rows": len(report), "violations": len(bad)}
    if len(bad):
        metadata["violating_values"] = dg.MetadataValue.md(markdown_table(bad, max_rows=50))
    return dg.AssetCheckResult(passed=bad.empty, metadata=metadata)


@dg.asset_check(asset="aq_agreement_report")
def aq_agreement_report_metric_ranges(aq_agreement_report: pd.DataFrame) -> dg.AssetCheckResult:
    """Every metric of the agreement report is inside its mathematical range."""
    return _ranges_result(aq_agreement_report)


@dg.asset_check(asset="aq_cross_model_report")
def aq_cross_model_report_metric_ranges(aq_cross_model_report: pd.DataFrame) -> dg.AssetCheckResult:
    """Every metric of the cross-model report is inside its mathematical range."""
    return _ranges_result(aq_cross_model_report)


@dg.asset_check(asset="aq_variability_report")
def aq_variability_report_metric_ranges(aq_variability_report: pd.DataFrame) -> dg.AssetCheckResult:
    """Every share and alpha of the variability report is inside its mathematical range."""
    return _ranges_result(aq_variability_report)


@dg.asset_check(asset="aq_ensemble")
def aq_ensemble_metric_ranges(aq_ensemble: pd.DataFrame) -> dg.AssetCheckResult:
    """Every metric of the ensemble report is inside its mathematical range."""
    return _ranges_result(aq_ensemble)


@dg.asset_check(asset="aq_position_bias")
def aq_position_bias_metric_ranges(aq_position_bias: pd.DataFrame) -> dg.AssetCheckResult:
    """Order consistency, first-position share, tie share and p-values are inside [0, 1]."""
    return _ranges_result(aq_position_bias)


def _rows_result(report: pd.DataFrame, majority: pd.DataFrame) -> dg.AssetCheckResult:
    if "kind" in report.columns:
        report = report[report["kind"] != "published"]  # checked by the published-rows checks
    if report.empty:
        report = pd.DataFrame({c: pd.Series(dtype="object") for c in CONFIG_COLUMNS})
    if majority.empty:
        majority = pd.DataFrame({c: pd.Series(dtype="object") for c in CONFIG_COLUMNS})
    missing, extra = report_configuration_mismatch(report, majority)
    configurations = len(majority[CONFIG_COLUMNS].drop_duplicates()) if len(majority) else 0
    metadata: dict[str, Any] = {
        "configurations_present": configurations,
        "report_rows": len(report),
        "mean_rows": int((report["dimension"] == MEAN_DIMENSION).sum()) if len(report) else 0,
        "missing_rows": len(missing),
        "extra_rows": len(extra),
    }
    if len(missing):
        metadata["missing"] = dg.MetadataValue.md(markdown_table(missing, max_rows=50))
    if len(extra):
        metadata["extra"] = dg.MetadataValue.md(markdown_table(extra, max_rows=50))
    return dg.AssetCheckResult(passed=missing.empty and extra.empty, metadata=metadata)


@dg.asset_check(asset="aq_agreement_report", additional_ins=CONFIG_IN)
def aq_agreement_report_rows(aq_agreement_report: pd.DataFrame, aq_majority_votes: pd.DataFrame) -> dg.AssetCheckResult:
    """One agreement row per configuration present (plus one mean row per model and strategy)."""
    return _rows_result(aq_agreement_report, aq_majority_votes)


@dg.asset_check(asset="aq_cross_model_report", additional_ins=CONFIG_IN)
def aq_cross_model_report_rows(
    aq_cross_model_report: pd.DataFrame, aq_majority_votes: pd.DataFrame
) -> dg.AssetCheckResult:
    """One cross-model row per configuration present (plus the mean rows)."""
    return _rows_result(aq_cross_model_report, aq_majority_votes)


@dg.asset_check(asset="aq_variability_report", additional_ins=CONFIG_IN)
def aq_variability_report_rows(
    aq_variability_report: pd.DataFrame, aq_majority_votes: pd.DataFrame
) -> dg.AssetCheckResult:
    """One variability row per configuration present (plus the mean rows)."""
    return _rows_result(aq_variability_report, aq_majority_votes)


def _intervals_result(report: pd.DataFrame, metrics: list[str]) -> dg.AssetCheckResult:
    if report.empty:
        return dg.AssetCheckResult(passed=True, metadata={"rows": 0, "problems": 0})
    bad = interval_problems(report, metrics, CONFIG_COLUMNS)
    metadata: dict[str, Any] = {"rows": len(report), "problems": len(bad)}
    if len(bad):
        metadata["figures"] = dg.MetadataValue.md(markdown_table(bad, max_rows=50))
    return dg.AssetCheckResult(passed=bad.empty, metadata=metadata)


@dg.asset_check(asset="aq_agreement_report")
def aq_agreement_report_intervals(aq_agreement_report: pd.DataFrame) -> dg.AssetCheckResult:
    """Every figure of a measured row has an interval containing it (published rows say they have none)."""
    return _intervals_result(aq_agreement_report, AGREEMENT_METRICS)


@dg.asset_check(asset="aq_cross_model_report")
def aq_cross_model_report_intervals(aq_cross_model_report: pd.DataFrame) -> dg.AssetCheckResult:
    """Every figure of a measured row has an interval containing it (published rows say they have none)."""
    return _intervals_result(aq_cross_model_report, CROSS_MODEL_METRICS)


@dg.asset_check(asset="aq_variability_report")
def aq_variability_report_intervals(aq_variability_report: pd.DataFrame) -> dg.AssetCheckResult:
    """Every share and alpha has an interval containing it, or its row says why not."""
    return _intervals_result(aq_variability_report, VARIABILITY_METRICS)
