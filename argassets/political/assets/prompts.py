"""Study B's prompt asset."""

import dagster as dg
import pandas as pd

from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.data import PublishedDataResource
from argassets.political.assets.common import storable
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.prompts import render_prompts
from argassets.political.published_index import (
    RELEASED_PROMPTS,
    argument_published_rows,
    build_published_index,
    read_released_prompts,
)
from argassets.political.study_items import match_study_items

HUMAN_DIR = "political/human"


@dg.asset(group_name="prompts", kinds={"duckdb", "pandas"})
def political_prompts(political_kb_arguments: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    """The published protocol prompt (system + user) for every knowledge-base argument, with its hash."""
    prompts = render_prompts(political_kb_arguments)
    return dg.Output(
        storable(prompts),
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
        storable(matches),
        metadata={
            "dagster/row_count": len(matches),
            "matched": int(matches["argument_id"].notna().sum()),
            "unmatched": len(unmatched),
            "unmatched_items": dg.MetadataValue.json(unmatched[["study", "meta_id"]].to_dict("records")),
            "matches": dg.MetadataValue.md(markdown_table(summary)),
        },
    )


@dg.asset(group_name="corpora", kinds={"duckdb", "pandas"})
def political_published_index(data: PublishedDataResource, political_prompts: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    """Every released prompt row (nodeID) mapped to the KB argument that received its prompt, with its match rule."""
    path = data.require(RELEASED_PROMPTS)
    released = read_released_prompts(path)
    index = build_published_index(political_prompts, released)
    platform = political_prompts.set_index("argument_id")
    mapped = index[index["argument_id"].notna()]
    same_user = (
        mapped["argument_id"]
        .map(platform["user"])
        .eq(released.set_index("node_id").loc[mapped["node_id"], "user"].to_numpy())
    )
    same_system = (
        mapped["argument_id"]
        .map(platform["system"])
        .eq(released.set_index("node_id").loc[mapped["node_id"], "system"].to_numpy())
    )
    carried = argument_published_rows(political_prompts, index)
    unmatched = index[index["match"] == "unmatched"]
    by_rule = index.groupby("match").size().rename("rows").reset_index()
    return dg.Output(
        storable(index),
        metadata={
            "dagster/row_count": len(index),
            "file": str(path),
            "matched_rows": len(mapped),
            "rows_by_rule": dg.MetadataValue.md(markdown_table(by_rule)),
            "unmatched_rows": dg.MetadataValue.json(unmatched[["node_id", "reason"]].to_dict("records")),
            "messages_equal_to_released": int((same_user & same_system).sum()),
            "messages_differing_from_released": int((~(same_user & same_system)).sum()),
            "distinct_prompt_texts": int(index.loc[index["representative"]].shape[0]),
            "repeat_rows": int((index["argument_id"].notna() & ~index["representative"]).sum()),
            "kb_arguments_with_published_positions": len(carried),
            "kb_arguments_without": int(len(political_prompts) - len(carried)),
            "repeat_rule": "the first row (lowest nodeID) of a prompt text stands for it; repeats are kept here, not pooled",
        },
    )
