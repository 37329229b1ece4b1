"""Assets: aggregation (majority votes over runs, Bradley-Terry scores of experts and LLM configurations)."""

from typing import Any, Literal

import dagster as dg
import numpy as np
import pandas as pd

from argassets.argument_quality.bradley_terry import DEFAULT_SETTINGS, BTSettings
from argassets.argument_quality.bt_scores import CONFIG_COLUMNS, expert_bt_scores, expert_fit_summary, llm_bt_scores
from argassets.argument_quality.judgments import AQ_JUDGMENT_COLUMNS
from argassets.argument_quality.report_checks import disconnected_topics
from argassets.argument_quality.voting import majority_votes
from argassets.platform.operations.remedies import missing
from argassets.platform.pairwise.expected import PROBABILITY_COLUMNS
from argassets.platform.reporting.partition_coverage import check_partition_coverage
from argassets.platform.reporting.presentation import markdown_table

#: Columns of ``aq_judgments`` the aggregation reads (``order`` is an SQL keyword, hence quoted).
JUDGMENT_COLUMNS = [
    "judge_model",
    "comparison_id",
    "dimension",
    "strategy",
    "topic_id",
    '"order"',
    "run",
    "label",
    "is_baseline",
    "scope",
    # The label probabilities, once the judgments table has them (expected figures; NaN where null).
    *(c for c in PROBABILITY_COLUMNS if c in AQ_JUDGMENT_COLUMNS),
]
#: Every materialised partition of ``aq_judgments`` (an unpartitioned asset reads them all).
JUDGMENTS_IN = dg.AssetIn("aq_judgments", metadata={"columns": JUDGMENT_COLUMNS})


class BTConfig(dg.Config):
    """How labels become Bradley-Terry scores (defaults: the settings that reproduce the experts best)."""

    ties: Literal["win_each", "half_each", "drop"] = DEFAULT_SETTINGS.ties
    alpha: float = DEFAULT_SETTINGS.alpha
    engine: Literal["batched", "choix"] = DEFAULT_SETTINGS.engine

    def settings(self) -> BTSettings:
        return BTSettings(ties=self.ties, alpha=self.alpha, engine=self.engine)


class LLMBTConfig(BTConfig):
    """BT settings plus the bootstrap of the confidence intervals."""

    n_bootstrap: int = 200
    seed: int = 20200705
    confidence: float = 0.95


def judgments_frame(aq_judgments: pd.DataFrame) -> pd.DataFrame:
    """The loaded ``aq_judgments`` partitions; an empty table with the right columns when none exist."""
    columns = [c.strip('"') for c in JUDGMENT_COLUMNS]
    if aq_judgments.empty and not len(aq_judgments.columns):
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    missing = [c for c in columns if c not in aq_judgments.columns]
    if missing:
        raise dg.Failure(description=f"aq_judgments: missing column(s) {', '.join(missing)}")
    return aq_judgments


def _model_flags(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per model: baseline flag and scope as recorded with its judgments."""
    if judgments.empty:
        return pd.DataFrame({"model": [], "is_baseline": [], "scope": []})
    flags = judgments.groupby("judge_model", sort=True).agg(
        is_baseline=("is_baseline", lambda s: bool(s.fillna(False).astype(bool).any())),
        scope=("scope", lambda s: " | ".join(sorted({str(v) for v in s.dropna().unique()})) or "unknown"),
    )
    return flags.reset_index().rename(columns={"judge_model": "model"})


@dg.asset(group_name="aggregation", kinds={"duckdb", "pandas"}, ins={"aq_judgments": JUDGMENTS_IN})
def aq_majority_votes(context: dg.AssetExecutionContext, aq_judgments: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    """Per model, strategy, dimension and comparison: the labels of the 3 runs and their majority."""
    judgments = judgments_frame(aq_judgments)
    coverage = check_partition_coverage(context, "aq_judgments", judgments)
    flags = _model_flags(judgments)
    majority = majority_votes(judgments)
    if majority.empty:
        raise dg.Failure(
            description=missing("aq_judgments has no rows in any materialised partition")
            + " (or `argassets materialize <a Study A judge>` for one partition)"
        )
    majority = majority.merge(flags, on="model", how="left")
    summary = (
        majority.assign(verdict=majority["majority_label"].fillna("none"))
        .groupby(["model", "strategy", "dimension", "verdict"])
        .size()
        .unstack(fill_value=0)
        .reset_index()
    )
    swapped = int((judgments["order"] == "ba").sum()) if len(judgments) else 0
    return dg.Output(
        majority,
        metadata={
            "dagster/row_count": len(majority),
            "models": dg.MetadataValue.json(sorted(majority["model"].unique().tolist())),
            "configurations": int(len(majority[CONFIG_COLUMNS].drop_duplicates())),
            "no_verdict": int(majority["majority_label"].isna().sum()),
            "swapped_order_judgments_ignored": swapped,
            "majority_labels": dg.MetadataValue.md(markdown_table(summary)),
            **coverage,
        },
    )


@dg.asset(group_name="aggregation", kinds={"duckdb", "pandas"})
def aq_expert_bt_scores(
    context: dg.AssetExecutionContext,
    config: BTConfig,
    webis_expert_comparisons: pd.DataFrame,
    webis_arguments: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Expert BT scores per dimension and topic (choix), z-normalised, beside the published scores."""
    settings = config.settings()
    scores = expert_bt_scores(webis_expert_comparisons, webis_arguments, settings)
    fit = expert_fit_summary(scores)
    split = disconnected_topics(scores, ["dimension"])
    context.log.info(f"expert BT ({settings.describe()}):\n{fit.to_string(index=False)}")
    metadata: dict[str, Any] = {
        "dagster/row_count": len(scores),
        "settings": settings.describe(),
        "fit_to_published": dg.MetadataValue.md(markdown_table(fit, digits=4)),
        "disconnected_topics": len(split),
    }
    for row in fit.itertuples(index=False):
        metadata[f"pearson_{row.dimension}"] = round(float(row.pearson), 4)
        metadata[f"spearman_{row.dimension}"] = round(float(row.spearman), 4)
    if len(split):
        metadata["components"] = dg.MetadataValue.md(markdown_table(split))
    return dg.Output(scores, metadata=metadata)


def bt_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: arguments scored, topics, disconnected topics and mean interval width."""
    if scores.empty:
        return pd.DataFrame()
    summary = (
        scores.assign(ci_width=scores["ci_high"] - scores["ci_low"])
        .groupby(CONFIG_COLUMNS, sort=True)
        .agg(arguments=("bt_z", "size"), topics=("topic_id", "nunique"), mean_ci_width=("ci_width", "mean"))
    )
    split = scores[scores["component"] > 0].groupby(CONFIG_COLUMNS)["topic_id"].nunique()
    summary["disconnected_topics"] = split.reindex(summary.index).fillna(0).astype(np.int64)
    return summary.reset_index()


@dg.asset(group_name="aggregation", kinds={"duckdb", "pandas"})
def aq_bt_scores(
    context: dg.AssetExecutionContext,
    config: LLMBTConfig,
    aq_majority_votes: pd.DataFrame,
    webis_expert_comparisons: pd.DataFrame,
    webis_arguments: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """BT scores of every configuration from its majority labels (bootstrap 95% intervals), and on expected wins."""
    settings = config.settings()
    scores = llm_bt_scores(
        aq_majority_votes,
        webis_expert_comparisons,
        webis_arguments,
        settings,
        n_bootstrap=config.n_bootstrap,
        seed=config.seed,
        confidence=config.confidence,
    )
    split = disconnected_topics(scores, CONFIG_COLUMNS)
    if len(split):
        context.log.warning(
            f"{len(split)} (configuration, topic) comparison graphs are not connected; see the "
            "'components' metadata and the aq_bt_scores_connected check"
        )
    metadata: dict[str, Any] = {
        "dagster/row_count": len(scores),
        "settings": settings.describe(),
        "bootstrap": f"{config.n_bootstrap} replicates, seed {config.seed}, {config.confidence:.0%} percentile intervals"
        if config.n_bootstrap
        else "none",
        "configurations": int(len(scores[CONFIG_COLUMNS].drop_duplicates())) if len(scores) else 0,
        "disconnected_topics": len(split),
        # Configurations with label probabilities, fitted on expected wins too (expected_bt_*).
        "expected_wins_configurations": int(
            len(scores.loc[scores["expected_bt_z"].notna(), CONFIG_COLUMNS].drop_duplicates())
        )
        if len(scores)
        else 0,
        "summary": dg.MetadataValue.md(markdown_table(bt_summary(scores))),
    }
    if len(split):
        metadata["components"] = dg.MetadataValue.md(markdown_table(split))
    return dg.Output(scores, metadata=metadata)
