"""Both studies' results pages in Chromium (one browser launch): no console error, sorting, plots drawn.

The pages are built from small report tables (tests/results_page_frames.py) by the same functions
the ``aq_results_page`` and ``political_results_page`` assets call, and opened from ``file://``
with the network blocked, so a page that fetched anything (a CDN script) would fail here.
"""

from __future__ import annotations

from pathlib import Path

from argassets.argument_quality.results_page import aq_page_html
from argassets.platform.reporting.results_page import write_page
from argassets.political.results_page import political_page_html
from tests.results_page_frames import (
    POLITICAL_REGISTRY,
    aq_agreement_frame,
    aq_length_bias_frame,
    political_pairwise_frame,
    political_pointwise_frame,
)


def _first_cells(page, table_id: str) -> list[str]:
    return page.eval_on_selector_all(f"#{table_id} tbody tr", "rows => rows.map(r => r.cells[0].textContent)")


def _check_page(page, path: Path, n_plots: int) -> None:
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    # Ranked by the headline, best first; a click on the headline header reverses the order.
    before = _first_cells(page, "table-0-0")
    page.click("#table-0-0 th.headline")
    after = _first_cells(page, "table-0-0")
    assert after[0] != before[0] and sorted(after) == sorted(before)
    # The other metrics are hidden until one click shows them.
    more = page.locator("#table-0-0 th.more").first
    assert not more.is_visible()
    page.check("input.toggle-more[data-table=table-0-0]")
    assert more.is_visible()
    # The filter box hides the rows that do not match.
    page.fill("input.filter[data-table=table-0-0]", before[0].split()[0])
    visible = page.eval_on_selector_all(
        "#table-0-0 tbody tr", "rows => rows.filter(r => r.style.display !== 'none').length"
    )
    assert 0 < visible < len(before)
    plots = page.locator(".js-plotly-plot")
    assert plots.count() == n_plots
    for index in range(n_plots):
        box = plots.nth(index).locator("svg.main-svg").first.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 200
    assert not errors, errors
    assert all(url.startswith("file://") for url in requested), requested


def _visible(page, table_id: str, column: str) -> list[str]:
    script = (
        "(rows, name) => { var index = Array.prototype.findIndex.call(rows[0].closest('table').tHead.rows[0].cells,"
        " th => th.dataset.col === name); return rows.filter(r => r.style.display !== 'none')"
        ".map(r => r.cells[index].dataset.v); }"
    )
    return page.eval_on_selector_all(f"#{table_id} tbody tr", script, column)


def _check_rank_tab(page, metric: str) -> None:
    """One click on a metric's tab re-ranks the first table by it (best first) and shows its column."""
    page.fill("input.filter[data-table=table-0-0]", "")
    page.click(f".rank-tabs[data-table=table-0-0] .tab[data-value={metric}]")
    values = [float(v) for v in _visible(page, "table-0-0", metric) if v != ""]
    assert values and values == sorted(values, reverse=True)
    assert page.locator(f"#table-0-0 th[data-col={metric}]").is_visible()
    assert page.locator(".ranked-name[data-table=table-0-0]").text_content() == metric


def _check_split_tab(page, group: str, n_rows: int) -> None:
    """One click on a group's tab shows that group's rows only."""
    page.fill("input.filter[data-table=table-0-0]", "")
    page.click(f".split-tabs[data-table=table-0-0] .tab[data-value={group}]")
    shown = page.eval_on_selector_all(
        "#table-0-0 tbody tr", "rows => rows.filter(r => r.style.display !== 'none').map(r => r.dataset.split)"
    )
    assert shown == [group] * n_rows


def test_results_pages_in_chromium(chromium: Path, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    aq = write_page(tmp_path / "aq.html", aq_page_html(aq_agreement_frame(), aq_length_bias_frame(), "cohen_kappa"))
    political = write_page(
        tmp_path / "political.html",
        political_page_html(political_pairwise_frame(), political_pointwise_frame(), POLITICAL_REGISTRY),
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
            aq_page = context.new_page()
            _check_page(aq_page, aq, n_plots=2)
            _check_rank_tab(aq_page, "pearson")
            page = context.new_page()
            _check_page(page, political, n_plots=3)
            _check_split_tab(page, "P11", n_rows=9)
            _check_rank_tab(page, "macro_f1")
            page.screenshot(path=str(tmp_path / "political.png"), full_page=True)
        finally:
            browser.close()
