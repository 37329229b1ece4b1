"""Asset checks: Study B's reliability battery (every judge and the annotators present, values in range)."""

from typing import Any

import dagster as dg
import pandas as pd

from argassets.platform.reporting.presentation import markdown_table
from argassets.political.reliability import battery_problems

SYSTEMS_IN = {"political_model_stats": dg.AssetIn("political_model_stats", metadata={"columns": ["system"]})}


@dg.asset_check(asset="political_reliability_battery", additional_ins=SYSTEMS_IN)
def political_reliability_battery_rows_and_ranges(
    political_reliability_battery: pd.DataFrame, political_model_stats: pd.DataFrame
) -> dg.AssetCheckResult:
    """The annotators and every judge have every figure in each scope; each in its range and in its interval."""
    systems = sorted(political_model_stats["system"].astype(str).unique()) if len(political_model_stats) else []
    problems = battery_problems(political_reliability_battery, systems)
    metadata: dict[str, Any] = {"rows": len(political_reliability_battery), "problems": len(problems)}
    if len(problems):
        metadata["problem_rows"] = dg.MetadataValue.md(markdown_table(problems, max_rows=50))
    return dg.AssetCheckResult(passed=problems.empty, metadata=metadata)
