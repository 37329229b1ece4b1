"""Asset: Study B's reliability battery (the pointwise annotators and every judge), a report of the ``reports`` group."""

import time
from typing import Any

import dagster as dg
import pandas as pd

from argassets.platform.reporting.partition_coverage import check_partition_coverage
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.stats.intervals import BootstrapSettings
from argassets.political.assets.common import storable
from argassets.political.assets.prompts import HUMAN_DIR
from argassets.political.human_studies import read_annotations
from argassets.political.model_stats import PREDICTION_STATS_COLUMNS
from argassets.political.reliability import pointwise_human_labels, reliability_battery
from argassets.political.validation.cluster_bootstrap import LEVEL, N_RESAMPLES, SEED

KB_COLUMNS = ["argument_id", "episode"]


class PoliticalBatteryConfig(dg.Config):
    """The clustered bootstrap of every figure (resampling debates), as the validation's intervals."""

    n_resamples: int = N_RESAMPLES
    level: float = LEVEL
    seed: int = SEED


@dg.asset(
    group_name="reports",
    kinds={"duckdb", "pandas"},
    ins={
        # only what the battery reads: a judge's answers per argument and repetition
        "political_predictions": dg.AssetIn(metadata={"columns": PREDICTION_STATS_COLUMNS}),
        "political_kb_arguments": dg.AssetIn(metadata={"columns": KB_COLUMNS}),
    },
)
def political_reliability_battery(
    context: dg.AssetExecutionContext,
    config: PoliticalBatteryConfig,
    data: PublishedDataResource,
    political_predictions: pd.DataFrame,
    political_study_items: pd.DataFrame,
    political_kb_arguments: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """How far to trust each pointwise judge: repetition alphas, NA propensity, scale use; the annotators first."""
    coverage = check_partition_coverage(context, "political_predictions", political_predictions)
    settings = BootstrapSettings(level=config.level, n_resamples=config.n_resamples, seed=config.seed)
    started = time.perf_counter()
    labels, arguments = pointwise_human_labels(read_annotations(data.require(HUMAN_DIR)), political_study_items)
    debates = political_kb_arguments.drop_duplicates("argument_id").set_index("argument_id")["episode"].astype(str)
    try:
        battery = reliability_battery(political_predictions, debates, arguments, labels, arguments, settings)
    except ValueError as exc:
        raise dg.Failure(description=str(exc)) from exc
    study = battery[battery["scope"] == "study"]
    wide = study.pivot_table(index=["system", "kind"], columns="metric", values="estimate", sort=False, dropna=False)
    metadata: dict[str, Any] = {
        "dagster/row_count": len(battery),
        "compute_seconds": round(time.perf_counter() - started, 3),
        "intervals": settings.describe() + ", clusters: debates",
        "flagged": int(battery["flagged"].sum()),
        "study_items": dg.MetadataValue.md(markdown_table(wide.round(3).reset_index(), max_rows=300)),
        **coverage,
    }
    return dg.Output(storable(battery), metadata=metadata)
