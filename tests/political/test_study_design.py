"""Study B's human studies through the design path: the published studies re-imported come out
identical, a fresh design re-creates the paper's bins, and synthetic results give known figures."""

import dagster as dg
import numpy as np
import pandas as pd
import pytest

from argassets.platform.design.exchange import ImportPolicy, export_study, import_results, read_design
from argassets.platform.resources.data import PublishedDataResource
from argassets.political.assets import study_design as design_assets
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.published import read_published_tsv
from argassets.political.published_index import read_released_prompts
from argassets.political.study_design import sampling
from argassets.political.study_design.published import (
    pairwise_study_from_import,
    pointwise_study_from_import,
    published_pairwise_design,
    published_pointwise_design,
    published_results,
)
from argassets.political.validation.evaluation import (
    PairwiseDesign,
    evaluate_pairwise,
    evaluate_pointwise,
    interannotator_agreement,
)

KEEP_CONSENT = ImportPolicy(consent_revoked="keep")
#: The published systems whose validation figures are compared (two models and two ensembles:
#: every code path of the reports, at a tenth of the cost of all 25).
SYSTEMS = ("ensemble1", "ensemble3", "gpt_4o_2024_08_06", "llama3_1_8b")


@pytest.fixture(scope="module")
def human(shared_data_dir):
    return shared_data_dir / "political" / "human"


@pytest.fixture(scope="module")
def studies(human):
    return read_pointwise_study(human), read_pairwise_study(human)


@pytest.fixture(scope="module")
def returned(human, tmp_path_factory):
    """The published result files in the import format."""
    return published_results(human, tmp_path_factory.mktemp("returned"))


def _published_systems(study) -> dict:
    meta_ids = list(study.items["meta_id"])
    return {
        f"published:{prefix}": ("published", group.set_index("meta_id").loc[meta_ids, "scores"].map(list).tolist())
        for prefix, group in study.published.groupby("prefix")
        if prefix in SYSTEMS
    }


def _pairwise_figures(study) -> tuple[pd.DataFrame, pd.DataFrame]:
    meta_ids = list(study.items["meta_id"])
    systems = _published_systems(study)
    design = PairwiseDesign.build(meta_ids, study.pairs, study.votes, systems["published:ensemble3"][1])
    return evaluate_pairwise(design, systems), interannotator_agreement(design, study.votes)


def test_the_published_pairwise_study_reimported_gives_the_same_tables_and_figures(studies, human, returned) -> None:
    _, published = studies
    imported = import_results(published_pairwise_design(published, human), returned["pairwise"], KEEP_CONSENT)
    assert set(imported.problems["problem"]) == {"consent_revoked"}  # reported, kept as the paper kept them
    study = pairwise_study_from_import(imported, published.items, published.pairs, published.published)
    for name in ("items", "pairs", "votes", "published"):
        pd.testing.assert_frame_equal(getattr(study, name), getattr(published, name))
    for got, want in zip(_pairwise_figures(study), _pairwise_figures(published), strict=True):
        pd.testing.assert_frame_equal(got, want)


def test_the_published_pointwise_study_reimported_gives_the_same_tables_and_figures(studies, human, returned) -> None:
    published, _ = studies
    imported = import_results(published_pointwise_design(published, human), returned["pointwise"])
    assert imported.problems.empty
    items = published.items[["meta_id", "proposition", "locution", "n_type"]]
    study = pointwise_study_from_import(imported, items, published.published)
    pd.testing.assert_frame_equal(study.items, published.items)
    meta_ids = list(published.items["meta_id"])
    systems = {
        f"published:{p}": ("published", g.set_index("meta_id").loc[meta_ids, "prob_na"].to_numpy(dtype=float))
        for p, g in published.published.groupby("prefix")
        if p in SYSTEMS
    }
    groups = {"published": [s for s in systems if "ensemble" not in s]}
    pd.testing.assert_frame_equal(
        evaluate_pointwise(study.items, systems, groups), evaluate_pointwise(published.items, systems, groups)
    )


def test_by_default_the_revoked_consents_are_dropped_and_named(studies, human, returned) -> None:
    _, published = studies
    imported = import_results(published_pairwise_design(published, human), returned["pairwise"])
    revoked = imported.problems[imported.problems["problem"] == "consent_revoked"]
    assert len(revoked) == 42 and revoked["participant_id"].nunique() == 7
    assert (revoked["source"] == "pairwise_right_results.csv").all() and (revoked["action"] == "drop").all()
    assert revoked["row"].str.match(r"data row \d+ \(line \d+\)").all()
    assert len(imported.study_judgments()) == len(published.votes) - 42
    assert (imported.problems["problem"] == "missing_judgments").sum() == 42


def _truth_answers(design, bundles, truth: dict[str, float]) -> pd.DataFrame:
    """Every participant answers by a known truth (more right-wing = larger), checks as asked."""
    tasks = design.tasks.set_index("task_id")
    rows = []
    shown = bundles.join(tasks[["kind", "item_1", "item_2", "expected_label"]], on="task_id")
    for row in shown.itertuples(index=False):
        if row.kind != "item":
            label = row.expected_label
        elif design.kind == "pointwise":
            label = str(int(truth[row.item_1] > 0.5))
        else:
            first_righter = truth[row.item_1] > truth[row.item_2]
            label = "1" if first_righter == (row.question == "right") else "2"
        rows.append({"task_id": row.task_id, "participant_id": f"p{row.bundle}", "label": label, "sex": "Female"})
    return pd.DataFrame(rows)


def test_synthetic_results_round_trip_to_the_expected_validation_figures(studies, human, tmp_path) -> None:
    pointwise, pairwise = studies
    rng = np.random.default_rng(0)
    truth = {m: float(v) for m, v in zip(pairwise.items["meta_id"], rng.permutation(len(pairwise.items)), strict=True)}
    design, bundles, _ = export_study(published_pairwise_design(pairwise, human), 0.2, 0.0, 0, tmp_path / "pairwise")
    _truth_answers(design, bundles, truth).to_csv(tmp_path / "pairwise.csv", index=False)
    imported = import_results(read_design(tmp_path / "pairwise"), [tmp_path / "pairwise.csv"])
    assert imported.problems.empty
    study = pairwise_study_from_import(imported, pairwise.items, pairwise.pairs, pairwise.published)
    _, agreement = _pairwise_figures(study)
    alpha = agreement[agreement["statistic"] == "alpha_ordinal_left_vs_right"].set_index("subset")["value"]
    assert alpha["all"] == pytest.approx(1.0)
    shares = agreement[agreement["statistic"] == "share_of_pairs"]
    assert shares.loc[shares["distinct_labels"] == 1, "value"].tolist() == [1.0, 1.0]
    point_truth = {m: float(i % 2) for i, m in enumerate(pointwise.items["meta_id"])}
    point_design, point_bundles, _ = export_study(
        published_pointwise_design(pointwise, human), 0.2, 0.0, 0, tmp_path / "pw"
    )
    _truth_answers(point_design, point_bundles, point_truth).to_csv(tmp_path / "pw.csv", index=False)
    items = pointwise.items[["meta_id", "proposition", "locution", "n_type"]]
    point = pointwise_study_from_import(import_results(point_design, [tmp_path / "pw.csv"]), items, pointwise.published)
    political = np.array([point_truth[m] for m in point.items["meta_id"]])
    systems = {"truth": ("model", 1.0 - political), "inverse": ("model", political)}
    report = evaluate_pointwise(point.items, systems).set_index(["system", "partition"])
    assert report.loc[("truth", "full"), "macro_f1"] == pytest.approx(1.0)
    assert report.loc[("truth", "full"), "alpha_nominal"] == pytest.approx(1.0)
    assert report.loc[("inverse", "full"), "macro_f1"] == pytest.approx(0.0)
    assert report.loc[("human:inter-annotator", "full"), "alpha_nominal"] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def stand_in_kb(shared_data_dir):
    """The KB's arguments and E3 as the published files give them (texts from the released prompts)."""
    political = shared_data_dir / "political"
    prompts = read_released_prompts(political / "prompts" / "prompts.jsonl.xz")
    e3 = read_published_tsv(political / "ensembles" / "ensemble3.tsv", None)
    arguments = prompts.assign(argument_id=[f"n{i}" for i in prompts["node_id"]], speaker="", episode="")
    ensembles = e3.assign(system="E3", argument_id=[f"n{i}" for i in e3["node_id"]])[
        ["system", "argument_id", "prob_na", "mean"]
    ]
    return arguments[["argument_id", "speaker", "episode", "proposition", "locution"]], ensembles


def test_a_designed_pairwise_study_recreates_the_papers_bins_with_a_fixed_seed(stand_in_kb, studies) -> None:
    _, published = studies
    candidates = sampling.kb_candidates(*stand_in_kb)
    allocation = sampling.published_allocation(published)
    items = sampling.pairwise_items(candidates, 0.05, 100, allocation, seed=7)
    assert items.groupby("stratum").size().to_dict() == published.items.groupby("bin").size().to_dict()
    pairs = sampling.design_pairs(items, "bins", 44, 22, 934, seed=7)
    ours = pd.crosstab(pairs["stratum_1"], pairs["stratum_2"])
    theirs = pd.crosstab(published.pairs["cat1"], published.pairs["cat2"])
    assert ours.to_numpy().tolist() == theirs.to_numpy().tolist()
    assert (pairs["kind"] == "within").sum() == (published.pairs["cat1"] == published.pairs["cat2"]).sum() == 318
    again = sampling.design_pairs(
        sampling.pairwise_items(candidates, 0.05, 100, allocation, seed=7), "bins", 44, 22, 934, seed=7
    )
    pd.testing.assert_frame_equal(pairs, again)


def test_the_design_assets_materialise_from_the_kb_to_the_files(stand_in_kb, shared_data_dir, tmp_path) -> None:
    arguments, ensembles = stand_in_kb

    @dg.asset(name="political_kb_arguments")
    def kb() -> pd.DataFrame:
        return arguments

    @dg.asset(name="political_ensembles")
    def e3() -> pd.DataFrame:
        return ensembles

    run_config = {
        "ops": {
            "political_study_design_simulation": {
                "config": {"replications": 20, "pairwise_judgments": [4, 6, 8], "pointwise_annotators": [2, 3, 5]}
            },
            "political_study_design_tasks": {"config": {"output_dir": str(tmp_path)}},
        }
    }
    assets = [
        kb,
        e3,
        design_assets.political_study_design_items,
        design_assets.political_study_design_pairs,
        design_assets.political_study_design_simulation,
        design_assets.political_study_design_tasks,
    ]
    result = dg.materialize(
        assets, resources={"data": PublishedDataResource(data_dir=str(shared_data_dir))}, run_config=run_config
    )
    assert result.success
    items = result.output_for_node("political_study_design_items")
    assert items.groupby("study").size().to_dict() == {"pairwise": 100, "pointwise": 1000}
    simulation = result.output_for_node("political_study_design_simulation")
    assert simulation.groupby("study")["chosen"].sum().to_dict() == {"pairwise": 1, "pointwise": 1}
    tasks = result.output_for_node("political_study_design_tasks")
    assert set(tasks["kind"]) == {"item", "attention", "gold"}
    for study in ("pointwise", "pairwise"):
        design = read_design(tmp_path / study)
        assert (tmp_path / study / "prolific_bundles.csv").exists() and (
            tmp_path / study / "label_studio_tasks.json"
        ).exists()
        study_rows = tasks[(tasks["study"] == study) & (tasks["kind"] == "item")]
        assert study_rows["task_id"].value_counts().eq(design.judgments_per_task).all()
