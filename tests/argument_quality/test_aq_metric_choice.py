"""Study A's page says which metric it ranks by, and that the answer flips with the metric."""

from __future__ import annotations

import html
import re

import pandas as pd

from argassets.argument_quality.metric_choice import CHOICE_METRICS, rank_by_metric
from argassets.argument_quality.results_page import HEADLINE_SAYS, aq_page_html, leaderboard_figure, length_bias_figure
from tests.results_page_frames import aq_agreement_frame, aq_length_bias_frame


def _means() -> pd.DataFrame:
    """A judge best by κ, longer-wins best by Pearson and MAE (its strategies share values), a paper row."""
    rows = [
        ("judge", "few", "measured", 0.50, 0.40, 0.9),
        ("published:p", "few", "published", 0.45, 0.50, 0.8),
        ("longer-wins", "zero", "baseline", 0.20, 0.70, 0.6),
        ("longer-wins", "few", "baseline", 0.20, 0.70, 0.6),
        ("random", "zero", "baseline", 0.00, 0.00, 1.2),
    ]
    return pd.DataFrame(rows, columns=["model", "strategy", "kind", "cohen_kappa", "pearson", "mae"])


def test_the_best_and_the_baselines_rank_flip_with_the_metric() -> None:
    table = rank_by_metric(_means()).set_index("metric")
    assert list(table.index) == ["cohen_kappa", "pearson", "mae"]
    kappa, pearson, mae = table.loc["cohen_kappa"], table.loc["pearson"], table.loc["mae"]
    assert (kappa["best"], kappa["best_kind"], kappa["longer-wins_rank"], kappa["n_ranked"]) == (
        "judge / few",
        "measured",
        3,
        5,
    )
    assert (pearson["best"], pearson["longer-wins_rank"], pearson["best_judge"]) == (
        "longer-wins / zero",
        1,
        "published:p / few",
    )
    assert mae["longer-wins_rank"] == 1 and mae["random_rank"] == 5  # an error: lower is better
    assert pearson["best_value"] == 0.70 and pearson["random_value"] == 0.0


def _text(page: str) -> str:
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_the_page_states_its_metric_offers_the_others_and_shows_the_flip() -> None:
    page = aq_page_html(aq_agreement_frame(), aq_length_bias_frame(), "cohen_kappa")
    text = _text(page)
    assert "never in the best set" not in HEADLINE_SAYS and "left out of it by rule" in HEADLINE_SAYS
    assert re.search(r"Ranked by\s+cohen_kappa\s*: Cohen", text)
    tabs = re.search(r'<div class="tabs rank-tabs" data-table="table-0-0">(.*?)</div>', page)
    assert tabs is not None
    offered = re.findall(r'data-value="([^"]+)"', tabs.group(1))
    assert offered == [m for m in CHOICE_METRICS if m in aq_agreement_frame().columns]
    assert '<h2 id="metric-choice">Does the answer depend on the metric?</h2>' in page
    # in the test frame, longer-wins leads by κ and trails by Pearson: the sentence says both
    assert "by cohen_kappa the best is longer-wins / few" in text and "by pearson the best is" in text
    assert "docs/aggregation.md" in text and "README" in text
    # the per-dimension table says it is per dimension, not "mean over the three dimensions"
    per_dimension = text.split("Per dimension", 1)[1]
    assert re.search(r"Ranked by\s+cohen_kappa\s*: Cohen's kappa .* on one dimension", per_dimension)
    assert "mean over the three dimensions" not in per_dimension.split("filter rows", 1)[0]


def test_the_leaderboard_plot_draws_each_baseline_once_as_a_dashed_line() -> None:
    agreement = aq_agreement_frame()
    figure = leaderboard_figure(agreement[agreement["dimension"] == "mean"])
    lines = [shape for shape in figure.layout.shapes if shape.line.dash == "dash"]
    assert len(lines) == 1  # longer-wins (its strategies share one value); no random row in the frame
    assert "longer-wins" in figure.layout.annotations[0].text
    assert [b.label for b in figure.layout.updatemenus[0].buttons][0] == "cohen_kappa"


def test_the_length_bias_plot_shows_every_configuration() -> None:
    """Six configurations, six rows in every panel (plotly.js alone ranged the rows to [-1, 4])."""
    frame = aq_length_bias_frame()
    judges = frame[frame["kind"] != "reference"]
    more = pd.concat([judges.assign(strategy=strategy) for strategy in ("few", "cot")])
    figure = length_bias_figure(pd.concat([frame, more], ignore_index=True))
    shown = {y for trace in figure.data for y in trace.y}
    assert len(shown) == 9
    ranges = [axis["range"] for name, axis in figure.layout.to_plotly_json().items() if name.startswith("yaxis")]
    assert len(ranges) == 4 and all(tuple(r) == (-0.5, 8.5) for r in ranges)


def test_an_empty_reproduction_table_says_why() -> None:
    agreement = aq_agreement_frame()
    page = _text(aq_page_html(agreement.assign(reproduced=None), aq_length_bias_frame(), "k"))
    assert "No verdict yet: no configuration judged here is one of the paper's" in page
