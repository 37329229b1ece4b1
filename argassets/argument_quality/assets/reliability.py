"""Asset: Study A's reliability battery (experts and every configuration), a report of the ``reports`` group."""

import time
from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.reliability import ALL_DIMENSIONS, reliability_battery
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.stats.intervals import BootstrapSettings

#: Only what position consistency needs from the judgments (the ``ba`` rows and their keys).
POSITION_IN = dg.AssetIn(
    "aq_judgments",
    metadata={
        "columns": ["judge_model", "comparison_id", "dimension", "strategy", "topic_id", '"order"', "run", "label"]
    },
)


class BatteryConfig(dg.Config):
    """The clustered bootstrap of every figure (resampling topics)."""

    n_resamples: int = 2000
    level: float = 0.95
    seed: int = 20_240_229


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"}, ins={"aq_judgments": POSITION_IN})
def aq_reliability_battery(
    config: BatteryConfig,
    aq_majority_votes: pd.DataFrame,
    aq_judgments: pd.DataFrame,
    webis_expert_comparisons: pd.DataFrame,
    webis_arguments: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """How far to trust each judge: transitivity, position and run consistency, ties, length; the experts first."""
    settings = BootstrapSettings(level=config.level, n_resamples=config.n_resamples, seed=config.seed)
    started = time.perf_counter()
    try:
        battery = reliability_battery(
            aq_majority_votes, aq_judgments, webis_expert_comparisons, webis_arguments, settings
        )
    except ValueError as exc:
        raise dg.Failure(description=str(exc)) from exc
    overall = battery[battery["dimension"] == ALL_DIMENSIONS]
    wide = overall.pivot_table(
        index=["model", "strategy"], columns="metric", values="estimate", sort=False, dropna=False
    )
    metadata: dict[str, Any] = {
        "dagster/row_count": len(battery),
        "compute_seconds": round(time.perf_counter() - started, 3),
        "intervals": settings.describe() + ", clusters: topics",
        "battery": dg.MetadataValue.md(markdown_table(wide.reset_index(), max_rows=300)),
    }
    return dg.Output(battery, metadata=metadata)
