"""Asset checks: argument_quality (Study A corpora and judgments).

Each check tests one property and reports its counts in the metadata. Checks on the corpus are
blocking: nothing downstream should run on comparisons that break the protocol's data facts.
"""

import os
from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.comparison_graph import comparison_components, cross_topic_comparisons, self_comparisons
from argassets.argument_quality.judgments import (
    N_RUNS,
    completeness,
    expected_items,
    label_problems,
    orders_for,
    scope_prompts,
)
from argassets.argument_quality.scope import STUDY_NAME, ArgumentQualityScope
from argassets.platform.registry.partitions import study_partitions
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.registry import ModelRegistryResource

#: Environment variable overriding the default bound on the share of invalid judgments.
MAX_INVALID_SHARE_ENV_VAR = "ARGASSETS_MAX_INVALID_SHARE"
DEFAULT_MAX_INVALID_SHARE = 0.01


def _examples(frame: pd.DataFrame, columns: list[str], n: int = 5) -> dg.MetadataValue:
    return dg.MetadataValue.json(frame[columns].head(n).astype(str).to_dict(orient="records"))


# --- Expert comparisons ---------------------------------------------------------------------------


@dg.asset_check(asset="webis_expert_comparisons", blocking=True)
def webis_expert_comparisons_no_self_comparison(webis_expert_comparisons: pd.DataFrame) -> dg.AssetCheckResult:
    """No comparison pits an argument against itself."""
    bad = self_comparisons(webis_expert_comparisons)
    metadata: dict[str, Any] = {"self_comparisons": len(bad)}
    if len(bad):
        metadata["examples"] = _examples(bad, ["comparison_id", "discussion_id_a", "argument_id_a"])
    return dg.AssetCheckResult(passed=bad.empty, metadata=metadata)


@dg.asset_check(
    asset="webis_expert_comparisons",
    blocking=True,
    additional_ins={"webis_arguments": dg.AssetIn("webis_arguments")},
)
def webis_expert_comparisons_same_topic(
    webis_expert_comparisons: pd.DataFrame, webis_arguments: pd.DataFrame
) -> dg.AssetCheckResult:
    """Both arguments of every comparison belong to the comparison's topic (no comparison across topics)."""
    bad = cross_topic_comparisons(webis_expert_comparisons, webis_arguments)
    metadata: dict[str, Any] = {"cross_topic_comparisons": len(bad), "comparisons": len(webis_expert_comparisons)}
    if len(bad):
        metadata["examples"] = _examples(
            bad, ["comparison_id", "topic_id", "discussion_id_a", "argument_id_a", "discussion_id_b", "argument_id_b"]
        )
    return dg.AssetCheckResult(passed=bad.empty, metadata=metadata)


@dg.asset_check(asset="webis_expert_comparisons")
def webis_expert_comparisons_connected(webis_expert_comparisons: pd.DataFrame) -> dg.AssetCheckResult:
    """The expert comparison graph of every topic and dimension is connected (one component)."""
    components = comparison_components(webis_expert_comparisons)
    split = components[components["components"] != 1]
    shown = components[["topic_id", "dimension", "arguments", "comparisons", "components", "largest_component"]]
    table = shown.rename(columns={"topic_id": "topic", "largest_component": "largest component"})
    return dg.AssetCheckResult(
        passed=split.empty,
        metadata={
            "graphs": len(components),
            "disconnected_graphs": len(split),
            "max_components": int(components["components"].max()) if len(components) else 0,
            "components": dg.MetadataValue.md(markdown_table(table, max_rows=max(len(table), 1))),
        },
    )


# --- Judgments ------------------------------------------------------------------------------------


class LabelValidityConfig(dg.Config):
    """Bound on the share of unparseable judgments (default ``$ARGASSETS_MAX_INVALID_SHARE`` or 1%)."""

    max_invalid_share: float | None = None


@dg.asset_check(asset="aq_judgments", partitions_def=study_partitions(STUDY_NAME))
def aq_judgments_label_validity(config: LabelValidityConfig, aq_judgments: pd.DataFrame) -> dg.AssetCheckResult:
    """Labels are only A/B/Tie (null exactly when invalid) and the invalid share stays below the bound."""
    bound = config.max_invalid_share
    if bound is None:
        bound = float(os.environ.get(MAX_INVALID_SHARE_ENV_VAR, DEFAULT_MAX_INVALID_SHARE))
    problems = label_problems(aq_judgments)
    rows = len(aq_judgments)
    share = problems["invalid"] / rows if rows else 0.0
    passed = (
        problems["bad_label"] == 0
        and problems["bad_presented_label"] == 0
        and problems["validity_mismatch"] == 0
        and share <= bound
    )
    metadata: dict[str, Any] = {**problems, "rows": rows, "invalid_share": share, "max_invalid_share": bound}
    if problems["invalid"]:
        metadata["invalid_examples"] = _examples(
            aq_judgments[~aq_judgments["is_valid"]], ["comparison_id", "strategy", "order", "run", "raw_output"]
        )
    return dg.AssetCheckResult(passed=passed, metadata=metadata)


@dg.asset_check(
    asset="aq_judgments",
    partitions_def=study_partitions(STUDY_NAME),
    additional_ins={"aq_prompts": dg.AssetIn("aq_prompts")},
)
def aq_judgments_complete(
    context: dg.AssetCheckExecutionContext,
    registry: ModelRegistryResource,
    aq_judgments: pd.DataFrame,
    aq_prompts: pd.DataFrame,
) -> dg.AssetCheckResult:
    """Every in-scope comparison x dimension x strategy (x order) x run is present exactly once.

    An adaptive entry's partition is partial by design: only the comparisons it chose are expected,
    each in every order and run; the comparisons it did not judge are counted, not missing.
    """
    entry = registry.entry(context.partition_key)
    if entry.takes_part_in("argument_quality"):
        orders = orders_for(entry)
        in_scope = scope_prompts(aq_prompts, ArgumentQualityScope.of(entry))
    else:
        orders = ()
        in_scope = aq_prompts.iloc[0:0]
    design: dict[str, Any] = {}
    if entry.adaptive is not None:
        in_scope, design = judged_by_design(in_scope, aq_judgments)
    counts = completeness(aq_judgments, expected_items(in_scope, orders, N_RUNS))
    passed = counts["missing"] == 0 and counts["duplicated"] == 0 and counts["unexpected"] == 0
    return dg.AssetCheckResult(
        passed=passed,
        metadata={
            **counts,
            **design,
            "scope": entry.scope_text(STUDY_NAME),
            "orders": ", ".join(orders) or "none",
            "runs": N_RUNS,
        },
    )


def judged_by_design(in_scope: pd.DataFrame, judgments: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The in-scope prompts an adaptive partition judged, and what the check says of the rest."""
    key = ["comparison_id", "dimension", "strategy"]
    judged = in_scope.merge(judgments[key].drop_duplicates(), on=key, how="inner")
    notes = sorted({str(s) for s in judgments.get("scope", pd.Series(dtype=object)).dropna().unique()})
    return judged, {
        "design": "adaptive: partial by design",
        "design_note": " | ".join(notes) or "no judgments yet",
        "prompts_in_scope": len(in_scope),
        "prompts_judged": len(judged),
        "prompts_not_judged_by_design": len(in_scope) - len(judged),
    }
