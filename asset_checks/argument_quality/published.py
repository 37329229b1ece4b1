"""Asset checks: the Study A paper's published rows (all there, exact, in range) in the reports."""

from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.published import published_grid_problems, published_rows_problems, read_published_tables
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.data import PublishedDataResource


def _check(report: pd.DataFrame, data: PublishedDataResource, reference: str) -> dg.AssetCheckResult:
    try:
        tables = read_published_tables(data.root())
    except ValueError as exc:
        return dg.AssetCheckResult(passed=False, metadata={"error": str(exc)})
    published = tables.get(reference)
    if published is None:
        present = int((report["kind"] == "published").sum()) if "kind" in report.columns else 0
        # Without the published table there must be no published row either.
        return dg.AssetCheckResult(
            passed=present == 0,
            metadata={"published_rows": present, "note": "no published table under the data folder"},
        )
    problems = pd.concat(
        [
            published_grid_problems(published).rename(columns={"paper_model": "model"}),
            published_rows_problems(report, published),
        ],
        ignore_index=True,
    )
    metadata: dict[str, Any] = {"published_configurations": len(published), "problems": len(problems)}
    if len(problems):
        metadata["problem_rows"] = dg.MetadataValue.md(markdown_table(problems, max_rows=50))
    return dg.AssetCheckResult(passed=problems.empty, metadata=metadata)


@dg.asset_check(asset="aq_agreement_report")
def aq_agreement_report_published_rows(
    aq_agreement_report: pd.DataFrame, data: PublishedDataResource
) -> dg.AssetCheckResult:
    """The paper's table is complete, and each of its configurations is in the report exactly, with its mean, in range."""
    return _check(aq_agreement_report, data, "experts")


@dg.asset_check(asset="aq_cross_model_report")
def aq_cross_model_report_published_rows(
    aq_cross_model_report: pd.DataFrame, data: PublishedDataResource
) -> dg.AssetCheckResult:
    """The paper's best-vs-others table is complete and in the report exactly, with its means, in range."""
    return _check(aq_cross_model_report, data, "best")
