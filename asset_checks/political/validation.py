"""Asset checks: Study B's validation reports carry an interval on every figure (docs/uncertainty.md)."""

from typing import Any

import dagster as dg
import pandas as pd

from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.stats.tables import interval_problems
from argassets.political.validation.intervals import PAIRWISE_METRICS, POINTWISE_METRICS


def _intervals_result(report: pd.DataFrame, metrics: tuple[str, ...], facet: str) -> dg.AssetCheckResult:
    bad = interval_problems(report, metrics, ["system", facet])
    metadata: dict[str, Any] = {"rows": len(report), "problems": len(bad)}
    if len(bad):
        metadata["figures"] = dg.MetadataValue.md(markdown_table(bad, max_rows=50))
    return dg.AssetCheckResult(passed=bad.empty, metadata=metadata)


@dg.asset_check(asset="political_pointwise_validation")
def political_pointwise_validation_intervals(political_pointwise_validation: pd.DataFrame) -> dg.AssetCheckResult:
    """Every figure of every system and agreement row has an interval over debates containing it."""
    return _intervals_result(political_pointwise_validation, POINTWISE_METRICS, "partition")


@dg.asset_check(asset="political_pairwise_validation")
def political_pairwise_validation_intervals(political_pairwise_validation: pd.DataFrame) -> dg.AssetCheckResult:
    """Every figure of every system and context row has an interval over debates containing it."""
    return _intervals_result(political_pairwise_validation, PAIRWISE_METRICS, "subset")
