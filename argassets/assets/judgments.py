"""Assets: judgments (Study A LLM and baseline verdicts, one partition per judge model)."""

import json
import time
from collections.abc import Iterator

import dagster as dg
import pandas as pd

from argassets.lib.aq_judgments import (
    N_RUNS,
    aq_sampling,
    build_requests,
    judgment_table,
    orders_for,
    scope_prompts,
)
from argassets.lib.judges import default_batch_size
from argassets.lib.judging import JudgmentCache, judge_incrementally
from argassets.partitions import PARTITION_METADATA, judge_models_partitions
from resources.judges import JudgeResource, JudgmentCacheResource
from resources.registry import ModelRegistryResource


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
    lines = ["| strategy | dimension | order | " + " | ".join(outcomes) + " | invalid share |"]
    lines.append("|---|---|---|" + "---:|" * (len(outcomes) + 1))
    for (strategy, dimension, order), row in counts.iterrows():
        total = int(row.sum())
        invalid = int(row.get("invalid", 0))
        lines.append(
            f"| {strategy} | {dimension} | {order} | "
            + " | ".join(str(int(row[c])) for c in outcomes)
            + f" | {invalid / total:.2%} |"
        )
    return "\n".join(lines)


@dg.asset(
    partitions_def=judge_models_partitions,
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
    name = context.partition_key
    entry = registry.entry(name)
    scope_text = entry.scope.describe()
    if not entry.takes_part_in("argument_quality"):
        # Nothing to judge: the partition is not materialised (its checks are skipped too).
        context.log.info(f"{name} does not take part in argument_quality: nothing materialised")
        return

    sampling = aq_sampling(entry)
    orders = orders_for(entry)
    prompts = scope_prompts(aq_prompts, entry.scope)
    requests, items = build_requests(prompts, webis_expert_comparisons, webis_arguments, orders)
    context.log.info(
        f"{name}: {len(prompts)} prompts in scope ({scope_text}), orders {', '.join(orders)}, "
        f"{len(requests)} requests x {N_RUNS} runs"
    )
    the_judge = judge.build(entry)
    # Imported judgments are re-read from their file every time; everything else is cached.
    cache = JudgmentCache(":memory:") if entry.backend == "import" else judgment_cache.open()
    started = time.perf_counter()
    try:
        completions = judge_incrementally(
            the_judge,
            name,
            requests,
            sampling,
            N_RUNS,
            cache,
            batch_size=default_batch_size(entry),
            log=context.log,
        )
    finally:
        cache.close()
        close = getattr(the_judge, "close", None)
        if callable(close):
            close()
    elapsed = time.perf_counter() - started
    table = judgment_table(
        items, completions, name, sampling, the_judge.backend, entry.is_baseline, scope_text
    )
    sent = sum(not c.from_cache for c in completions)
    invalid = int((~table["is_valid"]).sum())
    metadata = {
        "dagster/row_count": len(table),
        "backend": entry.backend,
        "is_baseline": entry.is_baseline,
        "model_id": entry.model_id or "",
        "scope": scope_text,
        "orders": ", ".join(orders),
        "runs": N_RUNS,
        "sampling": dg.MetadataValue.json({**sampling.as_dict(), "key": sampling.key()}),
        "prompts_in_scope": len(prompts),
        "completions_sent": sent,
        "completions_from_cache": len(completions) - sent,
        "invalid": invalid,
        "invalid_share": float(invalid / len(table)) if len(table) else 0.0,
        "elapsed_s": round(elapsed, 3),
        "cache": judgment_cache.location() if entry.backend != "import" else "none (import)",
        "labels": dg.MetadataValue.md(label_summary_markdown(table)),
    }
    requests_sent = getattr(the_judge, "requests_sent", None)
    if requests_sent is not None:
        metadata["http_requests"] = int(requests_sent)
        metadata["http_retries"] = int(getattr(the_judge, "retries", 0))
    if invalid:
        examples = table.loc[~table["is_valid"], "raw_output"].head(5).tolist()
        metadata["invalid_examples"] = dg.MetadataValue.json(json.loads(json.dumps(examples)))
    yield dg.Output(table, metadata=metadata)
