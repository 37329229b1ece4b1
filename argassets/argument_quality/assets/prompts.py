"""Assets: prompts (Study A chat requests, verbatim to the protocol)."""

import dagster as dg
import pandas as pd

from argassets.argument_quality.prompts import PromptError, render_prompts, select_few_shot_examples


@dg.asset(
    group_name="prompts",
    kinds={"duckdb", "pandas"},
)
def aq_few_shot_examples(
    webis_arguments: pd.DataFrame, webis_expert_comparisons: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """The three few-shot examples (A, B, Tie) of every topic and dimension, chosen from expert scores."""
    try:
        examples = select_few_shot_examples(webis_expert_comparisons, webis_arguments)
    except PromptError as exc:
        raise dg.Failure(description=str(exc)) from exc
    table = examples.drop(columns=["text_a", "text_b"]).copy()
    lines = ["| dimension | topic | shot | comparison | score A | score B | difference | expert label |"]
    lines.append("|---|---:|---|---|---:|---:|---:|---|")
    for row in table.itertuples(index=False):
        lines.append(
            f"| {row.dimension} | {row.topic_id} | {row.shot} | {row.comparison_id} | {row.score_a:.3f} | "
            f"{row.score_b:.3f} | {row.score_difference:.3f} | {row.label} |"
        )
    return dg.Output(
        examples,
        metadata={
            "dagster/row_count": len(examples),
            "examples": dg.MetadataValue.md("\n".join(lines)),
        },
    )


@dg.asset(
    group_name="prompts",
    kinds={"duckdb", "pandas"},
)
def aq_prompts(
    webis_arguments: pd.DataFrame,
    webis_expert_comparisons: pd.DataFrame,
    aq_few_shot_examples: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Every (comparison, dimension, strategy) chat request of Study A with the SHA-256 of its messages."""
    try:
        prompts = render_prompts(webis_expert_comparisons, webis_arguments, examples=aq_few_shot_examples)
    except PromptError as exc:
        raise dg.Failure(description=str(exc)) from exc
    counts = prompts.groupby(["strategy", "dimension"]).size().unstack(fill_value=0)
    lines = ["| strategy | " + " | ".join(counts.columns) + " | distinct system messages |"]
    lines.append("|---|" + "---:|" * (len(counts.columns) + 1))
    for strategy, row in counts.iterrows():
        systems = prompts.loc[prompts["strategy"] == strategy, "system"].nunique()
        lines.append(f"| {strategy} | " + " | ".join(str(v) for v in row) + f" | {systems} |")
    examples = {}
    for strategy in ("zero", "few", "cot"):
        first = prompts[prompts["strategy"] == strategy].head(1)
        if len(first):
            examples[strategy] = (
                f"### {first.prompt_id.iat[0]}\n\n**system**\n\n```\n{first.system.iat[0]}\n```\n\n"
                f"**user**\n\n```\n{first.user.iat[0]}\n```"
            )
    return dg.Output(
        prompts,
        metadata={
            "dagster/row_count": len(prompts),
            "distinct_prompts": int(prompts["prompt_sha256"].nunique()),
            "counts": dg.MetadataValue.md("\n".join(lines)),
            "example_prompts": dg.MetadataValue.md("\n\n".join(examples.values())),
        },
    )
