"""Study B's per-model statistics and ensembles."""

from collections.abc import Collection, Iterable
from pathlib import Path

import dagster as dg
import pandas as pd

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.reporting.partition_coverage import check_partition_coverage
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.political.assets.common import storable
from argassets.political.ensembles import ENSEMBLES, ensemble_membership, members_of, pool_ensemble
from argassets.political.model_stats import PREDICTION_STATS_COLUMNS, model_stats
from argassets.political.prompts import N_REPETITIONS
from argassets.political.published import published_file_counts, published_predictions_file, read_published_tsv


@dg.asset(
    group_name="aggregation",
    kinds={"duckdb", "pandas"},
    # only the columns the statistics read: a third of the memory and a fifth of the time of every column
    ins={"political_predictions": dg.AssetIn(metadata={"columns": PREDICTION_STATS_COLUMNS})},
)
def political_model_stats(
    context: dg.AssetExecutionContext, political_predictions: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Per argument and model: valid scores, mean, variance, std, NA count and probability of NA."""
    coverage = check_partition_coverage(context, "political_predictions", political_predictions)
    stats = model_stats(political_predictions)
    per_model = (
        stats.groupby("system")
        .agg(
            arguments=("argument_id", "size"),
            na=("na_count", "sum"),
            invalid=("invalid_count", "sum"),
            repetitions=("n_repetitions", "sum"),
            mean_prob_na=("prob_na", "mean"),
        )
        .reset_index()
        if len(stats)
        else pd.DataFrame()
    )
    return dg.Output(
        storable(stats),
        metadata={
            "dagster/row_count": len(stats),
            "models": dg.MetadataValue.md(markdown_table(per_model)),
            **coverage,
        },
    )


def _membership(
    stats: pd.DataFrame, registry: ModelRegistry, counts: dict[str, tuple[int, int, int]] | None = None
) -> list:
    reasoning = {e.name: e.reasoning for e in registry.models}
    excluded: dict[str, str] = {}
    for system in stats["system"].unique() if len(stats) else []:
        try:
            entry = registry.get(system)
        except KeyError:
            excluded[system] = "no longer in the registry"
            continue
        if entry.is_baseline:
            excluded[system] = "baseline"
    return ensemble_membership(stats, reasoning, excluded, counts)


MEMBERSHIP_COLUMNS = ["system", "reasoning", "n_scores", "n_na", "n_invalid", "eligible", "E1", "E2", "E3", "note"]


def membership_frame(members: list) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "system": m.system,
                "reasoning": m.reasoning,
                "n_scores": m.n_scores,
                "n_na": m.n_na,
                "n_invalid": m.n_invalid,
                "eligible": m.eligible,
                "E1": m.in_e1,
                "E2": m.in_e2,
                "E3": m.in_e3,
                "note": m.note,
            }
            for m in members
        ],
        columns=MEMBERSHIP_COLUMNS,
    )


def published_counts(
    registry: ModelRegistry, data_root: Path | None, systems: Iterable[str]
) -> dict[str, tuple[int, int, int]]:
    """The E3 rule's counts of the published imports among ``systems``, over their whole files."""
    counts = {}
    for system in systems:
        try:
            entry = registry.get(system)
        except KeyError:
            continue
        published = published_predictions_file(entry)
        if published is not None:
            counts[system] = published_file_counts(read_published_tsv(published.resolve(data_root)), N_REPETITIONS)
    return counts


def counts_of(members: pd.DataFrame) -> dict[str, tuple[int, int, int]]:
    """The counts ``political_ensemble_members`` used, so that the pooling assets apply the same membership."""
    return {str(r.system): (int(r.n_scores), int(r.n_na), int(r.n_invalid)) for r in members.itertuples(index=False)}


@dg.asset(group_name="aggregation", kinds={"duckdb", "pandas"})
def political_ensemble_members(
    registry: ModelRegistryResource, data: PublishedDataResource, political_model_stats: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Which models form E1 (all), E2 (registry reasoning flag) and E3 (NA answers outnumber valid scores)."""
    reg = registry.load()
    systems = political_model_stats["system"].unique() if len(political_model_stats) else []
    frame = membership_frame(_membership(political_model_stats, reg, published_counts(reg, data.root(), systems)))
    return dg.Output(
        storable(frame),
        metadata={"dagster/row_count": len(frame), "membership": dg.MetadataValue.md(markdown_table(frame))},
    )


def ensemble_table(
    stats: pd.DataFrame,
    registry: ModelRegistry,
    counts: dict[str, tuple[int, int, int]] | None = None,
    arguments: Collection[str] | None = None,
) -> tuple[pd.DataFrame, list, dict[str, list[str]]]:
    """E1, E2 and E3 pooled per argument, the membership, and the member names per ensemble.

    ``counts``: the E3 rule's counts per model where they are not its rows of ``stats`` (the
    published imports': see :func:`published_counts`). ``arguments``: pool only these arguments
    (a report that reads a few study items); the membership is still decided over all of ``stats``,
    and each argument is pooled on its own, so their rows are those of the whole table.
    """
    members = _membership(stats, registry, counts)
    if arguments is not None:
        stats = stats[stats["argument_id"].isin(set(arguments))]
    order = {name: position for position, name in enumerate(registry.names)}
    frames = []
    listed = {}
    for ensemble in ENSEMBLES:
        # pooled in registry order: the published entries are in the paper's model order, which
        # reproduces the released ensemble arrays element for element
        names = sorted(members_of(members, ensemble), key=lambda n: order.get(n, len(order)))
        listed[ensemble] = names
        pooled = pool_ensemble(stats, names, ensemble)
        if len(pooled):
            frames.append(pooled)
    table = pd.concat(frames, ignore_index=True) if frames else pool_ensemble(stats, [], "E1")
    return table, members, listed


@dg.asset(group_name="aggregation", kinds={"duckdb", "pandas"})
def political_ensembles(
    registry: ModelRegistryResource, political_model_stats: pd.DataFrame, political_ensemble_members: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """E1, E2 and E3 per argument, pooled over their members' repetitions (scores concatenated, NA counts added)."""
    table, members, listed = ensemble_table(
        political_model_stats, registry.load(), counts_of(political_ensemble_members)
    )
    return dg.Output(
        storable(table),
        metadata={
            "dagster/row_count": len(table),
            "members": dg.MetadataValue.json(listed),
            "membership": dg.MetadataValue.md(markdown_table(membership_frame(members))),
        },
    )
