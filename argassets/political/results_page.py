"""Study B's results page: pairwise and pointwise validation against the human studies, one name per system.

The human-study files carry the paper's predictions under their own column prefixes
(``published:gpt_4_5_preview_2025_02_27``) while the registry imports the same predictions as an
entry (``published-gpt-4.5``). The page shows each system once, under its registry name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

import pandas as pd

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.reporting.results_page import Leaderboard, Section, results_page
from argassets.political.published import PUBLISHED_TSV_STUDY_PREFIX, published_predictions_file
from argassets.political.validation.alpha_conventions import paper_comparison

PUBLISHED_PREFIX = "published:"
#: Kinds that may be best: systems that judge; baselines and the human framings never are.
SYSTEM_KINDS = ("model", "ensemble", "published", "published-ensemble")
KIND_COLOURS = {
    "model": "#1f77b4",
    "ensemble": "#d62728",
    "published": "#7f7f7f",
    "published-ensemble": "#8c564b",
    "human": "#2ca02c",
    "baseline": "#000000",
}
BASELINES_SAY = (
    "One random baseline: 'random', the registry's judge that draws a uniform score (or NA) per argument, "
    "seeded, measured like every model (its n_items_scored says on how many items). 'baseline:all-equal' "
    "ranks every argument equal (no information, alpha 0 by construction) and 'baseline:worst' negates "
    "the human ranking: bounds of the scale, not judges."
)


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _published_stem(entry: ModelEntry) -> str | None:
    """The file stem of the published predictions a political entry imports, or ``None``."""
    published = published_predictions_file(entry)
    return PurePosixPath(published.path).stem if published is not None and "political" in entry.studies else None


def published_system_names(registry: ModelRegistry, prefixes: Iterable[str]) -> dict[str, str]:
    """``published:<prefix>`` -> the registry entry that imports the same model's published predictions.

    The released table of file stems to prefixes decides first; otherwise the prefix (letters and
    digits) must begin the entry's ``model_id`` (whole, or after its ``org/``). A prefix that
    matches several entries keeps its own name.
    """
    entries = [e for e in registry.models if _published_stem(e) is not None]
    names: dict[str, str] = {}
    for prefix in prefixes:
        explicit = [e.name for e in entries if PUBLISHED_TSV_STUDY_PREFIX.get(_published_stem(e) or "") == prefix]
        wanted = _squash(prefix)
        by_id = [
            e.name
            for e in entries
            if e.model_id and any(_squash(i).startswith(wanted) for i in (e.model_id, e.model_id.split("/")[-1]))
        ]
        match = explicit or by_id
        if len(match) == 1:
            names[f"{PUBLISHED_PREFIX}{prefix}"] = match[0]
    return names


def one_name_per_system(report: pd.DataFrame, registry: ModelRegistry, facet: str) -> pd.DataFrame:
    """The report with each published model once, under its registry name, of kind ``published``.

    Where the registry entry was measured too, its row stays and the human-study file's row goes.
    """
    prefixes = [
        s.removeprefix(PUBLISHED_PREFIX) for s in report["system"].astype(str) if s.startswith(PUBLISHED_PREFIX)
    ]
    names = published_system_names(registry, prefixes)
    imported = {e.name for e in registry.models if _published_stem(e) is not None}
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


def political_page_html(
    pairwise: pd.DataFrame,
    pointwise: pd.DataFrame,
    registry: ModelRegistry,
    comparisons: pd.DataFrame | None = None,
) -> str:
    """Study B's page from the ``political_pairwise_validation`` and ``political_pointwise_validation`` tables
    (and their comparisons, when given)."""
    pairwise = one_name_per_system(pairwise, registry, "subset")
    pointwise = one_name_per_system(pointwise, registry, "partition")
    all_pairs = pairwise[pairwise["subset"] == "all"].drop(columns="subset")
    full = pointwise[(pointwise["partition"] == "full") & pointwise["macro_f1"].notna()].drop(columns="partition")
    pair_board = Leaderboard(
        "Pairwise study (all pairs)",
        all_pairs,
        keys=["system"],
        headline="alpha_ordinal",
        headline_says="ordinal Krippendorff's alpha between the system's Bradley-Terry ranking of the study "
        "items and the humans' ranking; higher is better.",
        others=["macro_f1", "d_footrule", "d_tau", "n_pairs", "n_items_scored"],
        best_kinds=SYSTEM_KINDS,
        **_best_set(all_pairs),
    )
    point_board = Leaderboard(
        "Pointwise study (is the argument political?), all items",
        full,
        keys=["system"],
        headline="macro_f1",
        headline_says="macro-F1 of the system's political / not political call against the human majority; "
        "higher is better.",
        others=["micro_f1", "precision", "recall", "balanced_accuracy", "alpha_nominal", "n", "missing_share"],
        best_kinds=SYSTEM_KINDS,
        **_best_set(full),
    )
    paper = Leaderboard(
        "Agreement beside the paper's figures",
        paper_comparison(pointwise),
        keys=["system", "partition", "alpha_nominal", "paper", "delta", "missing_share", "n"],
        headline=None,
        kind_column="",
        note="delta = the platform's alpha minus the paper's; blank where the paper gives no figure.",
    )
    sections = [
        Section("Pairwise validation", BASELINES_SAY, [pair_board], [pairwise_figure(pairwise)]),
        Section("Pointwise validation", tables=[point_board, paper]),
    ]
    if comparisons is not None:
        next_board = Leaderboard(
            "The top system against the next",
            top_against_next(comparisons, registry),
            keys=["task", "facet", "metric", "top", "top_value", "next", "next_value", "difference"],
            headline=None,
            others=["difference_low", "difference_high", "p_adjusted", "verdict"],
            kind_column="verdict",
            note=TOP_SAYS,
        )
        sections.append(Section("Is the top distinguishable from the next?", tables=[next_board]))
    return results_page(
        "Study B: political positions (QT30), LLM judges against the human studies",
        f"{all_pairs['system'].nunique()} systems in the pairwise study, each under one name (published "
        "models under their registry name). Every table sorts by a click on a column header and filters by "
        "the box above it.",
        sections,
    )
