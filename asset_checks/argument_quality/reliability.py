"""Asset checks: the reliability battery (every configuration and the experts present, values in range)."""

from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.bt_scores import CONFIG_COLUMNS
from argassets.argument_quality.reliability import battery_problems
from argassets.platform.reporting.presentation import markdown_table

CONFIG_IN = {"aq_majority_votes": dg.AssetIn("aq_majority_votes", metadata={"columns": list(CONFIG_COLUMNS)})}


@dg.asset_check(asset="aq_reliability_battery", additional_ins=CONFIG_IN)
def aq_reliability_battery_rows_and_ranges(
    aq_reliability_battery: pd.DataFrame, aq_majority_votes: pd.DataFrame
) -> dg.AssetCheckResult:
    """The experts and every configuration have every figure per dimension and 'all'; each in range and in its interval."""
    configurations = aq_majority_votes[["model", "strategy"]].drop_duplicates() if len(aq_majority_votes) else None
    problems = battery_problems(aq_reliability_battery, configurations)
    metadata: dict[str, Any] = {"rows": len(aq_reliability_battery), "problems": len(problems)}
    if len(problems):
        metadata["problem_rows"] = dg.MetadataValue.md(markdown_table(problems, max_rows=50))
    return dg.AssetCheckResult(passed=problems.empty, metadata=metadata)
