"""Study B's results page: pairwise and pointwise validation against the human studies, one name per system.

The human-study files carry the paper's predictions under their own column prefixes
(``published:gpt_4_5_preview_2025_02_27``) while the registry imports the same predictions as an
entry (``published-gpt-4.5``). The page shows each system once, under its registry name.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.reporting.metric_figure import metric_bar_figure
from argassets.platform.reporting.results_page import Leaderboard, Section, results_page
from argassets.political.paper_figures import SOURCES_SAY, STUDY_FILE, SUBSETS_SAY, every_system, paper_section
from argassets.political.results_page_kb import KbTables, kb_section
from argassets.political.results_page_trust import trust_sections
from argassets.political.system_names import PUBLISHED_PREFIX, published_stem, published_system_names

#: Kinds that may be best: systems that judge; baselines and the human framings never are.
SYSTEM_KINDS = ("model", "ensemble", "published", "published-file", "published-ensemble")
KIND_COLOURS = {
    "model": "#1f77b4",
    "ensemble": "#d62728",
    "published": "#7f7f7f",
    "published-ensemble": "#8c564b",
    "human": "#2ca02c",
    "baseline": "#000000",
    "published-file": "#b8b8b8",
}
BASELINES_SAY = (
    "One random baseline: 'random', the registry's judge that draws a uniform score (or NA) per argument, "
    "seeded, measured like every model (its n_items_scored says on how many items). 'baseline:all-equal' "
    "ranks every argument equal (no information, alpha 0 by construction) and 'baseline:worst' negates "
    "the human ranking: bounds of the scale, not judges."
)


def one_name_per_system(report: pd.DataFrame, registry: ModelRegistry, facet: str) -> pd.DataFrame:
    """The report with each published model once, under its registry name, of kind ``published``.

    Where the registry entry was measured too, its row stays and the human-study file's row goes.
    """
    prefixes = [
        s.removeprefix(PUBLISHED_PREFIX) for s in report["system"].astype(str) if s.startswith(PUBLISHED_PREFIX)
    ]
    names = published_system_names(registry, prefixes)
    imported = {e.name for e in registry.models if published_stem(e) is not None}
    out = report.assign(
        from_study_file=report["system"].isin(list(names)),
        system=report["system"].replace(names),
    )
    out.loc[out["system"].isin(list(imported)), "kind"] = "published"
    out = out.sort_values("from_study_file", kind="stable").drop_duplicates(["system", facet], keep="first")
    return out.drop(columns="from_study_file").sort_index().reset_index(drop=True)


def _error_bars(frame: pd.DataFrame) -> dict[str, Any]:
    """Plotly error bars on both axes from the intervals (none where the table has none)."""
    if not {"alpha_ordinal_low", "macro_f1_low"} <= set(frame.columns):
        return {}
    return {
        "error_x": (frame["alpha_ordinal_high"].astype(float) - frame["alpha_ordinal"].astype(float)).clip(lower=0),
        "error_x_minus": (frame["alpha_ordinal"].astype(float) - frame["alpha_ordinal_low"].astype(float)).clip(
            lower=0
        ),
        "error_y": (frame["macro_f1_high"].astype(float) - frame["macro_f1"].astype(float)).clip(lower=0),
        "error_y_minus": (frame["macro_f1"].astype(float) - frame["macro_f1_low"].astype(float)).clip(lower=0),
    }


def pairwise_figure(report: pd.DataFrame) -> Any:
    """Macro-F1 against ordinal alpha per subset, with 95% intervals; names on hover, so no label covers another."""
    import plotly.express as px

    figure = px.scatter(
        report,
        x="alpha_ordinal",
        y="macro_f1",
        color="kind",
        facet_col="subset",
        facet_col_wrap=3,
        hover_name="system",
        hover_data=["d_footrule", "d_tau", "n_pairs", "n_items_scored"],
        color_discrete_map=KIND_COLOURS,
        title="Pairwise study: macro-F1 against ordinal alpha, per subset, 95% intervals over debates (hover for the system)",
        **_error_bars(report),
    )
    figure.for_each_annotation(lambda note: note.update(text=note.text.removeprefix("subset=")))
    rows = -(-report["subset"].nunique() // 3)
    figure.update_layout(height=120 + 300 * max(rows, 1), legend={"orientation": "h", "y": 1.04, "yanchor": "bottom"})
    return figure


TOP_SAYS = (
    "On each subset or partition and metric, the top system (the platform's models and ensembles) against the "
    "next: the paired difference over the same debate resamples with its 95% interval and the Holm-adjusted "
    "p-value over every comparison with the top; 'not distinguishable' means the data do not separate them."
)


def top_against_next(comparisons: pd.DataFrame, registry: ModelRegistry) -> pd.DataFrame:
    """The rank-2 rows of the comparisons with the top, under one name per system."""
    if comparisons.empty:
        return pd.DataFrame(columns=["task", "facet", "metric", "reference", "system", "difference"])
    rows = comparisons[(comparisons["role"] == "top") & (comparisons["rank"] == 2)].copy()
    prefixes = [
        s.removeprefix(PUBLISHED_PREFIX)
        for s in pd.concat([rows["system"], rows["reference"]]).astype(str)
        if s.startswith(PUBLISHED_PREFIX)
    ]
    names = published_system_names(registry, prefixes)
    rows["system"] = rows["system"].replace(names)
    rows["reference"] = rows["reference"].replace(names)
    columns = ["task", "facet", "metric", "reference", "reference_value", "system", "value", "difference"]
    return rows[[*columns, "difference_low", "difference_high", "p_adjusted", "verdict"]].rename(
        columns={"reference": "top", "reference_value": "top_value", "system": "next", "value": "next_value"}
    )


def _best_set(frame: pd.DataFrame) -> dict[str, Any]:
    """Mark the best set (the top and every system not significantly worse) where the table has one."""
    if "best_set" not in frame.columns:
        return {}
    return {"best_column": "best_set", "best_label": "best set"}


PAIRWISE_SAYS = (
    "ordinal Krippendorff's alpha between the system's Bradley-Terry ranking of the study items and the humans' "
    "ranking; higher is better."
)
PAIRWISE_METRICS = ["alpha_ordinal", "macro_f1", "d_footrule", "d_tau"]
POINTWISE_METRICS = ["macro_f1", "balanced_accuracy", "alpha_nominal", "micro_f1", "precision", "recall"]
#: The rows drawn as dashed reference lines in the plots: the random judge and the no-information bound.
REFERENCE_SYSTEMS = ["random", "baseline:all-equal"]


def _labelled(every: pd.DataFrame) -> pd.DataFrame:
    """A unique label per row of one facet: a study file's row is marked as such."""
    marked = every["system"] + " (" + every["source"] + ")"
    return every.assign(label=every["system"].where(every["source"] != STUDY_FILE, marked))


def pairwise_board(every: pd.DataFrame) -> Leaderboard:
    """Every system of every subset (one tab per subset), ranked by ordinal alpha, the other metrics a tab away."""
    return Leaderboard(
        "Pairwise study: every system, every subset",
        every,
        keys=["system", "source"],
        headline="alpha_ordinal",
        headline_says=PAIRWISE_SAYS,
        others=["n_pairs", "n_items_scored", "file_column"],
        best_kinds=SYSTEM_KINDS,
        rank_tabs=PAIRWISE_METRICS,
        split_by="subset",
        split_first="all",
        note=SUBSETS_SAY + " " + SOURCES_SAY,
        **_best_set(every),
    )


def pointwise_board(every: pd.DataFrame) -> Leaderboard:
    """Every system of every partition (one tab per partition), ranked by macro-F1."""
    return Leaderboard(
        "Pointwise study (is the argument political?): every system, every partition",
        every,
        keys=["system", "source"],
        headline="macro_f1",
        headline_says="macro-F1 of the system's political / not political call against the human majority; "
        "higher is better.",
        others=["n", "missing_share", "file_column"],
        best_kinds=SYSTEM_KINDS,
        rank_tabs=POINTWISE_METRICS,
        split_by="partition",
        split_first="full",
        note=SOURCES_SAY,
        **_best_set(every),
    )


def _bars(every: pd.DataFrame, facet: str, value: str, metrics: list[str], title: str) -> Any:
    shown = _labelled(every[every[facet] == value])
    references = [s for s in REFERENCE_SYSTEMS if s in set(shown["label"])]
    return metric_bar_figure(shown, "label", metrics, references, KIND_COLOURS, title)


def _next_section(comparisons: pd.DataFrame, registry: ModelRegistry) -> Section:
    next_board = Leaderboard(
        "The top system against the next",
        top_against_next(comparisons, registry),
        keys=["task", "facet", "metric", "top", "top_value", "next", "next_value", "difference"],
        headline=None,
        others=["difference_low", "difference_high", "p_adjusted", "verdict"],
        kind_column="verdict",
        note=TOP_SAYS,
    )
    return Section("Is the top distinguishable from the next?", tables=[next_board], anchor="top-vs-next")


def political_page_html(
    pairwise: pd.DataFrame,
    pointwise: pd.DataFrame,
    registry: ModelRegistry,
    comparisons: pd.DataFrame | None = None,
    kb: KbTables | None = None,
    battery: pd.DataFrame | None = None,
) -> str:
    """Study B's page from the ``political_pairwise_validation`` and ``political_pointwise_validation`` tables
    (and their comparisons, the ``kb_analysis`` tables and the reliability battery, when given)."""
    pairs, points = every_system(pairwise, registry), every_system(pointwise, registry)
    title = "Pairwise study, all pairs (bars: 95% intervals over debates; dashed: baselines)"
    sections = [
        Section(
            "Pairwise validation",
            BASELINES_SAY,
            [pairwise_board(pairs)],
            [_bars(pairs, "subset", "all", PAIRWISE_METRICS, title), pairwise_figure(pairs)],
            anchor="pairwise",
        ),
        paper_section(pairs, pointwise),
        Section(
            "Pointwise validation",
            tables=[pointwise_board(points)],
            figures=[_bars(points, "partition", "full", POINTWISE_METRICS[:3], "Pointwise study, all items")],
            anchor="pointwise",
        ),
    ]
    if comparisons is not None:
        sections.append(_next_section(comparisons, registry))
    sections += trust_sections(battery)
    if kb is not None:
        sections.append(kb_section(kb))
    systems = pairs[pairs["subset"] == "all"]
    return results_page(
        "Study B: political positions (QT30), LLM judges against the human studies",
        f"{len(systems)} rows in the pairwise study ({systems['system'].nunique()} systems; a published model "
        "appears once per source, under its registry name). Every table sorts by a click on a column header, "
        "re-ranks by a click on a metric tab and filters by the box above it.",
        sections,
    )
