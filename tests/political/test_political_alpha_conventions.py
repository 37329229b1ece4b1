"""Study B: which convention reproduces the paper's inter-model alpha on the pointwise study.

Two conventions, each on its own figures: the paper's Figure 2 (full 0.485, confident 0.578,
ambiguous -0.048) counts a model's label only when its 5 repetitions agree, and leaves the other
cells missing; the unanimous / 2-1 majority figures (0.483, 0.436) and the human-model medians of
the box plot (0.312, 0.424, -0.229) use the platform's P(NA) < 0.5. Every figure is recomputed
here from the published study file through the platform's functions. The ambiguous figure lies
below the floor of every complete 22 x 200 matrix, which is why only missing values reach it."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from argassets.platform.reporting.presentation import markdown_table
from argassets.political.human_studies import read_pointwise_study
from argassets.political.validation.alpha_conventions import (
    CONVENTIONS,
    PAPER_ALPHA_CONVENTION,
    PAPER_CONVENTION,
    PAPER_HUMAN_MODEL_MEDIAN,
    PAPER_INTER_MODEL_ALPHA,
    PAPER_REPORT_FIGURES,
    PLATFORM_CONVENTION,
    convention_table,
    human_model_medians,
    paper_comparison,
)
from argassets.political.validation.evaluation import evaluate_pointwise
from argassets.political.validation.pointwise import agreement_partitions, nominal_alpha, nominal_alpha_floor

#: The issue's four-decimal figures of the paper's convention on pointwise_results_merged.csv.
FIGURE_2 = {"full": 0.4852, "confident": 0.5782, "ambiguous": -0.0483}
FIGURE_2_TOLERANCE = 0.00005
#: The paper prints three decimals: a reproduction rounds to them.
PAPER_TOLERANCE = 0.0005


@pytest.fixture(scope="module")
def published_models(shared_data_dir) -> tuple[pd.DataFrame, dict[str, np.ndarray], dict[str, np.ndarray]]:
    study = read_pointwise_study(shared_data_dir / "political" / "human")
    wide = study.published.pivot(index="meta_id", columns="prefix", values="prob_na").loc[study.items["meta_id"]]
    models = {p: wide[p].to_numpy() for p in wide.columns if not p.startswith("ensemble")}
    ensembles = {p: wide[p].to_numpy() for p in wide.columns if p.startswith("ensemble")}
    assert len(models) == 22 and len(ensembles) == 3
    return study.items, models, ensembles


@pytest.fixture(scope="module")
def table(published_models) -> pd.DataFrame:
    items, models, ensembles = published_models
    return convention_table(items, models, ensembles)


def _convention(table: pd.DataFrame, name: str) -> pd.DataFrame:
    return table[table["convention"] == name].set_index("partition")


def test_the_partitions_have_the_papers_sizes(table):
    sizes = _convention(table, PLATFORM_CONVENTION)["n_items"].to_dict()
    assert sizes == {"full": 1000, "confident": 800, "ambiguous": 200, "unanimous": 485, "majority": 515}


def test_the_papers_convention_reproduces_figure_2(table):
    paper = _convention(table, PAPER_CONVENTION)
    for partition, figure in FIGURE_2.items():
        assert paper.loc[partition, "alpha"] == pytest.approx(figure, abs=FIGURE_2_TOLERANCE), partition
        assert paper.loc[partition, "reproduced"], partition
    # the cells left missing because a model's five repetitions disagree
    shares = paper.loc[["full", "confident", "ambiguous"], "missing_share"].round(3).to_dict()
    assert shares == {"full": 0.080, "confident": 0.059, "ambiguous": 0.164}


def test_the_platforms_convention_reproduces_the_agreement_partitions(table):
    platform = _convention(table, PLATFORM_CONVENTION)
    assert platform.loc[["unanimous", "majority"], "reproduced"].all()
    assert (platform["missing_share"] == 0).all()
    # ... and on Figure 2's partitions it gives the figures the platform reported before
    for partition, figure in {"full": 0.460, "confident": 0.568, "ambiguous": -0.040}.items():
        assert platform.loc[partition, "alpha"] == pytest.approx(figure, abs=PAPER_TOLERANCE), partition


def test_each_papers_figure_has_its_convention_and_no_other_reproduces_figure_2(table):
    for partition, convention in PAPER_ALPHA_CONVENTION.items():
        assert _convention(table, convention).loc[partition, "reproduced"], partition
    figure_2 = table[table["partition"].isin(list(FIGURE_2))].groupby("convention")["reproduced"].all()
    assert figure_2[figure_2].index.tolist() == [PAPER_CONVENTION]
    agreement = table[table["partition"].isin(["unanimous", "majority"])].groupby("convention")["reproduced"].all()
    assert sorted(agreement[agreement].index) == ["threshold_le_0.5", "threshold_lt_0.5"]  # P(NA) is never 0.5


def test_only_missing_values_reach_the_ambiguous_figure(table):
    ambiguous = table[table["partition"] == "ambiguous"]
    floor = nominal_alpha_floor(22, 200)
    assert floor == pytest.approx(-0.04738, abs=0.000005)
    assert PAPER_INTER_MODEL_ALPHA["ambiguous"] < floor
    complete = ambiguous[ambiguous["missing_share"] == 0]
    assert len(complete) == len(CONVENTIONS) - 1  # every convention but the paper's gives every cell a value
    assert (complete["alpha"] >= complete["complete_floor"]).all()
    paper = ambiguous.set_index("convention").loc[PAPER_CONVENTION]
    assert paper["complete_floor"] == pytest.approx(floor) and paper["alpha"] < floor


@pytest.mark.parametrize(("raters", "units", "categories"), [(2, 3, 2), (3, 7, 2), (5, 4, 3), (22, 200, 2)])
def test_no_complete_matrix_goes_below_the_floor(raters, units, categories):
    rng = np.random.default_rng(raters * 1000 + units)
    floor = nominal_alpha_floor(raters, units)
    for _ in range(200):
        data = rng.integers(0, categories, size=(raters, units)).astype(float)
        alpha = nominal_alpha(data)
        assert np.isnan(alpha) or alpha >= floor - 1e-12
    # the floor is reached when every unit holds the same mix of categories, in any order
    mix = np.arange(raters) % categories
    extreme = np.stack([rng.permutation(mix) for _ in range(units)], axis=1).astype(float)
    assert nominal_alpha(extreme) == pytest.approx(floor, abs=1e-12)


def test_every_small_complete_matrix_respects_the_floor():
    floor = nominal_alpha_floor(3, 3)
    alphas = [nominal_alpha(np.array(v, dtype=float).reshape(3, 3)) for v in itertools.product((0, 1), repeat=9)]
    finite = np.array([a for a in alphas if np.isfinite(a)])
    assert len(finite) == 2**9 - 2  # all but the two one-category matrices
    assert finite.min() == pytest.approx(floor)


def test_missing_values_go_below_the_floor():
    # three raters, and on every unit two of them disagree while the third is missing: alpha = -(U - 1) / U,
    # below the complete floor (1 - U) / (2 U)
    units = 4
    data = np.full((3, units), np.nan)
    for u in range(units):
        data[u % 3, u], data[(u + 1) % 3, u] = 0.0, 1.0
    assert nominal_alpha(data) == pytest.approx(-(units - 1) / units)
    assert nominal_alpha_floor(3, units) == pytest.approx((1 - units) / (2 * units))
    assert nominal_alpha(data) < nominal_alpha_floor(3, units)
    with pytest.raises(ValueError, match="at least two raters and one unit"):
        nominal_alpha_floor(1, 10)


def test_the_human_model_medians_use_the_platforms_convention(published_models):
    items, models, _ = published_models
    medians = human_model_medians(items, models)
    platform = _convention(medians, PLATFORM_CONVENTION)
    for partition in PAPER_HUMAN_MODEL_MEDIAN:
        assert platform.loc[partition, "reproduced"], partition
        assert platform.loc[partition, "n_models"] == 22
    paper = _convention(medians, PAPER_CONVENTION)["median_alpha"]
    for partition, value in {"full": 0.324, "confident": 0.422, "ambiguous": -0.268}.items():
        assert paper[partition] == pytest.approx(value, abs=PAPER_TOLERANCE), partition
    assert not _convention(medians, PAPER_CONVENTION).loc[list(PAPER_HUMAN_MODEL_MEDIAN), "reproduced"].all()
    with pytest.raises(ValueError, match="does not give one label per model"):
        human_model_medians(items, models, ["repetitions_as_raters"])
    with pytest.raises(ValueError, match="unknown convention"):
        human_model_medians(items, models, ["no-such-rule"])


def test_the_pointwise_report_carries_the_papers_figures(published_models):
    items, models, ensembles = published_models
    systems = {f"published:{p}": ("published", v) for p, v in (models | ensembles).items()}
    published = [f"published:{p}" for p in models]
    report = evaluate_pointwise(items, systems, {"published": published})
    indexed = report.set_index(["system", "partition"])
    for (system, partition), figure in PAPER_REPORT_FIGURES.items():
        assert indexed.loc[(system, partition), "alpha_nominal"] == pytest.approx(figure, abs=PAPER_TOLERANCE)
    assert indexed.loc[("inter-model:published", "full"), "missing_share"] == pytest.approx(0.080, abs=0.0005)
    assert indexed.loc[("inter-model:published:threshold", "full"), "missing_share"] == 0.0
    assert indexed.loc[("inter-model:published", "unanimous"), "n"] <= 485
    # the median row is the median of the published models' own rows
    rows = report[report["system"].isin(published) & (report["partition"] == "ambiguous")]
    assert indexed.loc[("human-model:published", "ambiguous"), "alpha_nominal"] == rows["alpha_nominal"].median()
    assert indexed.loc[("human:inter-annotator", "unanimous"), "alpha_nominal"] == pytest.approx(1.0)
    # the asset's Markdown table shows every row the paper has a figure for, beside it
    comparison = paper_comparison(report)
    assert len(comparison) == 5 * 3 + 5 and comparison["paper"].notna().sum() == len(PAPER_REPORT_FIGURES)
    assert (comparison["delta"].abs().dropna() < PAPER_TOLERANCE).all()
    text = markdown_table(comparison)
    for system, partition in PAPER_REPORT_FIGURES:
        assert any(f"| {system} " in line and f" {partition} " in line for line in text.splitlines())
    assert "-0.048" in text and "0.485" in text and "-0.229" in text


def test_agreement_partitions_reject_bad_labels():
    items = pd.DataFrame({"meta_id": ["x", "y"], "a1_label": [1, 0], "a2_label": [1, 2], "a3_label": [0, 0]})
    with pytest.raises(ValueError, match=r"pointwise item 'y': annotator labels must be 0 or 1, got \[0.0, 2.0, 0.0\]"):
        agreement_partitions(items)
    with pytest.raises(ValueError, match=r"missing column\(s\) a3_label"):
        agreement_partitions(items.drop(columns="a3_label"))
    ok = agreement_partitions(items.assign(a2_label=[1, 0]))
    assert ok["unanimous"].tolist() == [False, True] and ok["majority"].tolist() == [True, False]
    with pytest.raises(ValueError, match="at least two models"):
        convention_table(items, {"m": np.zeros(2)})
    assert set(PAPER_INTER_MODEL_ALPHA) == set(PAPER_ALPHA_CONVENTION)
