"""Asset checks: Study B's ensembles against the released ensemble files."""

import dagster as dg
import pandas as pd

from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.data import PublishedDataResource
from argassets.political.assets.ensembles import political_ensembles
from argassets.political.published import read_published_tsv
from argassets.political.published_index import RELEASED_ENSEMBLES, argument_published_rows, compare_with_released


def ensembles_against_release(
    ensembles: pd.DataFrame, index: pd.DataFrame, prompts: pd.DataFrame, released: dict[str, pd.DataFrame]
) -> dg.AssetCheckResult:
    """The check's result: E2 and E3 against the released files, on every argument they keep."""
    comparison = compare_with_released(ensembles, argument_published_rows(prompts, index), released)
    summary = comparison.groupby(["ensemble", "status"]).size().rename("arguments").reset_index()
    bad = comparison[comparison["status"].isin(["differs", "absent_from_platform"])]
    compared = comparison[comparison["status"] != "absent_from_release"]
    return dg.AssetCheckResult(
        passed=bad.empty and len(compared) > 0,
        metadata={
            "compared": len(compared),
            "equal": int((comparison["status"] == "equal").sum()),
            "differing_or_missing": len(bad),
            "rows_left_out_by_the_release": int((comparison["status"] == "absent_from_release").sum()),
            "summary": dg.MetadataValue.md(markdown_table(summary)),
            "examples": dg.MetadataValue.json(bad.head(10).astype(str).to_dict("records")),
        },
    )


@dg.asset_check(
    asset=political_ensembles,
    additional_ins={"political_published_index": dg.AssetIn(), "political_prompts": dg.AssetIn()},
)
def political_ensembles_match_released(
    data: PublishedDataResource,
    political_ensembles: pd.DataFrame,
    political_published_index: pd.DataFrame,
    political_prompts: pd.DataFrame,
) -> dg.AssetCheckResult:
    """E2 and E3 equal the released ensemble files on every KB argument whose released row the files keep."""
    # The ensemble files hold a subset of the nodeIDs (72 rows left out by the release).
    released = {
        name: read_published_tsv(data.require(path), expected_node_ids=None)
        for name, path in RELEASED_ENSEMBLES.items()
    }
    return ensembles_against_release(political_ensembles, political_published_index, political_prompts, released)
