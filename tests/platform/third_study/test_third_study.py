"""The proof: a third pairwise study declared in tests/ only, judged and reported through Dagster.

The persuasion study (``tests/platform/third_study``) imports the platform and nothing of the other
studies. Registered, it is materialised end to end with baseline judges: its judgments (one
partition per judge model), majority votes, Bradley-Terry scores, the agreement report and the
blocking connectivity check; the assertions read the tables against the corpus's known answers.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from argassets import catalog
from argassets.platform.operations.automation import study_roots, with_automation
from argassets.platform.operations.run_tags import MODEL_TAG, STUDY_TAG
from argassets.platform.registry.entries import load_registry, parse_registry
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.study import StudyDefinition, register_study, study_names, unregister_study
from resources.build import build_resources
from sensors.jobs import build_study_jobs
from sensors.layout import code_location_layout
from tests.model_partitions import add_partitions
from tests.platform.third_study import assets, checks
from tests.platform.third_study.corpus import EXPERTS_PREFER_LONGER, TOPICS, synthetic_pairs, synthetic_texts
from tests.platform.third_study.science import N_RUNS, PersuasionScope, disconnected_topics
from tests.platform.third_study.study import STUDY

REGISTRY = """
[[models]]
name = "longer"
backend = "longer-wins"
studies = ["persuasion"]

[[models]]
name = "random"
backend = "random"
studies = ["persuasion"]
seed = 3
scope = { topics = [1, 2] }

[[models]]
name = "elsewhere"
backend = "random"
studies = ["argument_quality"]
"""
JUDGES = ["longer", "random", "elsewhere"]
CORPUS = ["persuasion_texts", "persuasion_pairs"]
DOWNSTREAM = ["persuasion_majority_votes", "persuasion_bt_scores", "persuasion_agreement_report"]


@pytest.fixture(scope="module")
def persuasion() -> Iterator[StudyDefinition]:
    register_study(STUDY)
    yield STUDY
    unregister_study(STUDY.name)


@pytest.fixture(scope="module")
def materialised(persuasion: StudyDefinition, tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """Every table of the study, materialised once through Dagster with the baseline judges."""
    tmp_path = tmp_path_factory.mktemp("persuasion")
    registry = tmp_path / "models.toml"
    registry.write_text(REGISTRY)
    database = tmp_path / "tables.duckdb"
    loaded = [
        *dg.load_assets_from_modules(list(persuasion.asset_modules)),
        *dg.load_asset_checks_from_modules(list(persuasion.check_modules)),
    ]
    definitions = [a for a in loaded if isinstance(a, dg.AssetsDefinition)]
    resources = {
        "registry": ModelRegistryResource(path=str(registry)),
        "judge": JudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
        "io_manager": duckdb_io_manager(str(database)),
    }
    with dg.instance_for_test() as instance:
        add_partitions(instance, [e.name for e in load_registry(registry).models])

        def run(selection: list[str], partition_key: str | None = None) -> dg.ExecuteInProcessResult:
            return dg.materialize(
                definitions, selection=selection, partition_key=partition_key, resources=resources, instance=instance
            )

        corpus = run(CORPUS)
        assert [e.passed for e in corpus.get_asset_check_evaluations()] == [True]
        judged = {name: run([persuasion.root_asset], partition_key=name) for name in JUDGES}
        assert [m.partition for m in judged["elsewhere"].get_asset_materialization_events()] == []
        downstream = run(DOWNSTREAM)
        tables = {name: downstream.output_for_node(name) for name in DOWNSTREAM}
        report = downstream.asset_materializations_for_node("persuasion_agreement_report")[0]
        tables["report_markdown"] = pd.DataFrame({"markdown": [report.metadata["agreement"].value]})
    tables["judgments"] = pd.concat(
        [judged[name].output_for_node(persuasion.root_asset) for name in ("longer", "random")], ignore_index=True
    )
    return tables


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports (absolute imports)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_study_imports_the_platform_and_no_other_study() -> None:
    package = Path(__file__).parent
    imported = set().union(*(imported_modules(path) for path in package.glob("*.py")))
    others = sorted(n for n in imported if n.startswith(("argassets.argument_quality", "argassets.political")))
    assert others == []
    assert {"argassets.platform.judging.partition", "argassets.platform.pairwise.scores"} <= imported


def test_the_study_is_one_of_the_studies_once_registered(persuasion: StudyDefinition) -> None:
    assert study_names()[-1] == "persuasion"
    assert study_roots()["persuasion"] == "persuasion_judgments"
    # the catalog's module lists were fixed at import; asset_modules() reads the studies again
    assert assets in catalog.asset_modules() and checks in catalog.check_modules()
    registry = parse_registry(tomllib.loads(REGISTRY))
    assert PersuasionScope.of(registry.get("random")).topics == [1, 2]
    assert registry.get("longer").scope_text("persuasion") == "full"


def test_the_code_location_assembled_after_registering_runs_the_study_job(
    persuasion: StudyDefinition, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """definitions.py's assembly, done again with the study registered: its job judges a partition."""
    registry = tmp_path / "models.toml"
    registry.write_text(REGISTRY)
    monkeypatch.setenv("ARGASSETS_MODELS", str(registry))
    code_location_layout.cache_clear()  # the layout read the studies of the first call
    try:
        assert code_location_layout().study_selection("persuasion") == [dg.AssetKey("persuasion_judgments")]
        defs = dg.Definitions(
            assets=with_automation(dg.load_assets_from_modules(catalog.asset_modules())),
            asset_checks=dg.load_asset_checks_from_modules(catalog.check_modules() + catalog.asset_modules()),
            resources={
                **build_resources(),
                "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
                "io_manager": duckdb_io_manager(str(tmp_path / "tables.duckdb")),
            },
            jobs=build_study_jobs(),
        )
        job = defs.resolve_job_def("persuasion_judgments_job")
        with dg.instance_for_test() as instance:
            add_partitions(instance, ["longer"])
            corpus = defs.resolve_implicit_global_asset_job_def().execute_in_process(
                asset_selection=[dg.AssetKey(name) for name in CORPUS], instance=instance
            )
            assert corpus.success
            result = job.execute_in_process(partition_key="longer", instance=instance)
            judged = result.output_for_node("persuasion_judgments")
            tags = instance.get_run_by_id(result.run_id).tags  # type: ignore[union-attr]
    finally:
        code_location_layout.cache_clear()
    assert len(judged) == len(synthetic_pairs(synthetic_texts())) * N_RUNS and judged["is_valid"].all()
    assert tags[STUDY_TAG] == "persuasion" and tags[MODEL_TAG] == "longer"


def test_longer_wins_judges_every_pair_by_length(materialised: dict[str, pd.DataFrame]) -> None:
    judgments = materialised["judgments"]
    texts = synthetic_texts().set_index("text_id")["words"]
    longer = judgments[judgments["judge_model"] == "longer"]
    assert len(longer) == len(synthetic_pairs(synthetic_texts())) * N_RUNS and longer["is_valid"].all()
    expected = (longer["text_id_a"].map(texts) > longer["text_id_b"].map(texts)).map({True: "A", False: "B"})
    assert (longer["label"] == expected).all()
    # the scoped random judge answered only its topics, with A, B or Tie
    random_rows = judgments[judgments["judge_model"] == "random"]
    assert set(random_rows["topic_id"]) == {1, 2} and set(random_rows["label"]) <= {"A", "B", "Tie"}


def test_majority_votes_hold_one_row_per_judge_and_pair(materialised: dict[str, pd.DataFrame]) -> None:
    votes = materialised["persuasion_majority_votes"]
    pairs = synthetic_pairs(synthetic_texts())
    counts = votes.groupby("judge_model").size().to_dict()
    assert counts == {"longer": len(pairs), "random": int(pairs["topic_id"].isin([1, 2]).sum())}
    longer = votes[votes["judge_model"] == "longer"]
    assert (longer["n_valid_runs"] == N_RUNS).all()
    assert (longer["majority_label"] == longer["label_run0"]).all()


def test_agreement_with_experts_is_the_known_rate(materialised: dict[str, pd.DataFrame]) -> None:
    report = materialised["persuasion_agreement_report"].set_index("judge_model")
    pairs = synthetic_pairs(synthetic_texts())
    assert report.loc["longer", "percent_agreement"] == pytest.approx(100 * EXPERTS_PREFER_LONGER)
    assert report.loc["longer", "n_comparisons"] == len(pairs)
    assert report.loc["longer", "cohen_kappa"] > report.loc["random", "cohen_kappa"]
    assert "longer" in materialised["report_markdown"]["markdown"].iat[0]


def test_bt_scores_order_the_texts_as_their_known_strengths(materialised: dict[str, pd.DataFrame]) -> None:
    scores = materialised["persuasion_bt_scores"]
    texts = synthetic_texts().set_index("text_id")
    # the experts judge by strength, longer-wins by length: each judge's scores follow its own rule
    for judge, truth in (("experts", "strength"), ("longer", "words")):
        mine = scores[scores["judge_model"] == judge].assign(truth=lambda f: f["text_id"].map(texts[truth]))
        assert len(mine) == len(texts) and (mine["component"] == 0).all()
        for topic in TOPICS:
            ranked = mine[mine["text_id"].str.startswith(f"t{topic}-")].sort_values("bt_score")
            assert list(ranked["truth"]) == sorted(ranked["truth"]), (judge, topic)
    experts = scores[scores["judge_model"] == "experts"].set_index("text_id")["bt_score"]
    longer = scores[scores["judge_model"] == "longer"].set_index("text_id")["bt_score"]
    for topic in TOPICS:  # the one pair they disagree on: text 1 is longer, text 2 stronger
        assert experts[f"t{topic}-2"] > experts[f"t{topic}-1"] and longer[f"t{topic}-1"] > longer[f"t{topic}-2"]


def cut_topic_two(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs with topic 2's texts 0 and 1 cut off from the rest (compared only with each other)."""
    touches = pairs[["text_id_a", "text_id_b"]].isin(["t2-0", "t2-1"]).any(axis=1)
    island = {"pair_id": "p2-island", "topic_id": 2, "text_id_a": "t2-0", "text_id_b": "t2-1", "expert_label": "A"}
    return pd.concat([pairs[~((pairs["topic_id"] == 2) & touches)], pd.DataFrame([island])], ignore_index=True)


def test_a_disconnected_topic_fails_the_blocking_check() -> None:
    pairs = synthetic_pairs(synthetic_texts())
    assert disconnected_topics(pairs) == [] and disconnected_topics(cut_topic_two(pairs)) == [2]
    result = checks.persuasion_pairs_connected(cut_topic_two(pairs))
    assert isinstance(result, dg.AssetCheckResult)
    assert not result.passed and result.metadata["disconnected_topics"].value == [2]


def test_the_failed_check_blocks_the_judgments(persuasion: StudyDefinition, tmp_path: Path) -> None:
    """With a cut corpus the check fails and no judge is asked: the root asset is not materialised."""

    @dg.asset(name="persuasion_pairs", group_name="persuasion")
    def cut_pairs(persuasion_texts: pd.DataFrame) -> pd.DataFrame:
        return cut_topic_two(synthetic_pairs(persuasion_texts))

    registry = tmp_path / "models.toml"
    registry.write_text(REGISTRY)
    with dg.instance_for_test() as instance:
        add_partitions(instance, ["longer"])
        result = dg.materialize(
            [assets.persuasion_texts, cut_pairs, checks.persuasion_pairs_connected, assets.persuasion_judgments],
            partition_key="longer",
            resources={
                "registry": ModelRegistryResource(path=str(registry)),
                "judge": JudgeResource(),
                "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
                "io_manager": duckdb_io_manager(str(tmp_path / "tables.duckdb")),
            },
            instance=instance,
            raise_on_error=False,
        )
    assert not result.success
    assert [e.passed for e in result.get_asset_check_evaluations()] == [False]
    materialised = {e.asset_key for e in result.get_asset_materialization_events()}
    assert materialised == {dg.AssetKey("persuasion_texts"), dg.AssetKey("persuasion_pairs")}
