"""Study B's page: every system of every subset by source, the paper's figures labelled, the KB findings."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from argassets.platform.reporting.results_page import results_page
from argassets.political.paper_figures import (
    PAPER_PAIRWISE_HEADLINE_VALUE,
    REGISTRY_IMPORT,
    STUDY_FILE,
    every_system,
    paper_headline_rows,
    sources_side_by_side,
)
from argassets.political.results_page import political_page_html
from argassets.political.results_page_kb import kb_section_from
from tests.results_page_frames import POLITICAL_REGISTRY, political_pairwise_frame, political_pointwise_frame


def test_every_row_stays_with_its_source_and_registry_name() -> None:
    report = political_pairwise_frame()
    every = every_system(report, POLITICAL_REGISTRY)
    assert len(every) == len(report)  # nothing dropped: the study file's and the import's row both stay
    rows = every[every["subset"] == "all"].set_index(["system", "source"])
    assert rows.loc[("published-gpt-4.5", STUDY_FILE), "alpha_ordinal"] == 0.63
    assert rows.loc[("published-gpt-4.5", STUDY_FILE), "file_column"] == "published:gpt_4_5_preview_2025_02_27"
    assert rows.loc[("published-gpt-4.5", REGISTRY_IMPORT), "alpha_ordinal"] == 0.62
    assert rows.loc[("published-gpt-4.5", REGISTRY_IMPORT), "kind"] == "published"
    assert rows.loc[("published-phi-4", STUDY_FILE), "kind"] == "published-file"
    assert rows.loc[("published:ensemble3", STUDY_FILE), "kind"] == "published-ensemble"
    sources = dict(zip(every["system"], every["source"], strict=True))
    assert (sources["local-judge"], sources["human:left"], sources["baseline:worst"]) == (
        "platform",
        "human study",
        "bound",
    )


def test_the_paper_headline_sits_beside_the_best_model_of_each_source() -> None:
    every = every_system(political_pairwise_frame(), POLITICAL_REGISTRY)
    rows = paper_headline_rows(every).set_index("source")
    assert rows.loc["the paper (text)", "alpha_ordinal"] == PAPER_PAIRWISE_HEADLINE_VALUE
    assert (rows["subset"] == "P11").all()
    # P11 adds 0.05: the study file's GPT-4.5 0.68 and the import's 0.67 (local-judge is the platform's, not a source)
    assert rows.loc[STUDY_FILE, ["system", "alpha_ordinal"]].tolist() == ["published-gpt-4.5", pytest.approx(0.68)]
    assert rows.loc[REGISTRY_IMPORT, ["system", "alpha_ordinal"]].tolist() == ["published-gpt-4.5", pytest.approx(0.67)]
    side = sources_side_by_side(every, "subset", ["alpha_ordinal"])
    gpt = side[(side["subset"] == "all") & (side["system"] == "published-gpt-4.5")].iloc[0]
    assert (gpt["alpha_ordinal_study_file"], gpt["alpha_ordinal_registry_import"]) == (0.63, 0.62)
    assert gpt["alpha_ordinal_difference"] == pytest.approx(-0.01)
    assert list(dict.fromkeys(side["subset"])) == ["all", "P11", "P10", "P01", "P00"]


def _text(page: str) -> str:
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


@pytest.fixture(scope="module")
def page() -> str:
    return political_page_html(political_pairwise_frame(), political_pointwise_frame(), POLITICAL_REGISTRY)


def test_the_page_has_every_system_every_subset_metric_tabs_and_the_labelled_paper_figures(page: str) -> None:
    report = political_pairwise_frame()
    pairwise = page[page.index('id="table-0-0"') : page.index("</table>", page.index('id="table-0-0"'))]
    assert pairwise.count("<tr class=") == len(report)  # every system of every subset, both sources
    for subset in report["subset"].unique():
        assert f'data-value="{subset}"' in page and pairwise.count(f'data-split="{subset}"') == 9
    tabs = re.search(r'<div class="tabs rank-tabs" data-table="table-0-0">(.*?)</div>', page)
    assert tabs is not None
    assert re.findall(r'data-value="([^"]+)"', tabs.group(1)) == ["alpha_ordinal", "macro_f1", "d_footrule", "d_tau"]
    text = _text(page)
    assert '<h2 id="paper-figures">' in page and "α = 0.86 for the best model" in text
    assert "the paper (text)" in text and "study file" in text and "registry import" in text
    assert "Sources: 'study file' = the paper's predictions as its human-study files carry them" in text
    # the baselines as dashed lines in the plots (Plotly's JSON): the random judge and the all-equal bound
    assert page.count('"dash":"dash"') >= 2 and '"text":"random 0.083"' in page


def test_the_kb_findings_section_renders_the_findings_and_embeds_the_plots() -> None:
    robustness = pd.DataFrame(
        {"system": ["E1", "m"], "kind": ["ensemble", "model"], "difference": [6.0, 0.3]}
        | {"difference_low": [4.0, -0.1], "difference_high": [8.0, 0.7], "attacks_mean_abs_diff": [16.8, 9.0]}
    )
    section = kb_section_from(
        "- **Attacks join arguments farther apart than supports.** `E1`", [(b"\x89PNG", "plot")], robustness
    )
    text = results_page("T", "", [section])
    assert '<h2 id="kb-findings">What the knowledge base says</h2>' in text
    assert "<li><strong>Attacks join arguments farther apart than supports.</strong> <code>E1</code></li>" in text
    assert 'src="data:image/png;base64,iVBORw==' in text
    assert '<span class="ci">[4.000, 8.000]</span>' in text and "badge best" not in text
