"""Asset checks: the retrieval evaluation (filters obeyed, opposite filters separated)."""

import dagster as dg
import pandas as pd

from argassets.political.assets.retrieval import political_retrieval_evaluation
from argassets.political.retrieval.evaluation import LEFT_RANGE, RIGHT_RANGE


@dg.asset_check(asset=political_retrieval_evaluation)
def retrieval_results_inside_filter(political_retrieval_evaluation: pd.DataFrame) -> dg.AssetCheckResult:
    """Every result of every filtered setting lies inside its filter's range."""
    worst = political_retrieval_evaluation["share_inside_filter"].min()
    return dg.AssetCheckResult(passed=bool(worst == 1.0), metadata={"min_share_inside_filter": float(worst)})


@dg.asset_check(asset=political_retrieval_evaluation)
def retrieval_opposite_filters_separate(political_retrieval_evaluation: pd.DataFrame) -> dg.AssetCheckResult:
    """Vector results under the left and the right filter differ in mean position by at least the ranges' gap."""
    table = political_retrieval_evaluation.set_index("setting")
    left, right = float(table.loc["vector/left", "mean_position"]), float(table.loc["vector/right", "mean_position"])
    gap = RIGHT_RANGE[0] - LEFT_RANGE[1]
    return dg.AssetCheckResult(
        passed=bool(right - left >= gap),
        metadata={
            "left_mean_position": round(left, 2),
            "right_mean_position": round(right, 2),
            "difference": round(right - left, 2),
            "required_gap": gap,
        },
    )
