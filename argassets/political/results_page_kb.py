"""The KB findings on Study B's results page: attacks against supports, ambiguity, debates, acceptability.

The same fragment the README's "What the knowledge base says" is written from
(:func:`~argassets.political.structure.findings.findings_markdown`), rendered as HTML, with the
``kb_analysis`` assets' plots embedded as PNGs and the per-system robustness table.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from argassets.platform.reporting.results_page import Leaderboard, Section
from argassets.political.structure import facets, findings, plots

KB_ANCHOR = "kb-findings"


@dataclass(frozen=True)
class KbTables:
    """The ``kb_analysis`` tables the section reads."""

    distances: pd.DataFrame  # political_relation_distance
    robustness: pd.DataFrame  # political_relation_robustness
    ambiguity: pd.DataFrame  # political_ambiguity
    debates: pd.DataFrame  # political_debate_positions
    acceptability: pd.DataFrame  # political_acceptability
    facets: pd.DataFrame  # political_kb_facets (its speaker roles)


def markdown_html(text: str) -> str:
    """Markdown (the findings' bullets, bold and code) as HTML, with markdown-it's safe defaults."""
    from markdown_it import MarkdownIt

    return str(MarkdownIt("commonmark", {"html": False}).render(text))


def png_html(png: bytes, title: str) -> str:
    """A PNG embedded in the page (a data URI: the page stays one file that opens offline)."""
    data = base64.b64encode(png).decode("ascii")
    return f'<figure><img class="plot" alt="{html.escape(title)}" src="data:image/png;base64,{data}">' + (
        f"<figcaption>{html.escape(title)}</figcaption></figure>"
    )


def kb_plots(tables: KbTables) -> list[tuple[bytes, str]]:
    """The plots the ``kb_analysis`` assets attach, with their titles."""
    reference = findings.REFERENCE
    shown = [(plots.distance_plot(tables.robustness), "Attacks vs supports: mean |Δ position| per system")]
    for facet in ("force", "speaker role", "transition depth"):
        shown.append((plots.ambiguity_plot(tables.ambiguity, reference, facet), f"Ambiguity by {facet} ({reference})"))
    shown.append((plots.debate_plot(tables.debates, reference), f"{reference}'s positions by debate"))
    return shown


def kb_section_from(findings_text: str, images: Sequence[tuple[bytes, str]], robustness: pd.DataFrame) -> Section:
    """The section from the findings' Markdown, the plots and ``political_relation_robustness``."""
    headline = "difference" if "difference" in robustness.columns else None
    board = Leaderboard(
        "Attacks minus supports, per system (mean |Δ position|, 0-100 scale)",
        robustness,
        keys=["system"],
        headline=headline,
        headline_says="mean |Δ| of the attacks' two ends minus that of the supports', 95% interval over debates.",
        others=[
            c for c in robustness.columns if c not in ("system", "kind", headline) and not c.endswith(("_low", "_high"))
        ],
        best_kinds=(),  # a finding per system, not a contest
    )
    return Section(
        "What the knowledge base says",
        "Ideology against argument structure, from the kb_analysis assets (political_relation_distance, "
        "political_relation_robustness, political_ambiguity, political_debate_positions, political_acceptability).",
        tables=[board],
        anchor=KB_ANCHOR,
        html_blocks=[markdown_html(findings_text), *(png_html(png, title) for png, title in images)],
    )


def kb_section(tables: KbTables) -> Section:
    """The KB findings section from the ``kb_analysis`` tables."""
    text = findings.findings_markdown(
        tables.distances,
        tables.robustness,
        tables.ambiguity,
        tables.debates,
        tables.acceptability,
        facets.role_coverage(tables.facets),
    )
    return kb_section_from(text, kb_plots(tables), tables.robustness)
