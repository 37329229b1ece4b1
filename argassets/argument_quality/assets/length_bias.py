"""Assets: Study A's length bias (experts and every configuration), a report of the ``reports`` group."""

from typing import Any, Literal

import dagster as dg
import pandas as pd

from argassets.argument_quality.assets.reports import (
    png_metadata,
    recorded_model_info,
    reports_folder,
    results_page_path,
)
from argassets.argument_quality.bt_scores import published_scores
from argassets.argument_quality.length_bias_report import ALL_DIMENSIONS, KIND_REFERENCE, length_bias_report
from argassets.argument_quality.plots import plot_longer_share
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.registry import ModelRegistryResource

#: Columns of the Markdown summary on the asset page (the table in DuckDB has them all).
SUMMARY_COLUMNS = [
    "model",
    "strategy",
    "kind",
    "share_longer",
    "share_longer_experts",
    "kappa_q1",
    "kappa_q4",
    "pearson",
    "partial_pearson",
    "length_correlation",
    "lc_beta",
    "lc_pearson",
]


class LengthBiasConfig(dg.Config):
    """Length strata and the length-controlled BT fit."""

    #: Strata of |log length ratio| (quantiles of the expert comparisons of each dimension).
    n_strata: int = 4
    #: Ridge penalty of the length-controlled BT strengths.
    ridge: float = 0.1
    ties: Literal["win_each", "half_each", "drop"] = "win_each"
    #: Folder for the PNG file (default: ``reports/`` beside the DuckDB file).
    reports_dir: str | None = None


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def aq_length_bias(
    config: LengthBiasConfig,
    registry: ModelRegistryResource,
    aq_majority_votes: pd.DataFrame,
    aq_bt_scores: pd.DataFrame,
    webis_expert_comparisons: pd.DataFrame,
    webis_arguments: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Share of verdicts to the longer argument, agreement by length stratum, length-controlled BT: experts and judges."""
    info = recorded_model_info(registry, aq_majority_votes)
    flags = {name: (i.is_baseline, i.scope) for name, i in info.items()}
    try:
        report, edges = length_bias_report(
            webis_expert_comparisons,
            aq_majority_votes,
            aq_bt_scores,
            webis_arguments,
            published_scores(webis_arguments),
            flags,
            n_strata=config.n_strata,
            ridge=config.ridge,
            ties=config.ties,
        )
    except ValueError as exc:
        raise dg.Failure(description=str(exc)) from exc
    overall = report[report["dimension"] == ALL_DIMENSIONS]
    experts = overall[overall["kind"] == KIND_REFERENCE]
    metadata: dict[str, Any] = {
        "dagster/row_count": len(report),
        "configurations": int((report["kind"] != KIND_REFERENCE).sum() // 4) if len(report) else 0,
        "experts_share_longer": round(float(experts["share_longer"].iloc[0]), 4) if len(experts) else float("nan"),
        "report": dg.MetadataValue.md(
            "Over all three dimensions (per dimension in the table):\n\n"
            + markdown_table(overall[[c for c in SUMMARY_COLUMNS if c in overall.columns]], max_rows=300)
        ),
        "length_strata": dg.MetadataValue.md(markdown_table(edges)),
        "settings": f"{config.n_strata} strata, ridge {config.ridge}, ties {config.ties}",
        "results_page": dg.MetadataValue.path(str(results_page_path(config.reports_dir))),
    }
    if len(report):
        folder = reports_folder(config.reports_dir)
        metadata.update(
            png_metadata(folder, "aq_length_bias", plot_longer_share(report), "share to the longer argument")
        )
    return dg.Output(report, metadata=metadata)
