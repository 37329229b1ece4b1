"""Asset: Study A's results page, one self-contained HTML file in the ``reports`` group."""

import dagster as dg
import pandas as pd

from argassets.argument_quality.assets.reports import best_set_by, results_page_path
from argassets.argument_quality.prompt_axis_report import axis_frame
from argassets.argument_quality.results_page import aq_page_html
from argassets.platform.reporting.pages import page_url
from argassets.platform.reporting.results_page import write_page
from argassets.platform.resources.registry import ModelRegistryResource


class ResultsPageConfig(dg.Config):
    """Where the page goes."""

    #: Folder of the HTML file (default: ``reports/`` beside the DuckDB file).
    reports_dir: str | None = None


@dg.asset(group_name="reports", kinds={"html", "plotly"})
def aq_results_page(
    config: ResultsPageConfig,
    aq_agreement_report: pd.DataFrame,
    aq_length_bias: pd.DataFrame,
    aq_comparisons: pd.DataFrame,
    aq_reliability_battery: pd.DataFrame,
    aq_prompt_variant_report: pd.DataFrame,
    aq_perturbation_report: pd.DataFrame,
    registry: ModelRegistryResource,
) -> dg.MaterializeResult:
    """Study A's results in one HTML file that opens offline: leaderboards with intervals, comparisons,
    verdicts, the trust table, prompt variants and perturbations, plots."""
    axis = (aq_prompt_variant_report, aq_perturbation_report, axis_frame(registry.load().models))
    text = aq_page_html(
        aq_agreement_report, aq_length_bias, best_set_by(), aq_comparisons, aq_reliability_battery, axis
    )
    path = write_page(results_page_path(config.reports_dir), text)
    return dg.MaterializeResult(
        metadata={
            "results_page": dg.MetadataValue.path(str(path)),
            # served by `argassets ui` (browsers refuse file:// links); `argassets open` finds it too
            "open": dg.MetadataValue.url(page_url(path.name)),
            "open_metric_choice": dg.MetadataValue.url(page_url(f"{path.name}#metric-choice")),
            "size_bytes": len(text.encode("utf-8")),
        }
    )
