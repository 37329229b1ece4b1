"""Assets: Study A across prompt variants and perturbations (issue 32 items 2 and 3), in the ``reports`` group.

Both read judgments and reports already made; the judging of a variant or perturbation is its own
registry entry's partition of ``aq_judgments`` (docs/prompt_variants.md).
"""

import time
from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.perturbation_report import perturbation_arms, perturbation_report
from argassets.argument_quality.prompt_axis_report import axis_frame, rank_swaps, reported, variant_report
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.stats.intervals import BootstrapSettings

#: What the perturbation report needs from the judgments (every order: the swap is the ``ba`` rows).
JUDGMENTS_IN = dg.AssetIn(
    "aq_judgments",
    metadata={
        "columns": ["judge_model", "comparison_id", "dimension", "strategy", "topic_id", '"order"', "run", "label"]
    },
)
_TEXT_COLUMNS = ("model", "prompt_variant", "perturbation", "entry", "strategy", "dimension", "metric")


class PerturbationConfig(dg.Config):
    """The clustered bootstrap of every figure (resampling topics)."""

    n_resamples: int = 2000
    level: float = 0.95
    seed: int = 20_240_229


def _typed(frame: pd.DataFrame, text: tuple[str, ...]) -> pd.DataFrame:
    """Text columns as strings, so that the table is VARCHAR even when empty."""
    return frame.astype({c: "string" for c in text if c in frame.columns})


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def aq_prompt_variant_report(
    registry: ModelRegistryResource, aq_agreement_report: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Per model with two or more prompt variants: min / median / max of κ and ρ with the experts, with intervals."""
    axis = axis_frame(registry.load().models)
    report = variant_report(aq_agreement_report, axis)
    swaps = rank_swaps(aq_agreement_report, axis)
    variants = axis.groupby("model")["prompt_variant"].nunique()
    metadata: dict[str, Any] = {
        "dagster/row_count": len(report),
        "models_with_variants": int((variants >= 2).sum()),
        "variants": dg.MetadataValue.md(markdown_table(report, max_rows=200))
        if len(report)
        else "no model has two variants",
        "rank_swaps": dg.MetadataValue.md(markdown_table(swaps[swaps["model_pairs"] > 0], max_rows=50))
        if (swaps["model_pairs"] > 0).any()
        else "no two models share two variants",
    }
    return dg.Output(_typed(report, _TEXT_COLUMNS + ("variant", "interval_method", "variants")), metadata=metadata)


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"}, ins={"aq_judgments": JUDGMENTS_IN})
def aq_perturbation_report(
    config: PerturbationConfig,
    registry: ModelRegistryResource,
    aq_judgments: pd.DataFrame,
    webis_expert_comparisons: pd.DataFrame,
    webis_arguments: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Per perturbation (order swap, padding, renamed or reordered options): verdict flip rate and BT rank change."""
    settings = BootstrapSettings(level=config.level, n_resamples=config.n_resamples, seed=config.seed)
    started = time.perf_counter()
    axis = axis_frame(registry.load().models)
    arms = perturbation_arms(axis, aq_judgments[["judge_model", "order"]].drop_duplicates())
    wanted = set(arms["entry"]) | set(arms["base_entry"])
    judgments = aq_judgments[aq_judgments["judge_model"].isin(wanted)]
    report = perturbation_report(judgments, arms, webis_expert_comparisons, webis_arguments, settings)
    wide = reported(report).pivot_table(
        index=["entry", "perturbation", "strategy", "dimension"], columns="metric", values="estimate", sort=False
    )
    metadata: dict[str, Any] = {
        "dagster/row_count": len(report),
        "compute_seconds": round(time.perf_counter() - started, 3),
        "intervals": settings.describe() + ", clusters: topics",
        "perturbations": dg.MetadataValue.md(markdown_table(wide.reset_index(), max_rows=200))
        if len(reported(report))
        else str(report["interval_method"].iat[0]),
    }
    return dg.Output(_typed(report, _TEXT_COLUMNS + ("interval_method",)), metadata=metadata)
