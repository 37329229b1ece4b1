"""Study B's validation against the human studies."""

import math
import time

import dagster as dg
import numpy as np
import pandas as pd

from argassets.platform.reporting.presentation import markdown_table, png_markdown
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.political.assets.common import _kind, _storable
from argassets.political.assets.prompts import HUMAN_DIR
from argassets.political.assets.results_page import results_page_path
from argassets.political.assets.study_systems import platform_item_values as _platform_item_values
from argassets.political.assets.study_systems import platform_systems as _platform_systems  # noqa: F401 (tests)
from argassets.political.ensembles import ENSEMBLES
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.validation.alpha_conventions import paper_comparison
from argassets.political.validation.design import connection_entropy, graph_components
from argassets.political.validation.evaluation import (
    SUBSETS,
    PairwiseDesign,
    evaluate_pairwise,
    evaluate_pointwise,
    interannotator_agreement,
)
from argassets.political.validation.systems import plot_f1_vs_alpha


class PairwiseValidationConfig(dg.Config):
    """Which E3 defines the E3-confident pairs: the paper's (``published:ensemble3``, default, so
    every row is scored on the paper's subsets) or the platform's own (``E3``)."""

    subset_ensemble: str = "published:ensemble3"


@dg.asset(group_name="reports", kinds={"duckdb", "pandas", "matplotlib"}, deps=["political_ensembles"])
def political_pairwise_validation(
    context: dg.AssetExecutionContext,
    config: PairwiseValidationConfig,
    data: PublishedDataResource,
    registry: ModelRegistryResource,
    political_model_stats: pd.DataFrame,
    political_study_items: pd.DataFrame,
    political_ensemble_members: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Rank agreement with the pairwise human study (footrule, d_tau, ordinal alpha, macro-F1) per system and subset."""
    study = read_pairwise_study(data.require(HUMAN_DIR))
    meta_ids = list(study.items["meta_id"])
    reg = registry.load()
    platform = _platform_item_values(
        political_model_stats, reg, political_ensemble_members, political_study_items, "pairwise", meta_ids, "scores"
    )
    published = {
        f"published:{prefix}": group.set_index("meta_id").loc[meta_ids, "scores"].map(list).tolist()
        for prefix, group in study.published.groupby("prefix")
    }
    systems: dict[str, tuple[str, list]] = {}
    for name, values in platform.items():
        kind = "ensemble" if name in ENSEMBLES else _kind(name, reg)
        systems[name] = (kind, values)
    for name, values in published.items():
        systems[name] = ("published-ensemble" if name.startswith("published:ensemble") else "published", values)
    reference = config.subset_ensemble
    if reference not in systems:
        raise ValueError(
            f"subset_ensemble '{reference}' has no scores for the pairwise items "
            f"(available: {', '.join(sorted(systems))})"
        )
    design = PairwiseDesign.build(meta_ids, study.pairs, study.votes, systems[reference][1])
    started = time.perf_counter()
    report = evaluate_pairwise(design, systems)
    context.log.info(f"{len(systems)} systems x {len(SUBSETS)} subsets in {time.perf_counter() - started:.1f} s")
    png = plot_f1_vs_alpha(report, title=f"Pairwise validation (subsets from {reference})")
    shown = report[report["subset"] == "all"].sort_values("alpha_ordinal", ascending=False)
    subset_sizes = {s: int(design.subsets[s].sum()) for s in SUBSETS}
    return dg.Output(
        _storable(report),
        metadata={
            "dagster/row_count": len(report),
            "systems": len(systems),
            "subset_ensemble": reference,
            "subset_sizes": dg.MetadataValue.json(subset_sizes),
            "all_pairs": dg.MetadataValue.md(markdown_table(shown.drop(columns=["subset"]))),
            "by_subset": dg.MetadataValue.md(markdown_table(report.sort_values(["subset", "system"]))),
            "macro_f1_vs_alpha": dg.MetadataValue.md(png_markdown(png, "macro-F1 vs ordinal alpha per subset")),
            "results_page": dg.MetadataValue.path(str(results_page_path())),
        },
    )


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def political_human_agreement(
    data: PublishedDataResource, political_study_items: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Pairwise-study annotators: ordinal alpha between left- and right-framed rankings, and labels per pair."""
    study = read_pairwise_study(data.require(HUMAN_DIR))
    meta_ids = list(study.items["meta_id"])
    e3 = (
        study.published[study.published["prefix"] == "ensemble3"]
        .set_index("meta_id")
        .loc[meta_ids, "scores"]
        .map(list)
        .tolist()
    )
    design = PairwiseDesign.build(meta_ids, study.pairs, study.votes, e3)
    table = interannotator_agreement(design, study.votes)
    return dg.Output(
        _storable(table),
        metadata={"dagster/row_count": len(table), "agreement": dg.MetadataValue.md(markdown_table(table))},
    )


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def political_pairwise_connections(data: PublishedDataResource) -> dg.Output[pd.DataFrame]:
    """The 934-pair comparison graph: each argument's degree, bins reached and connection entropy (ideal 3 bits)."""
    study = read_pairwise_study(data.require(HUMAN_DIR))
    items = study.items
    index = {m: i for i, m in enumerate(items["meta_id"])}
    pairs = np.array([(index[a], index[b]) for a, b in zip(study.pairs["id1"], study.pairs["id2"], strict=True)])
    components, labels = graph_components(len(items), pairs)
    entropy = connection_entropy(pairs, items["bin_index"].to_numpy())
    degree = np.bincount(pairs.ravel(), minlength=len(items))
    bins = items["bin_index"].to_numpy()
    reached = [
        len({int(bins[j]) for j in np.concatenate([pairs[pairs[:, 0] == i, 1], pairs[pairs[:, 1] == i, 0]])})
        for i in range(len(items))
    ]
    table = pd.DataFrame(
        {
            "meta_id": items["meta_id"],
            "bin": items["bin"],
            "degree": degree.astype("int64"),
            "bins_reached": np.asarray(reached, dtype="int64"),
            "entropy_bits": entropy,
            "component": labels.astype("int64"),
        }
    )
    non_empty = int(items["bin_index"].nunique())
    ideal = math.log2(non_empty)
    described = table["entropy_bits"].describe()
    return dg.Output(
        _storable(table),
        metadata={
            "dagster/row_count": len(table),
            "pairs": len(pairs),
            "connected": bool(components == 1),
            "components": int(components),
            "non_empty_bins": non_empty,
            "ideal_entropy_bits": ideal,
            "entropy_bits": dg.MetadataValue.json({k: float(v) for k, v in described.items()}),
            "entropy_histogram": dg.MetadataValue.md(
                markdown_table(
                    pd.cut(table["entropy_bits"], bins=np.linspace(0, ideal, 7), include_lowest=True)
                    .value_counts()
                    .sort_index()
                    .rename_axis("entropy_bits")
                    .reset_index(name="arguments")
                    .astype({"entropy_bits": str})
                )
            ),
        },
    )


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"}, deps=["political_ensembles"])
def political_pointwise_validation(
    data: PublishedDataResource,
    registry: ModelRegistryResource,
    political_model_stats: pd.DataFrame,
    political_study_items: pd.DataFrame,
    political_ensemble_members: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Is the argument political? Agreement with the human majority per system and partition, and among the models."""
    study = read_pointwise_study(data.require(HUMAN_DIR))
    meta_ids = list(study.items["meta_id"])
    reg = registry.load()
    platform = _platform_item_values(
        political_model_stats, reg, political_ensemble_members, political_study_items, "pointwise", meta_ids, "prob_na"
    )
    systems: dict[str, tuple[str, np.ndarray]] = {}
    for name, values in platform.items():
        kind = "ensemble" if name in ENSEMBLES else _kind(name, reg)
        systems[name] = (kind, np.array([np.nan if v is None else float(v) for v in values]))
    published_names = []
    for prefix, group in study.published.groupby("prefix"):
        name = f"published:{prefix}"
        kind = "published-ensemble" if prefix.startswith("ensemble") else "published"
        systems[name] = (kind, group.set_index("meta_id").loc[meta_ids, "prob_na"].to_numpy(dtype=float))
        if not prefix.startswith("ensemble"):
            published_names.append(name)
    platform_models = [n for n, (kind, _) in systems.items() if kind == "model"]
    report = evaluate_pointwise(study.items, systems, {"platform": platform_models, "published": published_names})
    unscored = (
        sorted(set(political_model_stats["system"].unique()) - set(platform)) if len(political_model_stats) else []
    )
    return dg.Output(
        _storable(report),
        metadata={
            "dagster/row_count": len(report),
            "systems": len(systems),
            "systems_without_pointwise_items": dg.MetadataValue.json(unscored),
            "full": dg.MetadataValue.md(
                markdown_table(report[report["partition"] == "full"].sort_values("macro_f1", ascending=False))
            ),
            "agreement": dg.MetadataValue.md(markdown_table(paper_comparison(report))),
            "by_partition": dg.MetadataValue.md(markdown_table(report.sort_values(["partition", "system"]))),
            "results_page": dg.MetadataValue.path(str(results_page_path())),
        },
    )
