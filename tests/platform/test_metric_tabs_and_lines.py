"""The results pages' shared parts: metric tabs that re-rank, group tabs, and baselines drawn as lines."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from argassets.platform.reporting.metric_figure import metric_bar_figure
from argassets.platform.reporting.results_page import Leaderboard, Section, leaderboard_html, results_page


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "system": ["a", "b", "base", "a", "b", "base"],
            "subset": ["all", "all", "all", "P11", "P11", "P11"],
            "kind": ["model", "model", "baseline", "model", "model", "baseline"],
            "alpha": [0.8, 0.6, 0.9, 0.5, 0.7, 0.1],
            "alpha_low": [0.7, 0.5, 0.85, 0.4, 0.6, 0.0],
            "alpha_high": [0.9, 0.7, 0.95, 0.6, 0.8, 0.2],
            "f1": [0.1, 0.9, 0.5, 0.3, 0.2, 0.4],
            "error": [0.3, 0.1, 0.2, 0.3, 0.1, 0.2],
        }
    )


def test_a_board_offers_one_tab_per_metric_and_per_group_and_marks_the_best_of_each_group() -> None:
    board = Leaderboard(
        "t",
        _frame(),
        ["system"],
        "alpha",
        "says",
        rank_tabs=["f1", "error"],
        lower_is_better=["error"],
        split_by="subset",
        split_first="all",
    )
    text = leaderboard_html(board, "table-x")
    rank = re.search(r'<div class="tabs rank-tabs" data-table="table-x">(.*?)</div>', text)
    assert rank is not None
    assert re.findall(r'data-value="([^"]+)" data-order="(\w+)"', rank.group(1)) == [
        ("alpha", "desc"),
        ("f1", "desc"),
        ("error", "asc"),
    ]
    split = re.search(r'<div class="tabs split-tabs" data-table="table-x">(.*?)</div>', text)
    assert split is not None and re.findall(r'data-value="([^"]+)"', split.group(1)) == ["all", "P11"]
    assert 'class="tab active" data-value="all"' in split.group(1)
    # every row carries its group; the best (a model, not the baseline) is marked once per group
    assert text.count('data-split="all"') == 3 and text.count('data-split="P11"') == 3
    best = [row for row in text.split("<tr") if "badge best" in row]
    assert [re.search(r'data-split="(\w+)"', row).group(1) for row in best] == ["all", "P11"]  # type: ignore[union-attr]
    assert all('data-v="base"' not in row for row in best)
    # the tab metrics are columns of the table (hidden until chosen), the interval beside the value
    assert 'data-col="f1"' in text and 'data-col="error"' in text
    assert '<span class="ci">[0.700, 0.900]</span>' in text


def test_a_section_has_its_anchor_and_its_html_blocks() -> None:
    page = results_page("T", "intro", [Section("One", "text", anchor="one", html_blocks=["<ul><li>x</li></ul>"])])
    assert '<h2 id="one">One</h2><p>text</p><ul><li>x</li></ul>' in page


def test_the_bar_figure_draws_the_baselines_as_lines_in_every_metric_view() -> None:
    frame = _frame()[lambda f: f["subset"] == "all"]
    figure = metric_bar_figure(frame, "system", ["alpha", "f1", "error"], ["base"], {}, "T", lower_is_better=["error"])
    assert [s.x0 for s in figure.layout.shapes] == [pytest.approx(0.9)]
    assert figure.layout.shapes[0].line.dash == "dash"
    assert "base 0.900" in figure.layout.annotations[0].text
    buttons = figure.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["alpha", "f1", "error"]
    for button, value, order in zip(
        buttons, (0.9, 0.5, 0.2), (["b", "a", "base"], ["a", "base", "b"], ["a", "base", "b"]), strict=True
    ):
        visible, layout = button.args
        assert [shape["x0"] for shape in layout["shapes"]] == [pytest.approx(value)]
        assert layout["yaxis.categoryarray"] == order  # best last: drawn at the top
        shown = [t for t, v in zip(figure.data, visible["visible"], strict=True) if v]
        assert {t.meta for t in shown} == {button.label}
    first = [t for t in figure.data if t.visible]
    assert {t.meta for t in first} == {"alpha"} and any(t.error_x.array is not None for t in first)


def test_the_bar_figure_refuses_a_table_without_the_metrics() -> None:
    with pytest.raises(ValueError, match="none of the metrics"):
        metric_bar_figure(_frame(), "system", ["kappa"], [], {}, "T")
