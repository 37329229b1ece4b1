"""Assets: reports (Study A: agreement with experts, cross-model, variability, ensemble, position bias)."""

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import dagster as dg
import pandas as pd

from argassets.argument_quality.agreement_intervals import (
    AGREEMENT_METRICS,
    INTERVAL_COLUMNS,
    VARIABILITY_METRICS,
)
from argassets.argument_quality.agreement_reports import (
    HEADLINE_METRIC,
    agreement_analysis,
    best_configuration,
    cross_model_report,
)
from argassets.argument_quality.assets.aggregation import JUDGMENTS_IN, BTConfig, judgments_frame
from argassets.argument_quality.bt_scores import MEAN_DIMENSION
from argassets.argument_quality.configurations import ModelInfo, model_info
from argassets.argument_quality.ensembles import ensemble_members, ensemble_report
from argassets.argument_quality.plots import plot_agreement_heatmap, plot_headline_intervals, plot_scores_vs_experts
from argassets.argument_quality.position_bias import position_bias_report
from argassets.argument_quality.published import (
    PUBLISHED_BEST,
    PUBLISHED_FILES,
    published_model_names,
    read_published_tables,
)
from argassets.argument_quality.published_reproduction import report_intervals, reproduction_markdown, with_published
from argassets.argument_quality.variability_report import variability_report
from argassets.platform.paths import resolve_duckdb_path
from argassets.platform.reporting.interval_config import IntervalConfig
from argassets.platform.reporting.pages import page_url
from argassets.platform.reporting.partition_coverage import check_partition_coverage
from argassets.platform.reporting.presentation import markdown_table, png_markdown, with_interval_text
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.registry import ModelRegistryResource

CONFIG_KEYS = ["model", "strategy", "dimension"]
#: How "best" is chosen, as the metadata and the results page say it.
BEST_BY = f"{HEADLINE_METRIC} against the experts (mean over dimensions), non-baseline configurations only"


def best_set_by(level: float = 0.95, adjustment: str = "holm") -> str:
    """How the best set is chosen, with the stated metric and level."""
    return (
        f"the best configuration ({BEST_BY}) and every candidate not significantly worse on {HEADLINE_METRIC} "
        f"(paired clustered bootstrap over topics, {level:.0%} level, {adjustment}-adjusted p-values)"
    )


def reports_folder(explicit: str | None = None) -> Path:
    """Where report files go: ``explicit``, else ``reports/`` beside the DuckDB file."""
    folder = Path(explicit) if explicit else resolve_duckdb_path().parent / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


#: File name of Study A's results page (asset ``aq_results_page``) in the reports folder.
RESULTS_PAGE = "aq_results.html"


def results_page_path(explicit: str | None = None) -> Path:
    """Where Study A's results page is written, so every report can link to it."""
    return reports_folder(explicit) / RESULTS_PAGE


def recorded_model_info(registry: ModelRegistryResource, majority: pd.DataFrame) -> dict[str, ModelInfo]:
    recorded = (
        majority[["model", "is_baseline", "scope"]].drop_duplicates()
        if {"is_baseline", "scope"} <= set(majority.columns)
        else majority[["model"]].drop_duplicates()
    )
    return model_info(recorded, registry.load())


def _notes(report: pd.DataFrame, best: tuple[str, str] | None = None) -> pd.Series:
    """A human label per row: best, best set, baseline, not in the registry, restricted scope."""
    notes = []
    for row in report.itertuples(index=False):
        if getattr(row, "kind", None) == "published":
            notes.append("published")
            continue
        parts = []
        if best is not None and (row.model, row.strategy) == best:
            parts.append("**best**")
        elif getattr(row, "best_set", False):
            parts.append("best set")
        if getattr(row, "is_baseline", False):
            parts.append("baseline")
        if not getattr(row, "in_registry", True):
            parts.append("not in registry")
        scope = getattr(row, "scope", "full")
        if scope not in ("full", None):
            parts.append(f"scope: {scope}")
        notes.append(", ".join(parts))
    return pd.Series(notes, index=report.index, dtype="object")


#: Columns the Markdown tables leave out: flags (in the notes) and how the intervals were made
#: (one line of metadata says it for the whole table).
_HIDDEN = ("best_set", "is_baseline", "in_registry", "scope", *INTERVAL_COLUMNS[1:])


def _report_markdown(
    report: pd.DataFrame,
    drop: list[str] | None = None,
    max_rows: int = 500,
    best: tuple[str, str] | None = None,
    metrics: tuple[str, ...] = tuple(AGREEMENT_METRICS),
) -> str:
    if report.empty:
        return "_(no rows)_"
    shown = report.drop(columns=[c for c in (drop or []) if c in report.columns])
    shown = shown.drop(columns=[c for c in _HIDDEN if c in shown.columns])
    shown = with_interval_text(shown, metrics)
    shown.insert(len(CONFIG_KEYS), "notes", _notes(report, best))
    return markdown_table(shown, max_rows=max_rows)


def published_table(
    context: dg.AssetExecutionContext, data: PublishedDataResource, reference: str
) -> pd.DataFrame | None:
    """The paper's table against ``reference`` (``experts``/``best``), or ``None`` with a warning when absent."""
    try:
        tables = read_published_tables(data.root())
    except ValueError as exc:
        raise dg.Failure(description=str(exc)) from exc
    if reference not in tables:
        context.log.warning(
            f"published Study A table {PUBLISHED_FILES[reference]!r} not found under the data folder "
            f"({data.root()}): the report carries no published rows"
        )
    return tables.get(reference)


def png_metadata(folder: Path, name: str, png: bytes, title: str) -> dict[str, dg.MetadataValue]:
    path = folder / f"{name}.png"
    path.write_bytes(png)
    return {
        f"plot_{name}": dg.MetadataValue.md(png_markdown(png, title)),
        f"plot_{name}_path": dg.MetadataValue.path(str(path)),
    }


class AgreementConfig(IntervalConfig):
    """What the LLM scores are compared with, which extra configurations to plot, and the intervals."""

    #: ``published``: the corpus's z-scores; ``expert_bt``: our BT scores of the raw expert comparisons.
    reference: Literal["published", "expert_bt"] = "published"
    #: Extra plots of BT score distributions, as ``model/strategy`` (``all`` for every one).
    plot_configurations: list[str] = []
    #: Folder for the PNG files (default: ``reports/`` beside the DuckDB file).
    reports_dir: str | None = None


def _plotted_configurations(
    context: dg.AssetExecutionContext,
    requested: Sequence[str],
    report: pd.DataFrame,
    best: tuple[str, str] | None,
) -> list[tuple[str, str]]:
    """The best configuration, then those requested (``model/strategy`` or ``all``) that the report has."""
    wanted: list[tuple[str, str]] = [best] if best else []
    known = set(report[["model", "strategy"]].drop_duplicates().itertuples(index=False, name=None))
    for item in requested:
        if item == "all":
            wanted += sorted(known)
            continue
        model, _, strategy = item.partition("/")
        if (model, strategy) in known:
            wanted.append((model, strategy))
        else:
            context.log.warning(f"plot_configurations: {item!r} is not a configuration of the report (model/strategy)")
    return list(dict.fromkeys(wanted))


@dg.multi_asset(
    outs={
        "aq_agreement_report": dg.AssetOut(
            description="LLM configurations against the experts (BT score correlations and errors, label "
            "agreement) with clustered intervals and the best set, beside the paper's.",
            group_name="reports",
            kinds={"duckdb", "pandas"},
        ),
        "aq_comparisons": dg.AssetOut(
            description="Each configuration against the best one and each baseline on the same topics: "
            "paired differences with clustered intervals and adjusted p-values.",
            group_name="reports",
            kinds={"duckdb", "pandas"},
        ),
    },
)
def aq_agreement_report(
    context: dg.AssetExecutionContext,
    config: AgreementConfig,
    registry: ModelRegistryResource,
    data: PublishedDataResource,
    aq_bt_scores: pd.DataFrame,
    aq_majority_votes: pd.DataFrame,
    aq_expert_bt_scores: pd.DataFrame,
    webis_expert_comparisons: pd.DataFrame,
    webis_arguments: pd.DataFrame,
):
    """LLM configurations against the experts, with intervals, paired comparisons and the best set."""
    reference = None
    if config.reference == "expert_bt":
        reference = aq_expert_bt_scores[["dimension", "topic_id", "discussion_id", "argument_id", "bt_z"]].rename(
            columns={"bt_z": "published_z"}
        )
    info = recorded_model_info(registry, aq_majority_votes)
    started = time.perf_counter()
    analysis = agreement_analysis(
        aq_bt_scores,
        aq_majority_votes,
        webis_expert_comparisons,
        webis_arguments,
        info,
        reference=reference,
        settings=config.interval_settings(),
        adjustment=config.adjustment,
    )
    context.log.info(f"agreement report with intervals and comparisons in {time.perf_counter() - started:.1f} s")
    measured = analysis.report
    best = best_configuration(measured)
    published = published_table(context, data, "experts")
    mapped = {name: paper for paper, name in published_model_names(registry.load()).items()}
    report, reproduction = with_published(measured, published, mapped, report_intervals(measured))
    yield dg.Output(
        report,
        output_name="aq_agreement_report",
        metadata=_agreement_metadata(context, config, report, measured, best, reproduction, published, aq_bt_scores),
    )
    comparisons = analysis.comparisons
    headline = comparisons[(comparisons["dimension"] == MEAN_DIMENSION) & (comparisons["metric"] == HEADLINE_METRIC)]
    yield dg.Output(
        comparisons,
        output_name="aq_comparisons",
        metadata={
            "dagster/row_count": len(comparisons),
            "best_configuration": f"{best[0]} / {best[1]}" if best else "none (no non-baseline configuration)",
            "best_set_by": best_set_by(config.interval_level, config.adjustment),
            "intervals": config.interval_settings().describe() + ", clustered over topics",
            "headline": dg.MetadataValue.md(markdown_table(headline)),
        },
    )


def _agreement_metadata(
    context: dg.AssetExecutionContext,
    config: AgreementConfig,
    report: pd.DataFrame,
    measured: pd.DataFrame,
    best: tuple[str, str] | None,
    reproduction: pd.DataFrame,
    published: pd.DataFrame | None,
    scores: pd.DataFrame,
) -> dict[str, Any]:
    """The agreement report's metadata: counts, best and best set, the table, reproduction, plots."""
    folder = reports_folder(config.reports_dir)
    in_set = measured[measured["best_set"].astype(bool) & (measured["dimension"] == MEAN_DIMENSION)]
    metadata: dict[str, Any] = {
        "dagster/row_count": len(report),
        "reference": config.reference,
        "configurations": int((measured["dimension"] != MEAN_DIMENSION).sum()),
        "published_rows": int((report["kind"] == "published").sum()),
        "best_configuration": f"{best[0]} / {best[1]}" if best else "none (no non-baseline configuration)",
        "best_by": BEST_BY,
        "best_set": dg.MetadataValue.json(
            [f"{m} / {s}" for m, s in zip(in_set["model"], in_set["strategy"], strict=True)]
        ),
        "best_set_by": best_set_by(config.interval_level, config.adjustment),
        "intervals": config.interval_settings().describe() + ", clustered over topics",
        "results_page": dg.MetadataValue.path(str(results_page_path(config.reports_dir))),
        # the page's leaderboard and its "does the answer depend on the metric?" table, one click each
        "open_leaderboard": dg.MetadataValue.url(page_url(f"{RESULTS_PAGE}#leaderboard")),
        "open_metric_choice": dg.MetadataValue.url(page_url(f"{RESULTS_PAGE}#metric-choice")),
        "report": dg.MetadataValue.md(_report_markdown(report, best=best)),
        "reproduction": dg.MetadataValue.md(reproduction_markdown(reproduction, config.interval_level)),
    }
    if config.reference != "published" and published is not None:
        context.log.warning(
            "the published rows compare with the published expert z-scores; reference 'expert_bt' "
            "makes the deltas and 'reproduced' compare different references"
        )
    if best:
        top = report[
            (report["model"] == best[0]) & (report["strategy"] == best[1]) & (report["dimension"] == MEAN_DIMENSION)
        ]
        metadata[f"best_{HEADLINE_METRIC}_mean"] = float(top[HEADLINE_METRIC].iloc[0])
    if len(report):
        metadata.update(
            png_metadata(folder, "aq_agreement_heatmap", plot_agreement_heatmap(report), "agreement heat map")
        )
        metadata.update(
            png_metadata(
                folder, "aq_agreement_intervals", plot_headline_intervals(report), "headline metrics with intervals"
            )
        )
    for model, strategy in _plotted_configurations(context, config.plot_configurations, report, best):
        png = plot_scores_vs_experts(scores, model, strategy)
        safe = f"{model}__{strategy}".replace("/", "_").replace(":", "_")
        metadata.update(png_metadata(folder, f"aq_scores_{safe}", png, f"{model} / {strategy} vs experts"))
    return metadata


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def aq_cross_model_report(
    context: dg.AssetExecutionContext,
    config: IntervalConfig,
    registry: ModelRegistryResource,
    data: PublishedDataResource,
    aq_bt_scores: pd.DataFrame,
    aq_majority_votes: pd.DataFrame,
    aq_agreement_report: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Every configuration against the best one (same metrics, shared arguments and comparisons), beside the paper's."""
    best = best_configuration(aq_agreement_report) or best_configuration(aq_agreement_report, baselines=True)
    measured = cross_model_report(
        aq_bt_scores,
        aq_majority_votes,
        best,
        recorded_model_info(registry, aq_majority_votes),
        settings=config.interval_settings(),
    )
    published = published_table(context, data, "best")
    mapped = {name: paper for paper, name in published_model_names(registry.load()).items()}
    report, _ = with_published(measured, published, mapped, best=PUBLISHED_BEST, reproduce=False)
    return dg.Output(
        report,
        metadata={
            "dagster/row_count": len(report),
            "reference_configuration": f"{best[0]} / {best[1]}" if best else "none",
            "reference_by": f"{BEST_BY}; a baseline when no other configuration was judged",
            "published_rows": int((report["kind"] == "published").sum()),
            "published_best_configuration": f"published:{PUBLISHED_BEST[0]} / {PUBLISHED_BEST[1]}",
            "intervals": config.interval_settings().describe() + ", clustered over topics",
            "report": dg.MetadataValue.md(_report_markdown(report)),
        },
    )


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def aq_variability_report(
    config: IntervalConfig, registry: ModelRegistryResource, aq_majority_votes: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Per configuration: shares of all-equal, two-equal and all-unequal runs, and alpha across runs."""
    report = variability_report(
        aq_majority_votes, recorded_model_info(registry, aq_majority_votes), settings=config.interval_settings()
    )
    return dg.Output(
        report,
        metadata={
            "dagster/row_count": len(report),
            "intervals": config.interval_settings().describe() + ", clustered over topics",
            "report": dg.MetadataValue.md(_report_markdown(report, metrics=tuple(VARIABILITY_METRICS))),
        },
    )


class EnsembleConfig(BTConfig, IntervalConfig):
    """Ensemble members (default: every non-baseline registry model with judgments) and name."""

    members: list[str] = []
    #: Default: ``non-baseline``, ``all-models`` (no non-baseline model has judgments yet) or ``custom``.
    name: str = ""


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def aq_ensemble(
    context: dg.AssetExecutionContext,
    config: EnsembleConfig,
    registry: ModelRegistryResource,
    aq_majority_votes: pd.DataFrame,
    webis_expert_comparisons: pd.DataFrame,
    webis_arguments: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """A multi-model ensemble (majority of member majorities, pooled BT), reported like a configuration."""
    info = recorded_model_info(registry, aq_majority_votes)
    present = aq_majority_votes["model"].unique().tolist()
    members = ensemble_members(info, present, config.members or None)
    unknown = sorted(set(config.members) - set(present))
    if unknown:
        context.log.warning(f"ensemble members without judgments (left out): {', '.join(unknown)}")
    if not members:
        context.log.warning("the ensemble has no member with judgments: empty report")
    name = config.name
    if not name:
        if config.members:
            name = "custom"
        else:
            name = "non-baseline" if any(not info[m].is_baseline for m in members if m in info) else "all-models"
    report, _, _ = ensemble_report(
        aq_majority_votes,
        webis_expert_comparisons,
        webis_arguments,
        members,
        name,
        config.settings(),
        info,
        intervals=config.interval_settings(),
    )
    return dg.Output(
        report,
        metadata={
            "dagster/row_count": len(report),
            "ensemble": f"ensemble:{name}",
            "members": dg.MetadataValue.json(members),
            "report": dg.MetadataValue.md(_report_markdown(report, drop=["members"])),
        },
    )


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"}, ins={"aq_judgments": JUDGMENTS_IN})
def aq_position_bias(
    context: dg.AssetExecutionContext, registry: ModelRegistryResource, aq_judgments: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Order consistency and first-position preference of models also judged with A and B swapped."""
    judgments = judgments_frame(aq_judgments)
    coverage = check_partition_coverage(context, "aq_judgments", judgments)
    recorded = judgments[["judge_model", "is_baseline", "scope"]].drop_duplicates()
    info = model_info(recorded, registry.load())
    report = position_bias_report(judgments, info)
    asked = sorted(name for name, i in info.items() if i.position_bias)
    judged = sorted(report.loc[report["measured"].astype(bool), "model"].unique().tolist()) if len(report) else []
    missing = [m for m in asked if m not in judged]
    if missing:
        context.log.warning(
            f"registry asks for position bias of {', '.join(missing)} but aq_judgments has no swapped-order rows for them"
        )
    return dg.Output(
        report,
        metadata={
            "dagster/row_count": len(report),
            "models": dg.MetadataValue.json(judged),
            "position_bias_requested_without_data": dg.MetadataValue.json(missing),
            "report": dg.MetadataValue.md(_report_markdown(report)),
            **coverage,
        },
    )
