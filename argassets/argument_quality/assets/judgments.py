"""Assets: judgments (Study A LLM and baseline verdicts, one partition per judge model)."""

from collections.abc import Iterator

import dagster as dg
import pandas as pd

from argassets.argument_quality.judgments import (
    N_RUNS,
    aq_sampling,
    build_requests,
    judgment_table,
    orders_for,
    scope_prompts,
)
from argassets.argument_quality.scope import STUDY_NAME, ArgumentQualityScope
from argassets.platform.judging.partition import (
    judge_partition,
    judging_metadata,
    non_answer_failure,
    outside_study,
)
from argassets.platform.registry.partitions import PARTITION_METADATA, model_partition_key, study_partitions
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource


def label_summary_markdown(table: pd.DataFrame) -> str:
    """Label counts (oriented to the comparison) per strategy, dimension and order, as Markdown."""
    if table.empty:
        return "_no judgments in this partition_"
    counts = (
        table.assign(outcome=table["label"].fillna("invalid"))
        .groupby(["strategy", "dimension", "order", "outcome"])
        .size()
        .unstack(fill_value=0)
    )
    outcomes = [c for c in ("A", "B", "Tie", "invalid") if c in counts.columns]
    summary = counts[outcomes].astype(int)
    share = summary.get("invalid", pd.Series(0, index=summary.index)) / summary.sum(axis=1)
    summary = summary.assign(**{"invalid share": share.map("{:.2%}".format)}).reset_index()
    return markdown_table(summary, max_rows=max(len(summary), 1))


@dg.asset(
    partitions_def=study_partitions(STUDY_NAME),
    metadata=PARTITION_METADATA,
    group_name="judgments",
    kinds={"duckdb", "pandas"},
    pool="gpu",
    output_required=False,
)
def aq_judgments(
    context: dg.AssetExecutionContext,
    registry: ModelRegistryResource,
    judge: JudgeResource,
    judgment_cache: JudgmentCacheResource,
    aq_prompts: pd.DataFrame,
    webis_expert_comparisons: pd.DataFrame,
    webis_arguments: pd.DataFrame,
) -> Iterator[dg.Output[pd.DataFrame]]:
    """Pairwise verdicts of one judge model on every in-scope Study A prompt, per order and run."""
    entry = registry.entry(model_partition_key(context))
    if outside_study(context, entry, STUDY_NAME):
        return
    scope = ArgumentQualityScope.of(entry)
    scope_text = scope.describe()
    sampling = aq_sampling(entry)
    orders = orders_for(entry)
    prompts = scope_prompts(aq_prompts, scope)
    requests, items = build_requests(prompts, webis_expert_comparisons, webis_arguments, orders)
    context.log.info(
        f"{entry.name}: {len(prompts)} prompts in scope ({scope_text}), orders {', '.join(orders)}, "
        f"{len(requests)} requests x {N_RUNS} runs"
    )
    judged = judge_partition(context, entry, judge, judgment_cache, requests, sampling, N_RUNS)
    table = judgment_table(
        items, judged.completions, entry.name, sampling, judged.backend, entry.is_baseline, scope_text
    )
    metadata = judging_metadata(entry, judged, table, sampling, scope_text)
    metadata.update(
        {
            "orders": ", ".join(orders),
            "runs": N_RUNS,
            "prompts_in_scope": len(prompts),
            "labels": dg.MetadataValue.md(label_summary_markdown(table)),
        }
    )
    yield dg.Output(table, metadata=metadata)
    failure = non_answer_failure(entry, judged)
    if failure is not None:
        raise failure
