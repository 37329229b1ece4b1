"""The persuasion study's assets: corpus, judgments (one partition per judge model), votes, scores, report."""

from collections.abc import Iterator

import dagster as dg
import pandas as pd

from argassets.platform.judging.partition import judge_partition, judging_metadata, outside_study
from argassets.platform.registry.partitions import PARTITION_METADATA, model_partition_key, study_partitions
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from tests.platform.third_study import science
from tests.platform.third_study.corpus import synthetic_pairs, synthetic_texts

GROUP = "persuasion"


@dg.asset(group_name=GROUP, kinds={"pandas"})
def persuasion_texts() -> pd.DataFrame:
    """The synthetic persuasion texts with their known strengths."""
    return synthetic_texts()


@dg.asset(group_name=GROUP, kinds={"pandas"})
def persuasion_pairs(persuasion_texts: pd.DataFrame) -> pd.DataFrame:
    """Every within-topic pair of texts with the experts' label."""
    return synthetic_pairs(persuasion_texts)


@dg.asset(
    partitions_def=study_partitions(science.STUDY_NAME),
    metadata=PARTITION_METADATA,
    group_name=GROUP,
    kinds={"pandas"},
    output_required=False,
)
def persuasion_judgments(
    context: dg.AssetExecutionContext,
    registry: ModelRegistryResource,
    judge: JudgeResource,
    judgment_cache: JudgmentCacheResource,
    persuasion_pairs: pd.DataFrame,
    persuasion_texts: pd.DataFrame,
) -> Iterator[dg.Output[pd.DataFrame]]:
    """Verdicts (A, B or Tie) of one judge model on every in-scope pair, per run."""
    entry = registry.entry(model_partition_key(context))
    if outside_study(context, entry, science.STUDY_NAME):
        return
    scope = science.PersuasionScope.of(entry)
    sampling = entry.sampling_for(science.SAMPLING)
    pairs = science.scoped_pairs(persuasion_pairs, scope)
    requests = science.build_requests(pairs, persuasion_texts)
    judged = judge_partition(context, entry, judge, judgment_cache, requests, sampling, science.N_RUNS)
    table = science.judgment_table(pairs, judged.completions, entry.name)
    yield dg.Output(table, metadata=judging_metadata(entry, judged, table, sampling, scope.describe()))


@dg.asset(group_name=GROUP, kinds={"pandas"})
def persuasion_majority_votes(persuasion_judgments: pd.DataFrame) -> pd.DataFrame:
    """Per judge model and pair: the labels of its runs and their majority."""
    return science.votes(persuasion_judgments)


@dg.asset(group_name=GROUP, kinds={"pandas"})
def persuasion_bt_scores(persuasion_majority_votes: pd.DataFrame, persuasion_pairs: pd.DataFrame) -> pd.DataFrame:
    """Bradley-Terry scores per text of every judge model's majorities and of the experts."""
    judges = science.strengths(persuasion_majority_votes, "judge_model", "majority_label")
    experts = science.strengths(persuasion_pairs.assign(judge_model="experts"), "judge_model", "expert_label")
    return pd.concat([judges, experts], ignore_index=True)


@dg.asset(group_name=GROUP, kinds={"pandas"})
def persuasion_agreement_report(
    persuasion_majority_votes: pd.DataFrame, persuasion_pairs: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Agreement of every judge model's majorities with the experts, as a table and Markdown."""
    report = science.agreement_with_experts(persuasion_majority_votes, persuasion_pairs)
    return dg.Output(report, metadata={"agreement": dg.MetadataValue.md(markdown_table(report))})
