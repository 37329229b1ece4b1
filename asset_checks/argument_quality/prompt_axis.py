"""Asset checks: the perturbation report's figures in their ranges and inside their intervals."""

from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.perturbation_report import perturbation_problems
from argassets.platform.reporting.presentation import markdown_table


@dg.asset_check(asset="aq_perturbation_report")
def aq_perturbation_report_ranges(aq_perturbation_report: pd.DataFrame) -> dg.AssetCheckResult:
    """Flip rates in [0, 1], ρ in [-1, 1], Δρ in [-2, 2]; each estimate inside its interval where it has one."""
    problems = perturbation_problems(aq_perturbation_report)
    metadata: dict[str, Any] = {"rows": len(aq_perturbation_report), "problems": len(problems)}
    if len(problems):
        metadata["problem_rows"] = dg.MetadataValue.md(markdown_table(problems, max_rows=50))
    return dg.AssetCheckResult(passed=problems.empty, metadata=metadata)
