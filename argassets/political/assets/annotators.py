"""Study B against its human annotators: can a system replace one, whose judgment it matches, and
what the labels and the predictions together say about the knowledge base (docs/human_replacement.md)."""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import dagster as dg
import pandas as pd

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.reporting.presentation import markdown_table, png_markdown
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.political.assets.common import storable
from argassets.political.assets.prompts import HUMAN_DIR
from argassets.political.assets.study_systems import pairwise_systems, platform_item_values, pointwise_systems
from argassets.political.human_studies import (
    CONSENT_REVOKED,
    read_annotations,
    read_pairwise_study,
    read_pointwise_study,
)
from argassets.political.validation import affiliation, annotators, human_plots, human_tasks
from argassets.political.validation.cluster_bootstrap import LEVEL, N_RESAMPLES, SEED
from argassets.political.validation.ppi_estimates import PPI_COLUMNS, assign_buckets, bucket_ranges, system_estimates

GROUP = "reports"
KB_COLUMNS = ["argument_id", "episode"]
POSITION_COLUMNS = ["system", "kind", "argument_id", "position", "prob_na", "n_scores"]


class HumanReplacementConfig(dg.Config):
    """The margins swept, the intervals' level, replicates and seed, and the adjustment of the
    affiliation tests' p-values (``holm`` or ``bh``)."""

    epsilons: list[float] = list(annotators.EPSILONS)
    level: float = LEVEL
    n_resamples: int = N_RESAMPLES
    adjustment: str = "holm"
    seed: int = SEED


@dataclass(frozen=True)
class HumanTasks:
    """The three tasks and every system's answers to each."""

    tasks: list[human_tasks.AnnotationTask]
    systems: dict[str, dict[str, tuple[str, Any]]]
    revoked_labels: int
    revoked_participants: int


def _debates(study_items: pd.DataFrame, kb_arguments: pd.DataFrame) -> dict[str, str]:
    """Each pointwise item's debate, through the KB argument it was matched to."""
    items = study_items[study_items["study"] == "pointwise"][["meta_id", "argument_id"]]
    joined = items.merge(kb_arguments[KB_COLUMNS], on="argument_id", how="inner")
    return dict(zip(joined["meta_id"], joined["episode"].astype(str), strict=True))


def _human_tasks(
    human_dir: Any,
    registry: ModelRegistry,
    stats: pd.DataFrame,
    study_items: pd.DataFrame,
    members: pd.DataFrame,
    kb_arguments: pd.DataFrame,
) -> HumanTasks:
    """Read the studies and the labels, arrange the tasks, and join every system to their items."""
    pointwise, pairwise = read_pointwise_study(human_dir), read_pairwise_study(human_dir)
    labels = read_annotations(human_dir)
    point_ids, pair_ids = list(pointwise.items["meta_id"]), list(pairwise.items["meta_id"])
    tasks = [human_tasks.pointwise_task(labels, point_ids, _debates(study_items, kb_arguments))]
    tasks += [human_tasks.pairwise_task(labels, pair_ids, pairwise.pairs, f) for f in ("right", "left")]
    point_values = platform_item_values(stats, registry, members, study_items, "pointwise", point_ids, "prob_na")
    pair_values = platform_item_values(stats, registry, members, study_items, "pairwise", pair_ids, "scores")
    by_task: dict[str, dict[str, tuple[str, Any]]] = {
        "pointwise": dict(pointwise_systems(pointwise, point_values, registry))
    }
    for framing in ("right", "left"):
        by_task[f"pairwise-{framing}"] = dict(pairwise_systems(pairwise, pair_values, registry))
    revoked = labels["affiliation"] == CONSENT_REVOKED
    return HumanTasks(tasks, by_task, int(revoked.sum()), int(labels.loc[revoked, "participant_id"].nunique()))


def _verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """System x task: the smallest margin at which the system can replace an annotator."""
    systems = table[table["kind"] != "human"]
    pivot = systems.pivot(index="system", columns="task", values="min_epsilon")
    return pivot[[t for t in human_tasks.TASKS if t in pivot.columns]].reset_index()


def _replacement_output(table: pd.DataFrame, config: HumanReplacementConfig) -> dg.Output:
    tests = table[["task", "test", "test_reason", "clustering"]].drop_duplicates()
    return dg.Output(
        storable(table),
        output_name="political_annotator_replacement",
        metadata={
            "dagster/row_count": len(table),
            "parameters": dg.MetadataValue.json(
                {
                    "epsilons": config.epsilons,
                    "level": config.level,
                    "n_resamples": config.n_resamples,
                    "seed": config.seed,
                }
            ),
            "tests": dg.MetadataValue.md(markdown_table(tests)),
            "smallest_margin": dg.MetadataValue.md(markdown_table(_verdicts(table))),
            "by_task": dg.MetadataValue.md(
                markdown_table(table.drop(columns=["test", "test_reason", "clustering"]), max_rows=400)
            ),
            "agreement_with_rest": dg.MetadataValue.md(
                png_markdown(human_plots.replacement_plot(table), "agreement with the remaining annotators")
            ),
        },
    )


def _affiliation_output(table: pd.DataFrame, human: HumanTasks, config: HumanReplacementConfig) -> dg.Output:
    agreement = table[table["measure"] == "agreement"]
    pivot = agreement.pivot_table(index=["task", "system"], columns="group", values="estimate").reset_index()
    tested = table[table["p_value"].notna()]
    return dg.Output(
        storable(table),
        output_name="political_affiliation_agreement",
        metadata={
            "dagster/row_count": len(table),
            "consent_revoked_labels": human.revoked_labels,
            "consent_revoked_participants": human.revoked_participants,
            "adjustment": config.adjustment,
            "by_group": dg.MetadataValue.md(markdown_table(pivot, max_rows=400)),
            "smallest_p": dg.MetadataValue.md(markdown_table(tested.nsmallest(15, "p_value"))),
            "agreement_by_group": dg.MetadataValue.md(
                png_markdown(human_plots.affiliation_plot(table), "agreement with Left, Centre and Right annotators")
            ),
        },
    )


@dg.multi_asset(
    outs={
        "political_annotator_replacement": dg.AssetOut(
            description="Can a system replace a human annotator of Study B, at which margin? Per system and task.",
            group_name=GROUP,
            kinds={"duckdb", "pandas", "matplotlib"},
        ),
        "political_affiliation_agreement": dg.AssetOut(
            description="Agreement of every system with Left, Centre and Right annotators, and their differences.",
            group_name=GROUP,
            kinds={"duckdb", "pandas", "matplotlib"},
        ),
    },
    ins={"political_kb_arguments": dg.AssetIn(metadata={"columns": KB_COLUMNS})},
    deps=["political_ensembles"],
)
def political_annotator_reports(
    context: dg.AssetExecutionContext,
    config: HumanReplacementConfig,
    data: PublishedDataResource,
    registry: ModelRegistryResource,
    political_model_stats: pd.DataFrame,
    political_study_items: pd.DataFrame,
    political_ensemble_members: pd.DataFrame,
    political_kb_arguments: pd.DataFrame,
) -> Iterator[dg.Output]:
    """The replacement test and the affiliation agreement, from one reading of the systems."""
    human = _human_tasks(
        data.require(HUMAN_DIR), registry.load(), political_model_stats, political_study_items,
        political_ensemble_members, political_kb_arguments,
    )  # fmt: skip
    replacement = pd.concat(
        [
            human_tasks.task_replacement(
                t, human.systems[t.name], config.epsilons, config.level, config.n_resamples, config.seed
            )
            for t in human.tasks
        ],
        ignore_index=True,
    )
    context.log.info(f"replacement: {len(replacement)} rows")
    groups = pd.concat(
        [
            affiliation.affiliation_table(
                t,
                human.systems[t.name],
                config.level,
                config.n_resamples,
                config.adjustment,
                config.seed,
            )
            for t in human.tasks
        ],
        ignore_index=True,
    )
    yield _replacement_output(replacement, config)
    yield _affiliation_output(groups, human, config)


def _ppi_inputs(
    human_dir: Any, positions: pd.DataFrame, study_items: pd.DataFrame, kb_arguments: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, tuple[float, float]]]:
    """The labelled arguments and the population with its buckets (E3's P(NA) in the sample's ranges)."""
    study = read_pointwise_study(human_dir)
    e3 = study.published[study.published["prefix"] == "ensemble3"].set_index("meta_id")["prob_na"]
    items = study.items[["meta_id", "judgements_maj", "n_type"]].assign(e3_prob_na=lambda f: f["meta_id"].map(e3))
    ranges = bucket_ranges(items)
    matched = study_items[study_items["study"] == "pointwise"][["meta_id", "argument_id"]]
    items = items.merge(matched, on="meta_id", how="inner").rename(columns={"judgements_maj": "y", "n_type": "bucket"})
    platform_e3 = positions[positions["system"] == "E3"].set_index("argument_id")["prob_na"]
    if platform_e3.empty:
        raise ValueError(
            "political_ppi_estimates needs the platform's E3 ensemble: the pointwise sample was stratified by E3's P(NA)"
        )
    arguments = kb_arguments[KB_COLUMNS].rename(columns={"episode": "debate"})
    arguments = arguments.assign(bucket=assign_buckets(arguments["argument_id"].map(platform_e3), ranges))
    return items[["argument_id", "y", "bucket"]], arguments, ranges


@dg.asset(
    group_name=GROUP,
    kinds={"duckdb", "pandas", "matplotlib"},
    ins={
        "political_kb_arguments": dg.AssetIn(metadata={"columns": KB_COLUMNS}),
        "political_system_positions": dg.AssetIn(metadata={"columns": POSITION_COLUMNS}),
    },
)
def political_ppi_estimates(
    data: PublishedDataResource,
    political_system_positions: pd.DataFrame,
    political_study_items: pd.DataFrame,
    political_kb_arguments: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Share of political arguments and mean position, by PPI, by the human labels alone and by each system alone."""
    items, arguments, ranges = _ppi_inputs(
        data.require(HUMAN_DIR), political_system_positions, political_study_items, political_kb_arguments
    )
    frames = []
    for (system, kind), rows in political_system_positions.groupby(["system", "kind"], sort=True):
        predictions = rows.assign(position=rows["position"].where(rows["n_scores"] > 0))
        estimates = system_estimates(items, predictions[["argument_id", "prob_na", "position"]], arguments)
        frames.append(estimates.assign(system=system, kind=kind))
    table = pd.concat(frames, ignore_index=True)[PPI_COLUMNS]
    overall = table[table["debate"] == "all"]
    sizes = arguments["bucket"].value_counts().to_dict()
    return dg.Output(
        storable(table),
        metadata={
            "dagster/row_count": len(table),
            "bucket_ranges": dg.MetadataValue.json(ranges),
            "bucket_sizes": dg.MetadataValue.json({k: int(v) for k, v in sizes.items()}),
            "overall": dg.MetadataValue.md(markdown_table(overall, max_rows=400)),
            "political_share": dg.MetadataValue.md(
                png_markdown(human_plots.ppi_plot(table), "political share: PPI, humans, system")
            ),
            "mean_position": dg.MetadataValue.md(
                png_markdown(human_plots.ppi_plot(table, "mean_position"), "mean position")
            ),
        },
    )
