"""The proof: a third pairwise study declared in tests/ only, judged and reported through Dagster and the CLI.

The persuasion study (``tests/platform/third_study``) imports the platform and nothing of the other
studies, and joins a code location by one line: ``ARGASSETS_EXTRA_STUDIES=tests.platform.third_study.study``.
The platform builds its judging asset from its declaration (with the provenance columns and the
non-answer failure every study gets). It is materialised end to end with baseline judges: its
judgments (one partition per judge model), majority votes, Bradley-Terry scores, the agreement
report and the blocking connectivity check; the assertions read the tables against the corpus's
known answers. ``argassets materialize | estimate | slurm backfill --dry-run --study persuasion``
run it from a terminal.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from argassets.cli import build_parser
from argassets.platform.judging.interface import PROVENANCE_COLUMNS
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.operations.automation import study_roots
from argassets.platform.operations.run_tags import MODEL_TAG, STUDY_TAG
from argassets.platform.registry.entries import load_registry
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.study import Studies
from argassets.studies import BUILT_IN, EXTRA_STUDIES_ENV_VAR, code_location_studies, parse_registry
from tests.cli_home import ROOT, cli_environment
from tests.instances import new_instance
from tests.model_partitions import add_partitions
from tests.platform.third_study import assets, checks
from tests.platform.third_study.corpus import EXPERTS_PREFER_LONGER, TOPICS, synthetic_pairs, synthetic_texts
from tests.platform.third_study.science import N_RUNS, PersuasionScope, disconnected_topics
from tests.platform.third_study.study import STUDY

#: The one line that adds the study to a code location.
STUDY_MODULE = "tests.platform.third_study.study"
STUDIES = Studies((*BUILT_IN, STUDY))
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
PAIRS = len(synthetic_pairs(synthetic_texts()))


def resources(folder: Path) -> dict[str, object]:
    """The resources the study's assets read, all in ``folder`` (the registry with its studies)."""
    registry = folder / "models.toml"
    registry.write_text(REGISTRY)
    return {
        "registry": ModelRegistryResource(path=str(registry), studies=STUDIES),
        "judge": JudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(folder / "cache.sqlite")),
        "io_manager": duckdb_io_manager(str(folder / "tables.duckdb")),
    }


@pytest.fixture(scope="module")
def materialised(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """Every table of the study, materialised once through Dagster with the baseline judges."""
    folder = tmp_path_factory.mktemp("persuasion")
    loaded = [
        judging_asset(STUDY),
        *dg.load_assets_from_modules(list(STUDY.asset_modules())),
        *dg.load_asset_checks_from_modules(list(STUDY.check_modules())),
    ]
    with new_instance() as instance:
        used = resources(folder)
        add_partitions(
            instance, [e.name for e in load_registry(folder / "models.toml", studies=STUDIES).models], STUDIES
        )

        def run(selection: list[str], partition_key: str | None = None) -> dg.ExecuteInProcessResult:
            return dg.materialize(
                loaded, selection=selection, partition_key=partition_key, resources=used, instance=instance
            )

        corpus = run(CORPUS)
        assert [e.passed for e in corpus.get_asset_check_evaluations()] == [True]
        judged = {name: run([STUDY.root_asset], partition_key=name) for name in JUDGES}
        assert [m.partition for m in judged["elsewhere"].get_asset_materialization_events()] == []
        downstream = run(DOWNSTREAM)
        tables = {name: downstream.output_for_node(name) for name in DOWNSTREAM}
        again = run([STUDY.root_asset], partition_key="longer")  # everything from the cache
        tables["stale_after_cached_rerun"] = stale_statuses(
            instance, dg.Definitions(loaded, resources=used), DOWNSTREAM
        )
        report = downstream.asset_materializations_for_node("persuasion_agreement_report")[0]
        tables["report_markdown"] = pd.DataFrame({"markdown": [report.metadata["agreement"].value]})
        longer = judged["longer"].asset_materializations_for_node(STUDY.root_asset)[0].metadata
        versions = [
            result.asset_materializations_for_node(STUDY.root_asset)[0].tags["dagster/data_version"]
            for result in (judged["longer"], again, judged["random"])
        ]
        tables["data_versions"] = pd.DataFrame({"run": ["longer", "longer again", "random"], "version": versions})
        tables["longer_metadata"] = pd.DataFrame({key: [value.value] for key, value in longer.items()})
    tables["judgments"] = pd.concat(
        [judged[name].output_for_node(STUDY.root_asset) for name in ("longer", "random")], ignore_index=True
    )
    return tables


def stale_statuses(instance: dg.DagsterInstance, definitions: dg.Definitions, names: list[str]) -> pd.DataFrame:
    """What the UI's "Unsynced" flag reads: each asset's stale status (Dagster's own resolver)."""
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._core.loader import LoadingContextForTest

    graph = definitions.resolve_asset_graph()
    resolver = CachingStaleStatusResolver(instance, graph, LoadingContextForTest(instance))
    return pd.DataFrame({"asset": names, "status": [resolver.get_status(dg.AssetKey(n)).value for n in names]})


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
    imported = set().union(*(imported_modules(path) for path in package.glob("*.py") if path != Path(__file__)))
    others = sorted(n for n in imported if n.startswith(("argassets.argument_quality", "argassets.political")))
    assert others == []
    assert {"argassets.platform.study", "argassets.platform.pairwise.scores"} <= imported
    # its judging is the platform's: the study never calls the judges itself
    assert "argassets.platform.judging.partition" not in imported


def test_the_study_joins_the_code_location_by_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "persuasion" not in code_location_studies().names
    monkeypatch.setenv(EXTRA_STUDIES_ENV_VAR, STUDY_MODULE)
    studies = code_location_studies()
    assert studies.names == ("argument_quality", "political", "persuasion") and studies.get("persuasion") is STUDY
    assert study_roots(studies)["persuasion"] == "persuasion_judgments"
    registry = parse_registry(tomllib.loads(REGISTRY))
    assert PersuasionScope.of(registry.get("random")).topics == [1, 2]
    assert registry.get("longer").scope_text("persuasion") == "full"
    parser = build_parser()
    assert parser.parse_args(["estimate", "longer", "--study", "persuasion"]).study == "persuasion"
    assert parser.parse_args(["slurm", "backfill", "--dry-run", "--study", "persuasion", "--all"]).dry_run
    monkeypatch.setenv(EXTRA_STUDIES_ENV_VAR, "tests.platform.third_study.corpus")
    with pytest.raises(ValueError, match="module 'tests.platform.third_study.corpus' has no STUDY"):
        code_location_studies()


def test_the_code_location_assembled_with_the_study_runs_its_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """definitions.py's assembly with the study added: its job judges a partition, tagged."""
    from argassets.definitions import build_definitions

    monkeypatch.setenv(EXTRA_STUDIES_ENV_VAR, STUDY_MODULE)
    used = resources(tmp_path)
    monkeypatch.setenv("ARGASSETS_MODELS", used["registry"].path)  # type: ignore[attr-defined]
    monkeypatch.setenv("ARGASSETS_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(tmp_path / "tables.duckdb"))
    defs = build_definitions(code_location_studies())
    job = defs.resolve_job_def("persuasion_judgments_job")
    assert [key.to_user_string() for key in job.asset_layer.selected_asset_keys] == ["persuasion_judgments"]
    with new_instance() as instance:
        add_partitions(instance, ["longer"], STUDIES)
        corpus = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            asset_selection=[dg.AssetKey(name) for name in CORPUS], instance=instance
        )
        assert corpus.success
        result = job.execute_in_process(partition_key="longer", instance=instance)
        judged = result.output_for_node("persuasion_judgments")
        tags = instance.get_run_by_id(result.run_id).tags  # type: ignore[union-attr]
    assert len(judged) == PAIRS * N_RUNS and judged["is_valid"].all()
    assert tags[STUDY_TAG] == "persuasion" and tags[MODEL_TAG] == "longer"


def test_the_cli_judges_reports_estimates_and_plans_slurm_jobs(tmp_path: Path) -> None:
    """``argassets materialize --with-reports``, ``estimate`` and ``slurm backfill --dry-run`` with
    ``--study persuasion``: one interpreter calls the console script's ``main`` for each command."""
    env = cli_environment(tmp_path, REGISTRY, **{EXTRA_STUDIES_ENV_VAR: STUDY_MODULE})
    commands = [
        ["materialize", "longer", "--study", "persuasion", "--with-reports"],
        ["estimate", "longer", "--study", "persuasion"],
        ["slurm", "backfill", "--dry-run", "--study", "persuasion", "--partitions", "longer,random"],
    ]
    script = "import sys\nfrom argassets.cli import main\n" + "".join(
        f"print('=== {i}', flush=True)\nassert main({command!r}) == 0\n" for i, command in enumerate(commands)
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    materialize, estimate, slurm = done.stdout.split("=== ")[1:]
    assert "running persuasion / longer: persuasion_judgments" in materialize
    assert "persuasion_agreement_report" in materialize and "FAILED" not in materialize
    completions = PAIRS * N_RUNS
    assert (
        f"longer / persuasion: {PAIRS} requests x {N_RUNS} runs = {completions} completions, {completions} in the cache, 0 to send"
        in estimate
    )
    # the dry run estimates the judged partition and submits nothing; random needs no inputs either
    assert "would submit persuasion / longer: sbatch --job-name=argassets-longer" in slurm
    assert "would submit persuasion / random: sbatch --job-name=argassets-random" in slurm
    assert "random / persuasion: 20 requests" in slurm  # its scope: topics 1 and 2
    assert "submitted" not in slurm.replace("would submit", "")


def test_every_judged_row_carries_the_provenance_the_platform_adds(materialised: dict[str, pd.DataFrame]) -> None:
    judgments = materialised["judgments"]
    assert list(judgments.columns[-len(PROVENANCE_COLUMNS) :]) == list(PROVENANCE_COLUMNS)
    assert set(judgments.groupby("judge_model")["backend"].first()) == {"longer-wins", "random"}
    assert judgments["is_baseline"].all() and judgments["prompt_sha256"].str.len().eq(64).all()
    scopes = judgments.groupby("judge_model")["scope"].first().to_dict()
    assert scopes == {"longer": "full", "random": "topics=1,2"}
    metadata = materialised["longer_metadata"].iloc[0]
    assert metadata["completions_sent"] == PAIRS * N_RUNS and metadata["non_answers"] == 0


def test_longer_wins_judges_every_pair_by_length(materialised: dict[str, pd.DataFrame]) -> None:
    judgments = materialised["judgments"]
    texts = synthetic_texts().set_index("text_id")["words"]
    longer = judgments[judgments["judge_model"] == "longer"]
    assert len(longer) == PAIRS * N_RUNS and longer["is_valid"].all()
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


def test_the_failed_check_blocks_the_judgments(tmp_path: Path) -> None:
    """With a cut corpus the check fails and no judge is asked: the root asset is not materialised."""

    @dg.asset(name="persuasion_pairs", group_name="persuasion")
    def cut_pairs(persuasion_texts: pd.DataFrame) -> pd.DataFrame:
        return cut_topic_two(synthetic_pairs(persuasion_texts))

    with new_instance() as instance:
        add_partitions(instance, ["longer"], STUDIES)
        result = dg.materialize(
            [assets.persuasion_texts, cut_pairs, checks.persuasion_pairs_connected, judging_asset(STUDY)],
            partition_key="longer",
            resources=resources(tmp_path),
            instance=instance,
            raise_on_error=False,
        )
    assert not result.success
    assert [e.passed for e in result.get_asset_check_evaluations()] == [False]
    materialised = {e.asset_key for e in result.get_asset_materialization_events()}
    assert materialised == {dg.AssetKey("persuasion_texts"), dg.AssetKey("persuasion_pairs")}


def test_a_re_run_from_the_cache_keeps_the_partitions_data_version(materialised: dict[str, pd.DataFrame]) -> None:
    """Same rows, same version: nothing downstream is marked unsynced by a re-run that changed nothing."""
    first, again, other = materialised["data_versions"]["version"]
    assert first == again and first != other
    assert set(materialised["stale_after_cached_rerun"]["status"]) == {"FRESH"}
