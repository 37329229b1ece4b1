"""The perturbation and variant reports on judges with known behaviour (fast, the sample corpus).

longer-wins reads only the texts: an order swap or renamed options flip nothing and leave its
ranking where it was, while padding argument A with 20,000 characters of filler makes A win every
pair (the flips are exactly the pairs it did not give to A). A judge that always answers the first
slot flips every swapped pair. The variant report picks min / median / max with their intervals
and counts the model pairs whose order two variants swap.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from argassets.argument_quality.judgments import build_requests, judgment_table
from argassets.argument_quality.perturbation_report import SWAP, perturbation_arms, perturbation_report
from argassets.argument_quality.prompt_axis import PROTOCOL, Presentation, presentation
from argassets.argument_quality.prompt_axis_report import rank_swaps, variant_report
from argassets.platform.judging.engines.baselines import LongerWinsJudge
from argassets.platform.judging.interface import CachedCompletion, ChatRequest
from argassets.platform.stats.intervals import BootstrapSettings
from argassets.platform.study import RequestSet

SETTINGS = BootstrapSettings(n_resamples=300)
Answer = Callable[[ChatRequest], str]


@pytest.fixture(scope="module")
def inputs(upstream_db: Path) -> dict[str, pd.DataFrame]:
    with duckdb.connect(str(upstream_db), read_only=True) as con:
        names = ("aq_prompts", "webis_expert_comparisons", "webis_arguments")
        tables = {t: con.execute(f"select * from {t}").df() for t in names}
    tables["zero"] = tables["aq_prompts"][tables["aq_prompts"]["strategy"] == "zero"].reset_index(drop=True)
    return tables


def _judged(inputs, entry: str, answer: Answer, shown: Presentation, orders=("ab",)) -> pd.DataFrame:
    """``entry``'s aq_judgments rows: every zero-shot prompt in ``orders``, three identical runs."""
    comparisons, arguments = inputs["webis_expert_comparisons"], inputs["webis_arguments"]
    requests, items = build_requests(inputs["zero"], comparisons, arguments, orders, shown)
    completions = [
        CachedCompletion(r.key, run, entry, "x", "s", answer(r), None, 0.0, "", "", "scripted", False)
        for r in requests
        for run in range(3)
    ]
    return judgment_table(RequestSet(requests, items=items), completions, entry)


def _report(inputs, judgments: pd.DataFrame, axis: pd.DataFrame) -> pd.DataFrame:
    arms = perturbation_arms(axis, judgments[["judge_model", "order"]].drop_duplicates())
    comparisons, arguments = inputs["webis_expert_comparisons"], inputs["webis_arguments"]
    report = perturbation_report(judgments, arms, comparisons, arguments, SETTINGS)
    return report.set_index(["entry", "perturbation", "dimension", "metric"])


def _axis(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["entry", "model", "prompt_variant", "perturbation"])


def test_longer_wins_is_moved_by_padding_only_and_a_first_slot_judge_by_the_swap(inputs):
    longer = LongerWinsJudge().answer
    judgments = pd.concat(
        [
            _judged(inputs, "lw", longer, PROTOCOL, ("ab", "ba")),
            _judged(inputs, "lw.pad", longer, presentation(None, "pad-a-20000")),
            _judged(inputs, "lw.options", longer, presentation(None, "options-12")),
            _judged(inputs, "first", lambda r: r.choices[0], PROTOCOL, ("ab", "ba")),
        ],
        ignore_index=True,
    )
    axis = _axis(
        [
            ("lw", "lw", "appendix", "none"),
            ("lw.pad", "lw", "appendix", "pad-a-20000"),
            ("lw.options", "lw", "appendix", "options-12"),
            ("first", "first", "appendix", "none"),
            ("lw.never-run", "lw", "appendix", "options-reordered"),
        ]
    )
    report = _report(inputs, judgments, axis)
    base = judgments[(judgments["judge_model"] == "lw") & (judgments["order"] == "ab") & (judgments["run"] == 0)]
    for dimension, rows in base.groupby("dimension"):
        not_a = float((rows["label"] != "A").mean())
        assert 0 < not_a < 1
        assert report.loc[("lw.pad", "pad-a-20000", dimension, "flip_rate"), "estimate"] == pytest.approx(not_a)
        assert report.loc[("lw.pad", "pad-a-20000", dimension, "flip_rate"), "n"] == len(rows)
        for entry, perturbation in (("lw", SWAP), ("lw.options", "options-12")):
            assert report.loc[(entry, perturbation, dimension, "flip_rate"), "estimate"] == 0
            assert report.loc[(entry, perturbation, dimension, "rank_spearman"), "estimate"] == pytest.approx(1)
            assert report.loc[(entry, perturbation, dimension, "delta_spearman_experts"), "estimate"] == pytest.approx(
                0
            )
        assert report.loc[("first", SWAP, dimension, "flip_rate"), "estimate"] == 1
        assert report.loc[("lw.pad", "pad-a-20000", dimension, "rank_spearman"), "estimate"] < 0.9
    assert set(report["n_topics"]) == {3}
    bounded = report.dropna(subset=["low"])
    assert len(bounded) > 0 and (bounded["low"] <= bounded["estimate"] + 1e-9).all()
    assert (bounded["estimate"] <= bounded["high"] + 1e-9).all()
    # The position-free judge's swap is reported from its own ba rows; the first-slot judge has no other arm.
    assert set(report.reset_index()["entry"]) == {"lw", "lw.pad", "lw.options", "first"}


def _agreement(figures: dict[tuple[str, str], tuple[float, float]]) -> pd.DataFrame:
    rows = []
    for (entry, _), (kappa, rho) in figures.items():
        rows.append(
            {
                "model": entry,
                "strategy": "zero",
                "dimension": "logic",
                "cohen_kappa": kappa,
                "cohen_kappa_low": kappa - 0.1,
                "cohen_kappa_high": kappa + 0.1,
                "spearman": rho,
                "spearman_low": rho - 0.2,
                "spearman_high": rho + 0.2,
                "interval_method": "BCa",
            }
        )
    return pd.DataFrame(rows)


def test_variant_report_picks_figures_with_their_intervals_and_counts_rank_swaps():
    figures = {
        ("x", "appendix"): (0.30, 0.5),
        ("x.reworded", "reworded"): (0.10, 0.6),
        ("x.terse", "terse"): (0.20, 0.7),
        ("y", "appendix"): (0.20, 0.4),
        ("y.reworded", "reworded"): (0.25, 0.3),
        ("z", "appendix"): (0.05, 0.0),
    }
    axis = _axis([(entry, entry[0], variant, "none") for entry, variant in figures])
    axis = pd.concat([axis, _axis([("x.pad", "x", "appendix", "pad-a-10")])], ignore_index=True)
    agreement = pd.concat([_agreement(figures), _agreement({("x.pad", "appendix"): (-1.0, -1.0)})])
    report = variant_report(agreement, axis).set_index(["model", "metric", "statistic"])
    assert set(report.index.get_level_values("model")) == {"x", "y"}  # z has one variant; x.pad is perturbed
    assert report.loc[("x", "cohen_kappa", "min"), ["variant", "estimate", "low"]].tolist() == [
        "reworded",
        0.10,
        pytest.approx(0.0),
    ]
    assert report.loc[("x", "cohen_kappa", "median"), "variant"] == "terse"
    assert report.loc[("x", "cohen_kappa", "max"), ["variant", "high"]].tolist() == ["appendix", pytest.approx(0.4)]
    assert report.loc[("y", "spearman", "median"), "variant"] == "reworded"  # the lower middle of two
    assert report.loc[("x", "spearman", "min"), "n_variants"] == 3
    swaps = rank_swaps(agreement, axis).set_index("metric")
    # κ: x ahead of y under appendix (0.30 > 0.20), behind under reworded (0.10 < 0.25); ρ: x ahead under both.
    assert swaps.loc["cohen_kappa", ["model_pairs", "pairs_swapping_rank"]].tolist() == [1, 1]
    assert swaps.loc["spearman", ["model_pairs", "pairs_swapping_rank"]].tolist() == [1, 0]
    assert np.isfinite(report["estimate"]).all()


def test_the_range_check_flags_a_figure_out_of_range_or_interval():
    from argassets.argument_quality.perturbation_report import perturbation_problems

    rows = pd.DataFrame(
        {
            "metric": ["flip_rate", "flip_rate", "rank_spearman", "rank_spearman", "nonsense"],
            "estimate": [0.2, 1.2, 0.5, 0.5, 0.1],
            "low": [0.1, np.nan, 0.6, np.nan, np.nan],
            "high": [0.3, np.nan, 0.9, np.nan, np.nan],
        }
    )
    assert perturbation_problems(rows).index.size == 3
    assert perturbation_problems(rows)["estimate"].tolist() == [1.2, 0.5, 0.1]


def test_the_page_shows_each_way_side_by_side_with_its_figures():
    from argassets.argument_quality.prompt_axis_page import prompt_axis_section
    from argassets.platform.reporting.results_page import results_page

    axis = _axis(
        [("x", "x", "appendix", "none"), ("x.pad", "x", "appendix", "pad-a-10"), ("y", "y", "appendix", "none")]
    )
    agreement = _agreement(
        {("x", "appendix"): (0.3, 0.5), ("x.pad", "appendix"): (0.2, 0.4), ("y", "appendix"): (0.1, 0.1)}
    )
    perturbations = pd.DataFrame(
        {
            "entry": ["x.pad", "x"],
            "perturbation": ["pad-a-10", "swap"],
            "strategy": "zero",
            "dimension": "logic",
            "metric": "flip_rate",
            "estimate": [0.25, 0.5],
            "low": [0.125, np.nan],
            "high": [0.375, np.nan],
        }
    )
    [section] = prompt_axis_section(agreement, None, perturbations, axis)
    [table] = section.tables
    rows = table.frame.set_index(["entry", "perturbation"])
    assert list(rows.index) == [("x", "none"), ("x.pad", "pad-a-10"), ("x", "swap")]  # y: judged one way only
    assert rows.loc[("x.pad", "pad-a-10"), ["cohen_kappa", "flip_rate"]].tolist() == [
        "0.200 [0.100, 0.300]",
        "0.250 [0.125, 0.375]",
    ]
    assert rows.loc[("x", "swap"), ["cohen_kappa", "flip_rate"]].tolist() == ["-", "0.500"]  # its kappa: the ab row
    html = results_page("t", "i", [section])
    assert "0.250 [0.125, 0.375]" in html and "flip_rate" in html
