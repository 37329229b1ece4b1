"""Study B's prompt asset."""

import dagster as dg
import pandas as pd

from argassets.platform.presentation import markdown_table
from argassets.political.assets.common import _storable
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.prompts import render_prompts
from argassets.political.study_items import match_study_items
from resources.data import PublishedDataResource

HUMAN_DIR = "political/human"


@dg.asset(group_name="prompts", kinds={"duckdb", "pandas"})
def political_prompts(political_kb_arguments: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    """The published protocol prompt (system + user) for every knowledge-base argument, with its hash."""
    prompts = render_prompts(political_kb_arguments)
    return dg.Output(
        _storable(prompts),
        metadata={
            "dagster/row_count": len(prompts),
            "distinct_prompts": int(prompts["prompt_sha256"].nunique()),
            "example_user_message": dg.MetadataValue.md(
                "```\n" + (prompts["user"].iloc[0] if len(prompts) else "") + "\n```"
            ),
        },
    )


@dg.asset(group_name="corpora", kinds={"duckdb", "pandas"})
def political_study_items(data: PublishedDataResource, political_kb_arguments: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    """Every item of the two human studies, matched to a KB argument through its text (or listed as unmatched)."""
    human = data.require(HUMAN_DIR)
    pointwise = read_pointwise_study(human)
    pairwise = read_pairwise_study(human)
    matches = match_study_items(political_kb_arguments, pointwise.items, pairwise.items)
    summary = matches.groupby(["study", "match"]).size().reset_index(name="items")
    unmatched = matches[matches["match"] == "unmatched"]
    return dg.Output(
        _storable(matches),
        metadata={
            "dagster/row_count": len(matches),
            "matched": int(matches["argument_id"].notna().sum()),
            "unmatched": len(unmatched),
            "unmatched_items": dg.MetadataValue.json(unmatched[["study", "meta_id"]].to_dict("records")),
            "matches": dg.MetadataValue.md(markdown_table(summary)),
        },
    )
