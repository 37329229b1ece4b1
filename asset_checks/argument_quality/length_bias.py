"""Asset checks: the length-bias report (a row set for the experts and every configuration, values in range)."""

from typing import Any

import dagster as dg
import numpy as np
import pandas as pd

from argassets.argument_quality.bt_scores import CONFIG_COLUMNS
from argassets.argument_quality.length_bias_checks import length_bias_problems
from argassets.platform.reporting.presentation import markdown_table

CONFIG_IN = {"aq_majority_votes": dg.AssetIn("aq_majority_votes", metadata={"columns": list(CONFIG_COLUMNS)})}


@dg.asset_check(asset="aq_length_bias", additional_ins=CONFIG_IN)
def aq_length_bias_rows_and_ranges(
    aq_length_bias: pd.DataFrame, aq_majority_votes: pd.DataFrame
) -> dg.AssetCheckResult:
    """The experts and every configuration present have one row per dimension plus 'all'; shares, kappas, correlations in range."""
    configurations = aq_majority_votes[CONFIG_COLUMNS].drop_duplicates() if len(aq_majority_votes) else None
    problems = length_bias_problems(aq_length_bias, configurations)
    metadata: dict[str, Any] = {
        "rows": len(aq_length_bias),
        "configurations": int(len(configurations)) if configurations is not None else 0,
        "problems": len(problems),
        "max_share_longer": round(float(np.nanmax(aq_length_bias["share_longer"])), 4)
        if len(aq_length_bias)
        else float("nan"),
    }
    if len(problems):
        metadata["problem_rows"] = dg.MetadataValue.md(markdown_table(problems, max_rows=50))
    return dg.AssetCheckResult(passed=problems.empty, metadata=metadata)
