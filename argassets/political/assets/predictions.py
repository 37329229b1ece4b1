"""Study B's predictions: one partition per judge model."""

from collections.abc import Iterator

import dagster as dg
import pandas as pd

from argassets.platform.judging.partition import judge_partition, judging_metadata, non_answer_failure, outside_study
from argassets.platform.registry.partitions import PARTITION_METADATA, model_partition_key, study_partitions
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.political.predictions import (
    build_requests,
    out_of_range_warning,
    political_sampling,
    prediction_table,
    published_prediction_table,
    scope_arguments,
    study_first,
)
from argassets.political.prompts import N_REPETITIONS
from argassets.political.published import published_predictions_file, published_tsv_to_predictions, read_published_tsv
from argassets.political.published_index import argument_published_rows
from argassets.political.scope import STUDY_NAME, PoliticalScope


@dg.asset(
    partitions_def=study_partitions(STUDY_NAME),
    metadata=PARTITION_METADATA,
    group_name="judgments",
    kinds={"duckdb", "pandas"},
    pool="gpu",
    output_required=False,
)
def political_predictions(
    context: dg.AssetExecutionContext,
    registry: ModelRegistryResource,
    judge: JudgeResource,
    judgment_cache: JudgmentCacheResource,
    data: PublishedDataResource,
    political_prompts: pd.DataFrame,
    political_study_items: pd.DataFrame,
    political_published_index: pd.DataFrame,
) -> Iterator[dg.Output[pd.DataFrame]]:
    """Five left-right scores (0-100, NA or invalid) per KB argument from one judge model."""
    name = model_partition_key(context)
    entry = registry.entry(name)
    if outside_study(context, entry, STUDY_NAME):
        return
    scope = PoliticalScope.of(entry)
    scope_text = scope.describe()

    published_file = published_predictions_file(entry)
    if published_file is not None:
        path = published_file.resolve(data.root())
        published = read_published_tsv(path)
        carried = argument_published_rows(political_prompts, political_published_index)
        if scope.max_arguments is not None:
            chosen = scope_arguments(carried, study_first(political_study_items), scope.max_arguments)
            carried = carried[carried["argument_id"].isin(set(chosen["argument_id"]))]
        expanded = published_tsv_to_predictions(published, name, N_REPETITIONS, argument_rows=carried)
        table = published_prediction_table(
            expanded, scope_text if scope_text != "full" else "full (published rows, KB arguments)"
        )
        out_of_range = int((table["raw_output"].str.fullmatch(r"-?\d+") & ~table["is_valid"]).sum())
        if out_of_range:
            context.log.warning(out_of_range_warning(name, path, table))
        yield dg.Output(
            table,
            metadata={
                "dagster/row_count": len(table),
                "backend": "import (published_tsv)",
                "file": str(path),
                "published_rows": len(published),
                "arguments": int(table["argument_id"].nunique()),
                "published_rows_carried": int(table["published_index"].nunique()),
                "keys": "KB argument_id, through political_published_index (published_index = the nodeID "
                "of the released row the argument carries: the first row of its prompt text)",
                "na": int(table["is_na"].sum()),
                "invalid": int((~table["is_valid"]).sum()),
                "out_of_range_published_values": out_of_range,
            },
        )
        return

    sampling = political_sampling(entry)
    prompts = scope_arguments(political_prompts, study_first(political_study_items), scope.max_arguments)
    requests = build_requests(prompts)
    context.log.info(f"{name}: {len(requests)} arguments in scope ({scope_text}) x {N_REPETITIONS} repetitions")
    judged = judge_partition(context, entry, judge, judgment_cache, requests, sampling, N_REPETITIONS)
    table = prediction_table(judged.completions, name, sampling, judged.backend, entry.is_baseline, scope_text)
    metadata = judging_metadata(entry, judged, table, sampling, scope_text)
    metadata.update(
        {
            "repetitions": N_REPETITIONS,
            "arguments_in_scope": len(prompts),
            "scores": int((table["is_valid"] & ~table["is_na"]).sum()),
            "na": int(table["is_na"].sum()),
        }
    )
    yield dg.Output(table, metadata=metadata)
    failure = non_answer_failure(entry, judged)
    if failure is not None:
        raise failure
