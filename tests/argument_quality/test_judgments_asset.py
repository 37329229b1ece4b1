"""The aq_judgments partition asset and its checks, on the invented sample corpus (fast)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest

import asset_checks.argument_quality.judgments as checks
from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.engines.baselines import LongerWinsJudge, RandomJudge
from argassets.platform.judging.engines.random_engine import RandomEntry
from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, utc_now
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.storage.reader_file import copy_warehouse
from argassets.platform.study import ImportKeys
from argassets.studies import code_location_studies
from tests.model_partitions import add_partitions
from tests.sample_fixtures import UPSTREAM

#: The judging asset the platform builds from the study's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)

REGISTRY = """
[[models]]
name = "random"
backend = "random"
studies = ["argument_quality", "political"]
seed = 5

[[models]]
name = "longer-pb"
backend = "longer-wins"
studies = ["argument_quality"]
position_bias = true

[[models]]
name = "scoped"
backend = "random"
studies = ["argument_quality"]
sampling = { temperature = 0.7, seed = 99 }
scope = { topics = [2, 3], dimensions = ["logic", "dialectic"], strategies = ["zero", "cot"], max_comparisons = 4 }

[[models]]
name = "political-only"
backend = "random"
studies = ["political"]

[[models]]
name = "external"
backend = "import"
studies = ["argument_quality"]
path = "{import_path}"
format = "tidy"
scope = { dimensions = ["rhetoric"], strategies = ["few"] }
"""
PARTITIONS = ["random", "longer-pb", "scoped", "political-only", "external"]
CHECKS = [checks.aq_judgments_label_validity, checks.aq_judgments_complete]
SAMPLE_ITEMS = 105 * 3  # comparisons (all dimensions) x strategies


class FlakyJudge:
    """Delegates to the random baseline but dies on the n-th batch (a kill mid-run)."""

    backend = "random"

    def __init__(self, die_on_batch: int, calls: list):
        self.inner = RandomJudge(seed=5)
        self.die_on_batch = die_on_batch
        self.calls = calls

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        self.calls.append(len(requests))
        if len(self.calls) == self.die_on_batch:
            raise RuntimeError("worker killed")
        return self.inner.complete(requests, sampling, runs)

    def close(self) -> None:
        self.inner.close()


class GarbageJudge:
    """Answers prose on every third item: unparseable output."""

    backend = "random"

    def complete(self, requests, sampling, runs):
        now = utc_now()
        return [
            [Completion("Both arguments are good." if i % 3 == 0 else "A", r, None, 0.0, now, now) for r in runs]
            for i, _ in enumerate(requests)
        ]

    def close(self) -> None:
        """Nothing to free."""


class ScriptedJudgeResource(JudgeResource):
    """Builds a scripted judge instead of the registry's, to simulate failures."""

    mode: str = "registry"
    die_on_batch: int = 2

    def build(self, entry: ModelEntry, import_keys: Sequence[ImportKeys] = ()):
        if self.mode == "flaky":
            judge = FlakyJudge(self.die_on_batch, CALLS)
            return judge
        if self.mode == "garbage":
            return GarbageJudge()
        return super().build(entry, import_keys)


CALLS: list = []


@pytest.fixture()
def env(tmp_path: Path, upstream_db: Path, dagster_instance: dg.DagsterInstance):
    database = tmp_path / "argassets.duckdb"
    copy_warehouse(upstream_db, database)
    import_path = tmp_path / "external.csv"
    registry = tmp_path / "models.toml"
    registry.write_text(REGISTRY.replace("{import_path}", str(import_path)))
    add_partitions(dagster_instance, PARTITIONS)
    return {
        "database": database,
        "registry": registry,
        "cache": tmp_path / "cache.sqlite",
        "import_path": import_path,
        "instance": dagster_instance,
    }


def run(env, partition: str, judge: JudgeResource | None = None, check_config: dict | None = None, raise_on_error=True):
    CALLS.clear()
    resources = {
        "io_manager": duckdb_io_manager(str(env["database"])),
        "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
        "webis_source": WebisSourceResource(url=""),
        "registry": ModelRegistryResource(path=str(env["registry"]), studies=code_location_studies()),
        "judge": judge or JudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(env["cache"])),
    }
    config = None
    if check_config is not None:
        config = dg.RunConfig(ops={"aq_judgments_aq_judgments_label_validity": check_config})
    return dg.materialize(
        [AQ_JUDGMENTS, *UPSTREAM, *CHECKS],
        selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
        resources=resources,
        instance=env["instance"],
        partition_key=partition,
        raise_on_error=raise_on_error,
        run_config=config,
    )


def table(env, partition: str) -> pd.DataFrame:
    with duckdb.connect(str(env["database"]), read_only=True) as con:
        return con.execute("select * from aq_judgments where judge_model = ?", [partition]).df()


def metadata(result) -> dict:
    return {k: v.value for k, v in result.asset_materializations_for_node("aq_judgments")[0].metadata.items()}


def check_results(result) -> dict:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def test_random_partition_and_rematerialisation_sends_nothing(env):
    first = run(env, "random")
    rows = table(env, "random")
    assert len(rows) == SAMPLE_ITEMS * 3
    assert set(rows["judge_model"]) == {"random"}
    assert not rows.duplicated(["comparison_id", "strategy", "order", "run"]).any()
    assert set(rows["order"]) == {"ab"} and set(rows["run"]) == {0, 1, 2}
    assert set(rows["label"]) == {"A", "B", "Tie"} and rows["is_valid"].all()
    assert (rows["label"] == rows["presented_label"]).all()
    assert rows["is_baseline"].all() and set(rows["backend"]) == {"random"} and set(rows["scope"]) == {"full"}
    assert set(rows["temperature"]) == {1.0} and set(rows["seed"]) == {5}
    assert rows["requested_at"].notna().all() and rows["latency_s"].ge(0).all()
    assert metadata(first)["completions_sent"] == SAMPLE_ITEMS * 3
    results = check_results(first)
    assert results["aq_judgments_complete"].passed and results["aq_judgments_label_validity"].passed

    second = run(env, "random")
    assert metadata(second)["completions_sent"] == 0
    assert metadata(second)["completions_from_cache"] == SAMPLE_ITEMS * 3
    again = table(env, "random")
    assert len(again) == len(rows)  # the partition is replaced, not appended
    key = ["comparison_id", "strategy", "order", "run"]
    merged = rows.merge(again, on=key, suffixes=("", "_again"))
    assert (merged["raw_output"] == merged["raw_output_again"]).all()
    # prompt hashes are the aq_prompts hashes
    with duckdb.connect(str(env["database"]), read_only=True) as con:
        prompts_table = con.execute("select comparison_id, strategy, prompt_sha256 from aq_prompts").df()
    joined = rows.merge(prompts_table, on=["comparison_id", "strategy"], suffixes=("", "_prompt"))
    assert (joined["prompt_sha256"] == joined["prompt_sha256_prompt"]).all()


def test_position_bias_judges_both_orders_and_maps_labels_back(env):
    result = run(env, "longer-pb")
    rows = table(env, "longer-pb")
    assert len(rows) == SAMPLE_ITEMS * 3 * 2
    assert metadata(result)["orders"] == "ab, ba"
    key = ["comparison_id", "strategy", "run"]
    ab = rows[rows["order"] == "ab"].set_index(key).sort_index()
    ba = rows[rows["order"] == "ba"].set_index(key).sort_index()
    # longer-wins looks at the texts, so its verdict survives the swap: presented labels flip, labels agree
    assert (ab["label"] == ba["label"]).all()
    flipped = ab["presented_label"].map({"A": "B", "B": "A", "Tie": "Tie"})
    assert (flipped == ba["presented_label"]).all()
    assert (ab["prompt_sha256"] != ba["prompt_sha256"]).all()
    # and the verdict is right: compare word counts directly
    with duckdb.connect(str(env["database"]), read_only=True) as con:
        lengths = con.execute(
            """select c.comparison_id,
                      len(string_split(trim(regexp_replace(a.text, '\\s+', ' ', 'g')), ' ')) as words_a,
                      len(string_split(trim(regexp_replace(b.text, '\\s+', ' ', 'g')), ' ')) as words_b
               from webis_expert_comparisons c
               join webis_arguments a on a.topic_id = c.topic_id and a.discussion_id = c.discussion_id_a and a.argument_id = c.argument_id_a
               join webis_arguments b on b.topic_id = c.topic_id and b.discussion_id = c.discussion_id_b and b.argument_id = c.argument_id_b"""
        ).df()
    expected = lengths.set_index("comparison_id").apply(
        lambda r: "A" if r.words_a > r.words_b else "B" if r.words_b > r.words_a else "Tie", axis=1
    )
    labels = rows[rows["order"] == "ab"].groupby("comparison_id")["label"].first()
    assert (labels == expected.loc[labels.index]).all()
    assert check_results(result)["aq_judgments_complete"].passed


def test_scope_limits_what_is_judged(env):
    result = run(env, "scoped")
    rows = table(env, "scoped")
    assert set(rows["topic_id"]) <= {2, 3}
    assert set(rows["dimension"]) == {"logic", "dialectic"} and set(rows["strategy"]) == {"zero", "cot"}
    per_dimension = rows.groupby("dimension")["comparison_id"].nunique().to_dict()
    assert per_dimension == {"logic": 4, "dialectic": 4}
    # the first four in-scope comparisons by id
    with duckdb.connect(str(env["database"]), read_only=True) as con:
        first_logic = [
            r[0]
            for r in con.execute(
                "select comparison_id from webis_expert_comparisons where dimension = 'logic' and topic_id in (2, 3) order by comparison_id limit 4"
            ).fetchall()
        ]
    assert sorted(rows.loc[rows["dimension"] == "logic", "comparison_id"].unique()) == first_logic
    assert len(rows) == 8 * 2 * 3
    expected_scope = "topics=2,3; dimensions=logic,dialectic; strategies=zero,cot; max_comparisons=4"
    assert set(rows["scope"]) == {expected_scope} and metadata(result)["scope"] == expected_scope
    assert set(rows["temperature"]) == {0.7}
    assert set(rows["sampling_key"]) == {SamplingParams(0.7, 1.0, 99, 16).key()}
    assert set(rows["seed"]) == {0}  # the random baseline draws from its entry's seed
    complete = check_results(result)["aq_judgments_complete"]
    assert complete.passed and complete.metadata["expected"].value == 48


def test_interrupted_run_resumes_without_loss_or_duplicates(env, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(RandomEntry, "engine_batch_size", lambda self: 100)  # 315 requests -> 4 batches
    failed = run(env, "random", judge=ScriptedJudgeResource(mode="flaky", die_on_batch=3), raise_on_error=False)
    assert not failed.success
    assert CALLS == [100, 100, 100]
    with pytest.raises(duckdb.CatalogException):
        table(env, "random")  # nothing half-written to the table
    resumed = run(env, "random", judge=ScriptedJudgeResource(mode="flaky", die_on_batch=999))
    # two whole batches (200 requests x 3 runs) survived; only the rest was sent
    assert CALLS == [100, 15]
    info = metadata(resumed)
    assert info["completions_from_cache"] == 600 and info["completions_sent"] == SAMPLE_ITEMS * 3 - 600
    rows = table(env, "random")
    assert len(rows) == SAMPLE_ITEMS * 3
    assert not rows.duplicated(["comparison_id", "strategy", "order", "run"]).any()
    assert check_results(resumed)["aq_judgments_complete"].passed
    # same answers as an uninterrupted run of the same seeded judge
    fresh = run(env, "random")
    assert metadata(fresh)["completions_sent"] == 0


def test_unparseable_output_is_kept_and_counted(env):
    result = run(env, "scoped", judge=ScriptedJudgeResource(mode="garbage"), raise_on_error=False)
    assert result.success  # the run itself never crashes on bad output
    rows = table(env, "scoped")
    invalid = rows[~rows["is_valid"]]
    assert len(invalid) > 0 and (invalid["raw_output"] == "Both arguments are good.").all()
    assert invalid["label"].isna().all() and invalid["presented_label"].isna().all()
    assert metadata(result)["invalid"] == len(invalid)
    validity = check_results(result)["aq_judgments_label_validity"]
    assert not validity.passed
    assert validity.metadata["invalid"].value == len(invalid)
    assert validity.metadata["max_invalid_share"].value == 0.01
    # a looser bound, configured on the check, passes
    relaxed = run(
        env, "scoped", judge=ScriptedJudgeResource(mode="garbage"), check_config={"config": {"max_invalid_share": 0.5}}
    )
    assert check_results(relaxed)["aq_judgments_label_validity"].passed


def test_political_only_model_is_not_materialised(env):
    run(env, "random")
    result = run(env, "political-only")
    assert result.success
    assert result.asset_materializations_for_node("aq_judgments") == []
    assert check_results(result) == {}  # the checks are skipped with it
    assert len(table(env, "political-only")) == 0
    assert len(table(env, "random")) == SAMPLE_ITEMS * 3


def test_import_backend(env):
    with duckdb.connect(str(env["database"]), read_only=True) as con:
        wanted = con.execute(
            "select comparison_id, dimension from webis_expert_comparisons where dimension = 'rhetoric'"
        ).df()
    rows = [
        {
            "judge_model": "external",
            "comparison_id": c,
            "dimension": "rhetoric",
            "strategy": "few",
            "run": r,
            "raw_output": ["A", "B", "Tie"][(i + r) % 3],
        }
        for i, c in enumerate(wanted["comparison_id"])
        for r in range(3)
    ]
    pd.DataFrame(rows).to_csv(env["import_path"], index=False)
    result = run(env, "external")
    got = table(env, "external")
    assert len(got) == len(rows) and got["is_valid"].all()
    assert set(got["backend"]) == {"import"} and not got["is_baseline"].any()
    assert metadata(result)["cache"] == "none (import)"
    # an incomplete file is a clear error naming what is missing
    pd.DataFrame(rows[3:]).to_csv(env["import_path"], index=False)
    failed = run(env, "external", raise_on_error=False)
    assert not failed.success
    error = [e for e in failed.all_events if e.event_type_value == "STEP_FAILURE"][0].step_failure_data.error
    text = error.message + "".join(c.message for c in [error.cause] if c)
    assert "3 judgment(s) missing" in text and "rhetoric-" in text


def test_longer_wins_on_the_real_order():
    judge = LongerWinsJudge()
    request = ChatRequest("x", "s", "u", context={"text_a": "a b c", "text_b": "a b"})
    assert judge.complete([request], SamplingParams(1.0), [0])[0][0].text == "A"
