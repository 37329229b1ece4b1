"""Study B's figures by source: the paper's text, its study files, the registry's imports, the platform.

The human-study files carry the paper's predictions under their own column prefixes
(``published:gpt_4_5_preview_2025_02_27``); the registry imports the same models' published
prediction files as entries (``published-gpt-4.5``). The two are not always the same numbers
(GPT-4.5's ordinal α on all pairs: 0.783 from the study file, 0.779 from the import), so the
results page shows every system once per source, labelled, and puts the two side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.reporting.results_page import Leaderboard, Section
from argassets.political.published import published_predictions_file
from argassets.political.system_names import PUBLISHED_PREFIX, published_system_names
from argassets.political.validation.alpha_conventions import paper_comparison

PAPER_ANCHOR = "paper-figures"
STUDY_FILE = "study file"
REGISTRY_IMPORT = "registry import"
PLATFORM = "platform"
HUMAN = "human study"
BOUND = "bound"
#: What each source means, for the page's notes.
SOURCES_SAY = (
    f"Sources: '{STUDY_FILE}' = the paper's predictions as its human-study files carry them (column "
    f"file_column); '{REGISTRY_IMPORT}' = the paper's published prediction files imported as a registry entry "
    f"and scored like every model; '{PLATFORM}' = judged or pooled here (E1-E3 pool the registry imports; "
    f"'random' is the seeded random judge); '{HUMAN}' = the human framings; '{BOUND}' = the scale's bounds "
    "(all-equal, worst), not judges."
)
#: The paper's headline of the pairwise study ("α = 0.86 for the best model"): its subset and metric.
PAPER_PAIRWISE_HEADLINE = {"figure": "α = 0.86 for the best model", "subset": "P11", "metric": "alpha_ordinal"}
PAPER_PAIRWISE_HEADLINE_VALUE = 0.86
#: The kinds that are a model (the paper's claim is about its best model).
MODEL_KINDS = ("model", "published", "published-file")


def _imported_names(registry: ModelRegistry) -> set[str]:
    return {e.name for e in registry.models if published_predictions_file(e) is not None and "political" in e.studies}


def _source(system: str, kind: str, from_file: bool, imported: set[str]) -> str:
    if from_file:
        return STUDY_FILE
    if system in imported:
        return REGISTRY_IMPORT
    return {"human": HUMAN, "baseline": BOUND}.get(kind, PLATFORM)


def every_system(report: pd.DataFrame, registry: ModelRegistry) -> pd.DataFrame:
    """Every row of a validation report, each published model under its registry name, with its ``source``
    (:data:`SOURCES_SAY`) and, for a study file's row, the file's column (``file_column``)."""
    systems = report["system"].astype(str)
    prefixes = [s.removeprefix(PUBLISHED_PREFIX) for s in systems if s.startswith(PUBLISHED_PREFIX)]
    names = published_system_names(registry, prefixes)
    imported = _imported_names(registry)
    from_file = systems.str.startswith(PUBLISHED_PREFIX)
    renamed = systems.replace(names)
    source = [
        _source(name, str(kind), bool(file), imported)
        for name, kind, file in zip(renamed, report["kind"], from_file, strict=True)
    ]
    kind = report["kind"].where(~from_file | report["kind"].astype(str).str.contains("ensemble"), "published-file")
    kind = kind.where(~renamed.isin(list(imported)) | from_file, "published")
    return report.assign(
        system=renamed, source=source, kind=kind, file_column=systems.where(from_file, "")
    ).reset_index(drop=True)


def sources_side_by_side(every: pd.DataFrame, facet: str, metrics: Sequence[str]) -> pd.DataFrame:
    """Per facet value and published model: each metric from the study file beside the registry import's."""
    metrics = [m for m in metrics if m in every.columns]
    columns = [facet, "system", *metrics]
    from_file = every[every["source"] == STUDY_FILE][[*columns, "file_column"]]
    imported = every[every["source"] == REGISTRY_IMPORT][columns]
    both = from_file.merge(imported, on=[facet, "system"], suffixes=(f"_{'study_file'}", "_registry_import"))
    for metric in metrics:
        both[f"{metric}_difference"] = both[f"{metric}_registry_import"] - both[f"{metric}_study_file"]
    order = {value: position for position, value in enumerate(dict.fromkeys(every[facet]))}
    both = both.assign(facet_order=both[facet].map(order))
    both = both.sort_values(["facet_order", f"{metrics[0]}_study_file"], ascending=[True, False], kind="stable")
    return both.drop(columns="facet_order").reset_index(drop=True)


def paper_headline_rows(pairwise_every: pd.DataFrame) -> pd.DataFrame:
    """The paper's "α = 0.86 for the best model" beside the best model of each source on the same subset."""
    subset, metric = PAPER_PAIRWISE_HEADLINE["subset"], PAPER_PAIRWISE_HEADLINE["metric"]
    rows: list[dict[str, object]] = [
        {
            "figure": PAPER_PAIRWISE_HEADLINE["figure"],
            "subset": subset,
            "source": "the paper (text)",
            "system": "its best model",
            metric: PAPER_PAIRWISE_HEADLINE_VALUE,
        }
    ]
    on_subset = pairwise_every[(pairwise_every["subset"] == subset) & pairwise_every["kind"].isin(MODEL_KINDS)]
    for source in (STUDY_FILE, REGISTRY_IMPORT):
        candidates = on_subset[on_subset["source"] == source].sort_values(metric, ascending=False)
        if candidates.empty:
            continue
        best = candidates.iloc[0]
        row = {"figure": f"best model of the {source}s", "subset": subset, "source": source, "system": best["system"]}
        bounds = {b: best[b] for b in (f"{metric}_low", f"{metric}_high") if b in best.index}
        rows.append(row | {metric: float(best[metric])} | bounds)
    return pd.DataFrame(rows)


SUBSETS_SAY = (
    "Subsets of the pairwise study: all = every annotated pair; P11 = the pairs both E3 and the humans are "
    "confident about (the subset of the paper's α = 0.86); P10 = E3 confident, the humans not; P01 = the humans "
    "confident, E3 not; P00 = neither; on a subset, the win matrices and the Bradley-Terry fits use only its pairs."
)
PAPER_SAYS = (
    "The paper's figures beside the platform's, each with its source. The paper's headline 'α = 0.86 for the "
    "best model' is the ordinal α on subset P11, not on all pairs; the platform computes it from the published "
    "predictions twice, once as the study files carry them and once as the registry imports them, and the two "
    "can differ (the second table: registry import minus study file, per model and subset)."
)


def paper_section(pairwise_every: pd.DataFrame, pointwise: pd.DataFrame) -> Section:
    """The page's section "The paper's figures beside the platform's" (anchor ``paper-figures``)."""
    metric = PAPER_PAIRWISE_HEADLINE["metric"]
    headline = Leaderboard(
        "The paper's headline beside the platform's",
        paper_headline_rows(pairwise_every),
        keys=["figure", "subset", "source", "system", metric],
        headline=None,
        kind_column="",
        note=f"{metric}: the paper's text for its row, else the platform's value with its 95% interval over debates.",
    )
    side = Leaderboard(
        "Each published model from the study files and from the registry imports",
        sources_side_by_side(pairwise_every, "subset", ["alpha_ordinal", "macro_f1"]),
        keys=[
            "system",
            "file_column",
            *(f"alpha_ordinal_{s}" for s in ("study_file", "registry_import", "difference")),
        ],
        headline=None,
        others=[f"macro_f1_{s}" for s in ("study_file", "registry_import", "difference")],
        kind_column="",
        split_by="subset",
        split_first="all",
        note=SUBSETS_SAY,
    )
    pointwise_paper = Leaderboard(
        "Pointwise agreement beside the paper's figures",
        paper_comparison(pointwise),
        keys=["system", "partition", "alpha_nominal", "paper", "delta", "missing_share", "n"],
        headline=None,
        kind_column="",
        note="paper: the paper's Figure 2 and text (inter-model nominal alpha, human-model medians); "
        "alpha_nominal: the platform's, from the published predictions; delta = platform minus paper.",
    )
    return Section(
        "The paper's figures beside the platform's",
        PAPER_SAYS,
        tables=[headline, side, pointwise_paper],
        anchor=PAPER_ANCHOR,
    )
