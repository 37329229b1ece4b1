"""Asset: Study B's results page, one self-contained HTML file in the ``reports`` group."""

from pathlib import Path

import dagster as dg
import pandas as pd

from argassets.platform.paths import resolve_duckdb_path
from argassets.platform.reporting.pages import page_url
from argassets.platform.reporting.results_page import write_page
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.political.paper_figures import PAPER_ANCHOR
from argassets.political.results_page import political_page_html
from argassets.political.results_page_kb import KB_ANCHOR, KbTables
from argassets.political.results_page_trust import TRUST_ANCHOR

#: File name of Study B's results page in the reports folder.
RESULTS_PAGE = "political_results.html"


def results_page_path(explicit: str | None = None) -> Path:
    """Where Study B's results page is written: ``explicit``, else ``reports/`` beside the DuckDB file."""
    return (Path(explicit) if explicit else resolve_duckdb_path().parent / "reports") / RESULTS_PAGE


class ResultsPageConfig(dg.Config):
    """Where the page goes."""

    #: Folder of the HTML file (default: ``reports/`` beside the DuckDB file).
    reports_dir: str | None = None


@dg.asset(group_name="reports", kinds={"html", "plotly"})
def political_results_page(
    config: ResultsPageConfig,
    registry: ModelRegistryResource,
    political_pairwise_validation: pd.DataFrame,
    political_pointwise_validation: pd.DataFrame,
    political_pairwise_comparisons: pd.DataFrame,
    political_pointwise_comparisons: pd.DataFrame,
    political_relation_distance: pd.DataFrame,
    political_relation_robustness: pd.DataFrame,
    political_ambiguity: pd.DataFrame,
    political_debate_positions: pd.DataFrame,
    political_acceptability: pd.DataFrame,
    political_kb_facets: pd.DataFrame,
    political_reliability_battery: pd.DataFrame,
) -> dg.MaterializeResult:
    """Study B's results in one HTML file that opens offline: every system by source, the paper's figures, trust, the KB findings."""
    comparisons = pd.concat([political_pairwise_comparisons, political_pointwise_comparisons], ignore_index=True)
    kb = KbTables(
        political_relation_distance,
        political_relation_robustness,
        political_ambiguity,
        political_debate_positions,
        political_acceptability,
        political_kb_facets,
    )
    text = political_page_html(
        political_pairwise_validation,
        political_pointwise_validation,
        registry.load(),
        comparisons,
        kb,
        political_reliability_battery,
    )
    path = write_page(results_page_path(config.reports_dir), text)
    return dg.MaterializeResult(
        metadata={
            "results_page": dg.MetadataValue.path(str(path)),
            # served by `argassets ui` (browsers refuse file:// links); `argassets open` finds it too
            "open": dg.MetadataValue.url(page_url(path.name)),
            "open_paper_figures": dg.MetadataValue.url(page_url(f"{path.name}#{PAPER_ANCHOR}")),
            "open_kb_findings": dg.MetadataValue.url(page_url(f"{path.name}#{KB_ANCHOR}")),
            "open_trust": dg.MetadataValue.url(page_url(f"{path.name}#{TRUST_ANCHOR}")),
            "size_bytes": len(text.encode("utf-8")),
        }
    )
