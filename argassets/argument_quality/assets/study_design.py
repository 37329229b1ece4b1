"""Study A's next pairwise study, designed: pairs of Webis arguments, judgments per pair by
simulation from the experts' study, and the files for Prolific and Label Studio.

Materialised by hand, never by run-default or automation (kind ``study_design``): a design is
drawn once and fielded.
"""

from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd

from argassets.argument_quality.prompts import DIMENSIONS
from argassets.argument_quality.study_design import (
    QUESTIONS,
    argument_key,
    design_pairs,
    expert_pilot,
    within_topic_candidates,
)
from argassets.platform.design.exchange import export_study
from argassets.platform.design.simulation import choose_judgments, simulate_pairwise
from argassets.platform.design.tasks import StudyDesign, study_tasks
from argassets.platform.paths import resolve_duckdb_path
from argassets.platform.reporting.presentation import markdown_table

GROUP = "aq_study_design"
KINDS = {"study_design", "duckdb", "pandas"}


class AQDesignPairsConfig(dg.Config):
    """``random`` or ``adaptive`` (round 0 of the adaptive design), about this many pairs per argument."""

    method: str = "adaptive"
    pairs_per_argument: float = 8.0
    seed: int = 0


@dg.asset(group_name=GROUP, kinds=KINDS)
def aq_study_design_pairs(config: AQDesignPairsConfig, webis_arguments: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    """Pairs of argumentative Webis texts within each topic for a new pairwise study."""
    pairs = design_pairs(
        within_topic_candidates(webis_arguments), config.method, config.pairs_per_argument, config.seed
    )
    per_topic = pairs.groupby("topic_id").size().rename("pairs").reset_index()
    return dg.Output(
        pairs,
        metadata={"dagster/row_count": len(pairs), "pairs_per_topic": dg.MetadataValue.md(markdown_table(per_topic))},
    )


class AQDesignSimulationConfig(dg.Config):
    """Target SSR, the grid of judgments per pair, and the simulation's size."""

    target_ssr: float = 0.8
    judgments: list[int] = [1, 2, 3, 4, 6, 8, 12, 16]
    replications: int = 50
    seed: int = 0


@dg.asset(group_name=GROUP, kinds=KINDS)
def aq_study_design_simulation(
    config: AQDesignSimulationConfig, aq_study_design_pairs: pd.DataFrame, webis_expert_comparisons: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Judgments per pair that reach the target SSR, per dimension, simulated on the median topic's pairs."""
    sizes = pd.concat(
        [
            aq_study_design_pairs[["topic_id", "item_1"]],
            aq_study_design_pairs[["topic_id", "item_2"]].set_axis(["topic_id", "item_1"], axis=1),
        ]
    )
    per_topic = sizes.drop_duplicates().groupby("topic_id").size().sort_values(kind="stable")
    topic = int(per_topic.index[len(per_topic) // 2])
    pairs = aq_study_design_pairs[aq_study_design_pairs["topic_id"] == topic]
    items = {a: i for i, a in enumerate(pd.unique(pd.concat([pairs["item_1"], pairs["item_2"]])))}
    index = np.c_[pairs["item_1"].map(items).to_numpy(), pairs["item_2"].map(items).to_numpy()]
    frames, chosen = [], {}
    for dimension in DIMENSIONS:
        pool = expert_pilot(webis_expert_comparisons, dimension)
        table = simulate_pairwise(index, len(items), pool, config.judgments, config.replications, config.seed)
        chosen[dimension] = choose_judgments(table, "judgments_per_pair", "ssr", config.target_ssr, at_least=True)
        frames.append(table.assign(dimension=dimension, chosen=table["judgments_per_pair"] == chosen[dimension]))
    result = pd.concat(frames, ignore_index=True)
    return dg.Output(
        result,
        metadata={
            "dagster/row_count": len(result),
            "topic_simulated": topic,
            "judgments_per_pair": dg.MetadataValue.json(chosen),
            "simulation": dg.MetadataValue.md(markdown_table(result)),
        },
    )


class AQDesignTasksConfig(dg.Config):
    """Bundles, the attention rate and where the files go (default: ``study_design/argument_quality/``)."""

    attention_rate: float = 0.1
    bundle_size: int = 20
    seed: int = 0
    output_dir: str | None = None


@dg.asset(group_name=GROUP, kinds=KINDS)
def aq_study_design_tasks(
    config: AQDesignTasksConfig,
    webis_arguments: pd.DataFrame,
    aq_study_design_pairs: pd.DataFrame,
    aq_study_design_simulation: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Bundles of the designed study (every dimension asked of every pair), written for Prolific and Label Studio."""
    chosen = aq_study_design_simulation[aq_study_design_simulation["chosen"]]
    short = sorted(set(aq_study_design_simulation["dimension"]) - set(chosen["dimension"]))
    if short:
        raise ValueError(f"the simulation reached the target SSR for no number of judgments of {short}: widen its grid")
    # Every pair is asked about every dimension: the dimension that needs the most sets the number.
    judgments = int(chosen["judgments_per_pair"].max())
    texts = {
        argument_key(t, d, a): x
        for t, d, a, x in zip(
            webis_arguments["topic_id"],
            webis_arguments["discussion_id"],
            webis_arguments["argument_id"],
            webis_arguments["text"],
            strict=True,
        )
    }
    design = StudyDesign(
        "pairwise", QUESTIONS, study_tasks(QUESTIONS, texts, aq_study_design_pairs), judgments, config.bundle_size
    )
    folder = (
        Path(config.output_dir)
        if config.output_dir
        else resolve_duckdb_path().parent / "study_design" / "argument_quality"
    )
    design, bundles, paths = export_study(design, config.attention_rate, 0.0, config.seed, folder)
    kinds = design.tasks.set_index("task_id")["kind"]
    table = bundles.assign(kind=bundles["task_id"].map(kinds))
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            "places": int(table["bundle"].nunique()),
            "judgments_per_pair": judgments,
            "files": dg.MetadataValue.json({k: str(v) for k, v in paths.items()}),
            "folder": dg.MetadataValue.path(str(folder)),
        },
    )
