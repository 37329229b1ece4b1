"""Study A's next pairwise study: pairs within topics, judgments per pair from the experts' pilot, files."""

import dagster as dg
import pandas as pd
import pytest

from argassets.argument_quality.assets import study_design as design_assets
from argassets.argument_quality.corpus import find_corpus_files, load_corpus
from argassets.argument_quality.study_design import design_pairs, expert_pilot, within_topic_candidates
from argassets.platform.design.exchange import read_design


@pytest.fixture(scope="module")
def corpus(shared_data_dir):
    return load_corpus(find_corpus_files(shared_data_dir / "webis-argquality20"))


def test_pairs_stay_within_topics_and_cover_every_argument(corpus) -> None:
    arguments, _ = corpus
    candidates = within_topic_candidates(arguments)
    argumentative = arguments[arguments["is_argument"].astype(bool)]
    assert len(candidates) == sum(n * (n - 1) // 2 for n in argumentative.groupby("topic_id").size())
    pairs = design_pairs(candidates, "adaptive", 4.0, seed=0)
    topic_of = lambda key: int(key.split("-")[0][1:])  # noqa: E731
    assert (pairs["item_1"].map(topic_of) == pairs["topic_id"]).all()
    assert (pairs["item_2"].map(topic_of) == pairs["topic_id"]).all()
    assert len(set(pairs["item_1"]) | set(pairs["item_2"])) == len(argumentative)
    assert abs(len(pairs) - 2 * len(argumentative)) <= len(argumentative) * 0.05 + 20


def test_the_expert_pilot_is_a_noisy_but_separated_scale(corpus) -> None:
    _, comparisons = corpus
    pool = expert_pilot(comparisons, "logic")
    assert 0.3 < pool.strength_sd < 1.5
    share = (comparisons.loc[comparisons["dimension"] == "logic", "label"] == "Tie").mean()
    assert pool.tie_share == pytest.approx(share)


def test_the_design_assets_materialise_to_the_files(corpus, tmp_path) -> None:
    arguments, comparisons = corpus

    @dg.asset(name="webis_arguments")
    def texts() -> pd.DataFrame:
        return arguments

    @dg.asset(name="webis_expert_comparisons")
    def experts() -> pd.DataFrame:
        return comparisons

    run_config = {
        "ops": {
            "aq_study_design_pairs": {"config": {"pairs_per_argument": 8.0}},
            "aq_study_design_simulation": {"config": {"replications": 8, "judgments": [3, 6], "target_ssr": 0.0}},
            "aq_study_design_tasks": {"config": {"output_dir": str(tmp_path), "bundle_size": 30}},
        }
    }
    assets = [
        texts,
        experts,
        design_assets.aq_study_design_pairs,
        design_assets.aq_study_design_simulation,
        design_assets.aq_study_design_tasks,
    ]
    result = dg.materialize(assets, run_config=run_config)
    assert result.success
    simulation = result.output_for_node("aq_study_design_simulation")
    assert set(simulation["dimension"]) == {"logic", "rhetoric", "dialectic"}
    design = read_design(tmp_path)
    assert {q.name for q in design.questions} == {"logic", "rhetoric", "dialectic"}
    chosen = int(simulation.loc[simulation["chosen"], "judgments_per_pair"].max())
    assert design.judgments_per_task == chosen
    tasks = result.output_for_node("aq_study_design_tasks")
    assert tasks.loc[tasks["kind"] == "item", "task_id"].value_counts().eq(chosen).all()
