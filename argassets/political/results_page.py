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


def pairwise_figure(report: pd.DataFrame) -> Any:
    """Macro-F1 against ordinal alpha per subset; names on hover, so no label covers another."""
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
        title="Pairwise study: macro-F1 against ordinal alpha, per subset (hover for the system)",
    )
    figure.for_each_annotation(lambda note: note.update(text=note.text.removeprefix("subset=")))
    rows = -(-report["subset"].nunique() // 3)
    figure.update_layout(height=120 + 300 * max(rows, 1), legend={"orientation": "h", "y": 1.04, "yanchor": "bottom"})
    return figure


def political_page_html(pairwise: pd.DataFrame, pointwise: pd.DataFrame, registry: ModelRegistry) -> str:
    """Study B's page from the ``political_pairwise_validation`` and ``political_pointwise_validation`` tables."""
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
    return results_page(
        "Study B: political positions (QT30), LLM judges against the human studies",
        f"{all_pairs['system'].nunique()} systems in the pairwise study, each under one name (published "
        "models under their registry name). Every table sorts by a click on a column header and filters by "
        "the box above it.",
        sections,
    )
