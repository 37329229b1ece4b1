"""Study B's validation against the human studies."""

import math
import time
from typing import Any

import dagster as dg
import numpy as np
import pandas as pd

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.reporting.interval_config import IntervalConfig
from argassets.platform.reporting.pages import page_url
from argassets.platform.reporting.presentation import markdown_table, png_markdown, with_interval_text
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.stats.tables import INTERVAL_COLUMNS
from argassets.political.assets.common import storable, system_kind
from argassets.political.assets.prompts import HUMAN_DIR
from argassets.political.assets.results_page import RESULTS_PAGE, results_page_path
from argassets.political.assets.study_systems import platform_item_values
from argassets.political.ensembles import ENSEMBLES
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.paper_figures import PAPER_ANCHOR
from argassets.political.validation.alpha_conventions import paper_comparison
from argassets.political.validation.comparisons import validation_uncertainty
from argassets.political.validation.design import connection_entropy, graph_components
from argassets.political.validation.evaluation import (
    SUBSETS,
    PairwiseDesign,
    evaluate_pairwise,
    evaluate_pointwise,
    interannotator_agreement,
    pairwise_rankings,
)
from argassets.political.validation.intervals import (
    PAIRWISE_METRICS,
    POINTWISE_METRICS,
    debate_clusters,
    pairwise_statistic,
    pointwise_statistic,
)
from argassets.political.validation.systems import plot_f1_vs_alpha


class PairwiseValidationConfig(IntervalConfig):
    """Which E3 defines the E3-confident pairs: the paper's (``published:ensemble3``, default, so
    every row is scored on the paper's subsets) or the platform's own (``E3``); and the intervals."""

    subset_ensemble: str = "published:ensemble3"


#: The debate of each study item: only these columns of the KB arguments are read.
KB_DEBATES = dg.AssetIn("political_kb_arguments", metadata={"columns": ["argument_id", "episode"]})


def _comparisons_metadata(comparisons: pd.DataFrame, config: IntervalConfig, facet: str) -> dict[str, Any]:
    """The comparisons' metadata: the settings and, per facet and metric, the top against the next."""
    top = comparisons[(comparisons["role"] == "top") & (comparisons["rank"] == 2)]
    return {
        "dagster/row_count": len(comparisons),
        "intervals": config.interval_settings().describe() + ", clustered over debates",
        "adjustment": config.adjustment,
        f"top_vs_next_by_{facet}": dg.MetadataValue.md(
            markdown_table(
                top[
                    ["facet", "metric", "reference", "reference_value", "system", "value", "difference"]
                    + ["difference_low", "difference_high", "p_adjusted", "verdict"]
                ]
            )
        ),
    }


def _pairwise_systems(
    study: Any,
    meta_ids: list[str],
    reg: ModelRegistry,
    stats: pd.DataFrame,
    members: pd.DataFrame,
    study_items: pd.DataFrame,
) -> dict[str, tuple[str, list]]:
    """Every system's scores on the pairwise items: the platform's models and ensembles, then the study file's."""
    platform = platform_item_values(stats, reg, members, study_items, "pairwise", meta_ids, "scores")
    systems: dict[str, tuple[str, list]] = {}
    for name, values in platform.items():
        systems[name] = ("ensemble" if name in ENSEMBLES else system_kind(name, reg), values)
    for prefix, group in study.published.groupby("prefix"):
        kind = "published-ensemble" if prefix.startswith("ensemble") else "published"
        systems[f"published:{prefix}"] = (kind, group.set_index("meta_id").loc[meta_ids, "scores"].map(list).tolist())
    return systems


@dg.multi_asset(
    outs={
        "political_pairwise_validation": dg.AssetOut(
            description="Rank agreement with the pairwise human study (footrule, d_tau, ordinal alpha, "
            "macro-F1) per system and subset, with intervals clustered over debates and the best set.",
            group_name="reports",
            kinds={"duckdb", "pandas", "matplotlib"},
        ),
        "political_pairwise_comparisons": dg.AssetOut(
            description="Pairwise study: every system against the top one and the baselines, per subset, on "
            "ordinal alpha and macro-F1 (paired differences over the same debate resamples, adjusted p-values).",
            group_name="reports",
            kinds={"duckdb", "pandas"},
        ),
    },
    deps=["political_ensembles"],
    ins={"political_kb_arguments": KB_DEBATES},
)
def political_pairwise_validation(
    context: dg.AssetExecutionContext,
    config: PairwiseValidationConfig,
    data: PublishedDataResource,
    registry: ModelRegistryResource,
    political_model_stats: pd.DataFrame,
    political_study_items: pd.DataFrame,
    political_ensemble_members: pd.DataFrame,
    political_kb_arguments: pd.DataFrame,
):
    """Rank agreement with the pairwise human study per system and subset, with intervals and comparisons."""
    study = read_pairwise_study(data.require(HUMAN_DIR))
    meta_ids = list(study.items["meta_id"])
    systems = _pairwise_systems(
        study, meta_ids, registry.load(), political_model_stats, political_ensemble_members, political_study_items
    )
    reference = config.subset_ensemble
    if reference not in systems:
        raise ValueError(
            f"subset_ensemble '{reference}' has no scores for the pairwise items "
            f"(available: {', '.join(sorted(systems))})"
        )
    design = PairwiseDesign.build(meta_ids, study.pairs, study.votes, systems[reference][1])
    started = time.perf_counter()
    rankings = pairwise_rankings(design, systems)
    report = evaluate_pairwise(design, systems, rankings)
    context.log.info(f"{len(systems)} systems x {len(SUBSETS)} subsets in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    cluster, n_clusters = debate_clusters(political_study_items, political_kb_arguments, "pairwise", meta_ids)
    outputs, parts = pairwise_statistic(design, rankings, report, cluster, n_clusters)
    uncertain = validation_uncertainty(
        report,
        parts,
        outputs,
        n_clusters,
        task="pairwise",
        facet_column="subset",
        metrics=PAIRWISE_METRICS,
        compared=("alpha_ordinal", "macro_f1"),
        headline="alpha_ordinal",
        settings=config.interval_settings(),
        adjustment=config.adjustment,
    )
    report = uncertain.report
    seconds = time.perf_counter() - started
    context.log.info(f"intervals over {n_clusters} debates in {seconds:.1f} s")
    yield dg.Output(
        storable(report),
        output_name="political_pairwise_validation",
        metadata=_pairwise_metadata(report, config, len(systems), design, n_clusters)
        | {"interval_seconds": round(seconds, 2)},
    )
    yield dg.Output(
        storable(uncertain.comparisons),
        output_name="political_pairwise_comparisons",
        metadata=_comparisons_metadata(uncertain.comparisons, config, "subset"),
    )


def _pairwise_metadata(
    report: pd.DataFrame, config: PairwiseValidationConfig, systems: int, design: PairwiseDesign, clusters: int
) -> dict[str, Any]:
    """The pairwise report's metadata: subsets, the tables with their intervals, the figure."""
    reference = config.subset_ensemble
    png = plot_f1_vs_alpha(report, title=f"Pairwise validation (subsets from {reference}; 95% intervals over debates)")
    shown = report[report["subset"] == "all"].sort_values("alpha_ordinal", ascending=False)
    return {
        "dagster/row_count": len(report),
        "systems": systems,
        "subset_ensemble": reference,
        "subset_sizes": dg.MetadataValue.json({s: int(design.subsets[s].sum()) for s in SUBSETS}),
        "intervals": config.interval_settings().describe() + f", clustered over {clusters} debates",
        "all_pairs": dg.MetadataValue.md(markdown_table(_shown(shown.drop(columns=["subset"]), PAIRWISE_METRICS))),
        "by_subset": dg.MetadataValue.md(
            markdown_table(_shown(report.sort_values(["subset", "system"]), PAIRWISE_METRICS))
        ),
        "macro_f1_vs_alpha": dg.MetadataValue.md(png_markdown(png, "macro-F1 vs ordinal alpha per subset")),
        "results_page": dg.MetadataValue.path(str(results_page_path())),
        # every system and subset, and the paper's alpha = 0.86 beside the platform's, one click each
        "open_pairwise": dg.MetadataValue.url(page_url(f"{RESULTS_PAGE}#pairwise")),
        "open_paper_figures": dg.MetadataValue.url(page_url(f"{RESULTS_PAGE}#{PAPER_ANCHOR}")),
    }


def _shown(report: pd.DataFrame, metrics: tuple[str, ...]) -> pd.DataFrame:
    """A validation table for display: figures with their intervals, the interval columns but the method left out."""
    hidden = [c for c in INTERVAL_COLUMNS[1:] if c in report.columns]
    return with_interval_text(report.drop(columns=hidden), metrics)


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
        storable(table),
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
        storable(table),
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


def _pointwise_metadata(
    report: pd.DataFrame, config: IntervalConfig, systems: int, unscored: list[str], clusters: int
) -> dict[str, Any]:
    """The pointwise report's metadata: the tables with their intervals, agreement beside the paper."""
    full = report[report["partition"] == "full"].sort_values("macro_f1", ascending=False)
    return {
        "dagster/row_count": len(report),
        "systems": systems,
        "systems_without_pointwise_items": dg.MetadataValue.json(unscored),
        "intervals": config.interval_settings().describe() + f", clustered over {clusters} debates",
        "full": dg.MetadataValue.md(markdown_table(_shown(full, POINTWISE_METRICS))),
        "agreement": dg.MetadataValue.md(markdown_table(paper_comparison(report))),
        "by_partition": dg.MetadataValue.md(
            markdown_table(_shown(report.sort_values(["partition", "system"]), POINTWISE_METRICS))
        ),
        "results_page": dg.MetadataValue.path(str(results_page_path())),
        "open_pointwise": dg.MetadataValue.url(page_url(f"{RESULTS_PAGE}#pointwise")),
        "open_paper_figures": dg.MetadataValue.url(page_url(f"{RESULTS_PAGE}#{PAPER_ANCHOR}")),
    }


def _pointwise_systems(
    study: Any, meta_ids: list[str], reg: ModelRegistry, platform: dict[str, list[Any]]
) -> tuple[dict[str, tuple[str, np.ndarray]], dict[str, list[str]]]:
    """Every system's P(NA) on the pointwise items, and the inter-model groups (platform, published)."""
    systems: dict[str, tuple[str, np.ndarray]] = {}
    for name, values in platform.items():
        kind = "ensemble" if name in ENSEMBLES else system_kind(name, reg)
        systems[name] = (kind, np.array([np.nan if v is None else float(v) for v in values]))
    published_names = []
    for prefix, group in study.published.groupby("prefix"):
        name = f"published:{prefix}"
        kind = "published-ensemble" if prefix.startswith("ensemble") else "published"
        systems[name] = (kind, group.set_index("meta_id").loc[meta_ids, "prob_na"].to_numpy(dtype=float))
        if not prefix.startswith("ensemble"):
            published_names.append(name)
    platform_models = [n for n, (kind, _) in systems.items() if kind == "model"]
    return systems, {"platform": platform_models, "published": published_names}


@dg.multi_asset(
    outs={
        "political_pointwise_validation": dg.AssetOut(
            description="Is the argument political? Agreement with the human majority per system and partition, "
            "and among the models, with intervals clustered over debates and the best set.",
            group_name="reports",
            kinds={"duckdb", "pandas"},
        ),
        "political_pointwise_comparisons": dg.AssetOut(
            description="Pointwise study: every system against the top one and the baselines, per partition, on "
            "macro-F1 and nominal alpha (paired differences over the same debate resamples, adjusted p-values).",
            group_name="reports",
            kinds={"duckdb", "pandas"},
        ),
    },
    deps=["political_ensembles"],
    ins={"political_kb_arguments": KB_DEBATES},
)
def political_pointwise_validation(
    context: dg.AssetExecutionContext,
    config: IntervalConfig,
    data: PublishedDataResource,
    registry: ModelRegistryResource,
    political_model_stats: pd.DataFrame,
    political_study_items: pd.DataFrame,
    political_ensemble_members: pd.DataFrame,
    political_kb_arguments: pd.DataFrame,
):
    """Is the argument political? Agreement with the human majority per system and partition, with intervals."""
    study = read_pointwise_study(data.require(HUMAN_DIR))
    meta_ids = list(study.items["meta_id"])
    platform = platform_item_values(
        political_model_stats,
        registry.load(),
        political_ensemble_members,
        political_study_items,
        "pointwise",
        meta_ids,
        "prob_na",
    )
    systems, groups = _pointwise_systems(study, meta_ids, registry.load(), platform)
    report = evaluate_pointwise(study.items, systems, groups)
    started = time.perf_counter()
    cluster, n_clusters = debate_clusters(political_study_items, political_kb_arguments, "pointwise", meta_ids)
    outputs, parts = pointwise_statistic(study.items, systems, groups, report, cluster, n_clusters)
    uncertain = validation_uncertainty(
        report,
        parts,
        outputs,
        n_clusters,
        task="pointwise",
        facet_column="partition",
        metrics=POINTWISE_METRICS,
        compared=("macro_f1", "alpha_nominal"),
        headline="macro_f1",
        settings=config.interval_settings(),
        adjustment=config.adjustment,
    )
    report = uncertain.report
    seconds = time.perf_counter() - started
    context.log.info(f"intervals over {n_clusters} debates in {seconds:.1f} s")
    unscored = (
        sorted(set(political_model_stats["system"].unique()) - set(platform)) if len(political_model_stats) else []
    )
    yield dg.Output(
        storable(report),
        output_name="political_pointwise_validation",
        metadata=_pointwise_metadata(report, config, len(systems), unscored, n_clusters)
        | {"interval_seconds": round(seconds, 2)},
    )
    yield dg.Output(
        storable(uncertain.comparisons),
        output_name="political_pointwise_comparisons",
        metadata=_comparisons_metadata(uncertain.comparisons, config, "partition"),
    )
