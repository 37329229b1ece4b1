"""The persuasion study's assets: corpus, votes, scores, report (its judgments are the platform's)."""

import dagster as dg
import pandas as pd

from argassets.platform.reporting.presentation import markdown_table
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
