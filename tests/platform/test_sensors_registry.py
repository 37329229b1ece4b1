"""The registry sensor on an ephemeral instance: registry edits become partitions, runs and reports.

The assets here are small stand-ins with the real keys and partitioning (``aq_judgments`` and
``political_predictions`` partitioned by ``judge_models``, reports over all partitions), so the
sensor's decisions are tested apart from the judging itself; ``test_sensors_real_assets.py``
runs the same flow on the real assets.
"""

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest
from dagster._core.storage.dagster_run import DagsterRunStatus

from argassets.platform.operations.automation import with_automation
from argassets.platform.operations.machine import Machine
from argassets.platform.operations.preflight_events import PREFLIGHT_KEY, RUNNABLE_KEY
from argassets.platform.operations.run_tags import GPUS_TAG, K8S_CONFIG_TAG, POOL_TAG
from argassets.platform.registry.partitions import (
    JUDGE_MODELS,
    PARTITION_METADATA,
    judge_models_partitions,
    study_partitions,
)
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.studies import code_location_studies
from sensors import registry_sensor
from sensors.registry_sensor import model_registry_sensor
from sensors.schedules import nightly_refresh_schedule

K = dg.AssetKey


@dg.asset(group_name="corpora", kinds={"pandas"})
def stub_corpus() -> pd.DataFrame:
    """Stand-in corpus of three items."""
    return pd.DataFrame({"item": [1, 2, 3]})


@dg.asset(
    group_name="judgments",
    partitions_def=study_partitions("argument_quality"),
    metadata=PARTITION_METADATA,
    kinds={"pandas", "duckdb"},
)
def aq_judgments(context: dg.AssetExecutionContext, stub_corpus: pd.DataFrame) -> pd.DataFrame:
    """Stand-in judgments: one row per item for the partition's model."""
    return pd.DataFrame({"judge_model": context.partition_key, "item": stub_corpus["item"]})


@dg.asset(
    group_name="aggregation",
    partitions_def=study_partitions("argument_quality"),
    metadata=PARTITION_METADATA,
    kinds={"pandas", "duckdb"},
)
def aq_majority_votes(aq_judgments: pd.DataFrame) -> pd.DataFrame:
    """Stand-in per-model aggregate."""
    return aq_judgments.assign(vote="A")


@dg.asset(group_name="reports", kinds={"pandas"})
def aq_agreement_report(aq_majority_votes: pd.DataFrame) -> pd.DataFrame:
    """Stand-in report: rows per model over every partition (the IO manager reads them all)."""
    return aq_majority_votes.groupby("judge_model").size().rename("n").reset_index()


@dg.asset(group_name="knowledge_base", kinds={"pandas"})
def stub_kb() -> pd.DataFrame:
    """Stand-in knowledge base of two arguments."""
    return pd.DataFrame({"argument_id": ["a", "b"]})


@dg.asset(
    group_name="judgments",
    partitions_def=study_partitions("political"),
    metadata=PARTITION_METADATA,
    kinds={"pandas", "duckdb"},
)
def political_predictions(context: dg.AssetExecutionContext, stub_kb: pd.DataFrame) -> pd.DataFrame:
    """Stand-in predictions."""
    return stub_kb.assign(judge_model=context.partition_key)


@dg.asset(group_name="reports", kinds={"pandas"})
def political_model_stats(political_predictions: pd.DataFrame) -> pd.DataFrame:
    """Stand-in statistics over every partition."""
    return political_predictions.groupby("judge_model").size().rename("n").reset_index()


STUB_ASSETS = [
    stub_corpus,
    aq_judgments,
    aq_majority_votes,
    aq_agreement_report,
    stub_kb,
    political_predictions,
    political_model_stats,
]

BASELINES = """
[[models]]
name = "longer-wins"
backend = "longer-wins"
studies = ["argument_quality"]

[[models]]
name = "random"
backend = "random"
studies = ["argument_quality", "political"]
seed = 1
"""

IMPORTED = """
[[models]]
name = "gpt-4o-import"
backend = "import"
studies = ["political"]
path = "predictions/gpt-4o.tsv"
format = "published_tsv"
"""

GPU_MODEL = """
[[models]]
name = "llama-3.3-70b-instruct"
backend = "vllm"
studies = ["argument_quality"]
model_id = "meta-llama/Llama-3.3-70B-Instruct"
gpus = 4
"""


#: A GPU machine as the pre-flight sees it (its model cache is not checked).
GPU_MACHINE = Machine(
    name="a GPU node", kind="local", gpus=4, modules=frozenset({"vllm"}), vllm_build="cuda", hf_cache=None
)
CPU_MACHINE = Machine(
    name="this machine", kind="local", gpus=0, modules=frozenset({"vllm"}), vllm_build="cpu", hf_cache=None
)


@dataclass
class Harness:
    """An ephemeral instance, the stand-in assets with automation, and a registry file."""

    instance: dg.DagsterInstance
    registry: Path
    database: Path
    defs: dg.Definitions = field(init=False)
    cursor: str | None = None
    automation_cursor: object = None

    def __post_init__(self) -> None:
        self.defs = dg.Definitions(
            assets=with_automation(STUB_ASSETS, code_location_studies()),
            sensors=[model_registry_sensor],
            schedules=[nightly_refresh_schedule],
            resources={"io_manager": duckdb_io_manager(str(self.database))},
        )
        self.job = self.defs.resolve_implicit_global_asset_job_def()

    def write(self, text: str) -> None:
        self.registry.write_text(text, encoding="utf-8")

    def tick(self) -> dg.SensorResult | dg.SkipReason:
        """Evaluate the sensor once; like the daemon, keep its cursor and apply partition requests."""
        context = dg.build_sensor_context(instance=self.instance, cursor=self.cursor, definitions=self.defs)
        result = model_registry_sensor(context)
        if isinstance(result, dg.SensorResult):
            self.cursor = result.cursor
            for request in result.dynamic_partitions_requests or []:
                assert isinstance(request, dg.AddDynamicPartitionsRequest), "the sensor never deletes"
                self.instance.add_dynamic_partitions(request.partitions_def_name, request.partition_keys)
            for event in result.asset_events:
                self.instance.report_runless_asset_event(event)
        return result

    def execute(self, request: dg.RunRequest) -> dg.ExecuteInProcessResult:
        result = self.job.execute_in_process(
            instance=self.instance,
            asset_selection=list(request.asset_selection),
            partition_key=request.partition_key,
            tags=dict(request.tags),
        )
        assert result.success
        return result

    def automation(self):
        result = dg.evaluate_automation_conditions(
            defs=self.defs, instance=self.instance, cursor=self.automation_cursor
        )
        self.automation_cursor = result.cursor
        return result

    def run_automation(self, result) -> None:
        """Execute what automation requested: per-partition work first, then reports."""
        partitioned = [K("aq_majority_votes")]
        for key in partitioned:
            for partition in sorted(result.get_requested_partitions(key)):
                self.job.execute_in_process(instance=self.instance, asset_selection=[key], partition_key=partition)
        reports = [
            key
            for key in (K("aq_agreement_report"), K("political_model_stats"))
            if result.get_requested_partitions(key)
        ]
        if reports:
            assert self.job.execute_in_process(instance=self.instance, asset_selection=reports).success

    def stored(self, key: str) -> pd.DataFrame:
        """A table as stored in the DuckDB file."""
        with duckdb.connect(str(self.database), read_only=True) as connection:
            return connection.execute(f"SELECT * FROM main.{key}").df()

    def partitions(self) -> list[str]:
        return list(self.instance.get_dynamic_partitions(JUDGE_MODELS))


def _isolate(monkeypatch: pytest.MonkeyPatch, registry: Path) -> None:
    monkeypatch.setenv("ARGASSETS_MODELS", str(registry))
    # The import entries' file exists (the pre-flight refuses an import whose file is missing);
    # the stub study never reads it.
    data = registry.parent / "data"
    (data / "predictions").mkdir(parents=True, exist_ok=True)
    (data / "predictions" / "gpt-4o.tsv").touch()
    monkeypatch.setenv("ARGASSETS_DATA_DIR", str(data))
    monkeypatch.delenv("ARGASSETS_RUN_BACKENDS", raising=False)
    monkeypatch.delenv("ARGASSETS_K8S_GPU_NODE_SELECTOR", raising=False)


@pytest.fixture()
def harness(dagster_instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    registry = tmp_path / "models.toml"
    _isolate(monkeypatch, registry)
    return Harness(instance=dagster_instance, registry=registry, database=tmp_path / "argassets.duckdb")


@dataclass(frozen=True)
class Bootstrapped:
    """An instance after :func:`_bootstrap`, kept as files (``home/``, the DuckDB file, the registry)
    with the cursors of its last ticks; each test continues on its own copy."""

    folder: Path
    cursor: str | None
    automation_cursor: object

    @classmethod
    def build(cls, folder: Path, empty_instance: Path, reports: bool) -> "Bootstrapped":
        shutil.copytree(empty_instance, folder / "home")
        with pytest.MonkeyPatch.context() as monkeypatch:
            _isolate(monkeypatch, folder / "models.toml")
            with dg.instance_for_test(temp_dir=str(folder / "home")) as instance:
                h = Harness(instance=instance, registry=folder / "models.toml", database=folder / "argassets.duckdb")
                _bootstrap(h, reports=reports)
        return cls(folder, h.cursor, h.automation_cursor)

    def copy(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
        folder = shutil.copytree(self.folder, tmp_path / "bootstrapped")
        _isolate(monkeypatch, folder / "models.toml")
        with dg.instance_for_test(temp_dir=str(folder / "home")) as instance:
            yield Harness(
                instance=instance,
                registry=folder / "models.toml",
                database=folder / "argassets.duckdb",
                cursor=self.cursor,
                automation_cursor=self.automation_cursor,
            )


def _selection(request: dg.RunRequest) -> list[str]:
    return [key.to_user_string() for key in request.asset_selection]


def _bootstrap(h: Harness, reports: bool = True) -> None:
    """First ticks on an empty instance: partitions, the study inputs, the partition runs, reports."""
    h.write(BASELINES)
    h.automation()
    first = h.tick()
    assert isinstance(first, dg.SensorResult)
    for request in first.run_requests:
        h.execute(request)
    second = h.tick()
    assert isinstance(second, dg.SensorResult)
    for request in second.run_requests:
        h.execute(request)
    if reports:
        h.run_automation(h.automation())


def test_first_tick_adds_every_partition_and_requests_study_inputs_before_partition_runs(
    harness: Harness,
) -> None:
    h = harness
    h.write(BASELINES)
    first = h.tick()
    assert isinstance(first, dg.SensorResult)
    # Every entry in judge_models, and in the partitions of each study it takes part in only.
    assert {r.partitions_def_name: list(r.partition_keys) for r in first.dynamic_partitions_requests} == {
        "judge_models": ["longer-wins", "random"],
        "models_argument_quality": ["longer-wins", "random"],
        "models_political": ["random"],
    }
    assert h.partitions() == ["longer-wins", "random"]
    assert h.instance.get_dynamic_partitions("models_political") == ["random"]
    # Empty instance: the unpartitioned inputs of both studies come first, in one run.
    assert len(first.run_requests) == 1
    assert first.run_requests[0].partition_key is None
    assert sorted(_selection(first.run_requests[0])) == ["stub_corpus", "stub_kb"]
    cursor = json.loads(first.cursor)
    assert [p[:2] for p in cursor["pending"]] == [
        ["longer-wins", "argument_quality"],
        ["random", "argument_quality"],
        ["random", "political"],
    ]
    # While the inputs are missing, the pending runs wait and the inputs are not asked for twice.
    waiting = h.tick()
    assert waiting.run_requests[0].run_key == first.run_requests[0].run_key
    assert len(waiting.run_requests) == 1
    # Once the daemon has queued that run, the inputs are in progress: nothing is requested.
    inputs = first.run_requests[0]
    queued = h.instance.create_run_for_job(
        h.job.get_subset(asset_selection=set(inputs.asset_selection)),
        asset_selection=frozenset(inputs.asset_selection),
    )
    in_progress = h.tick()
    assert not in_progress.run_requests
    assert "runs waiting for their study inputs" in in_progress.skip_reason.skip_message
    h.instance.report_run_canceled(h.instance.get_run_by_id(queued.run_id))

    h.execute(first.run_requests[0])
    second = h.tick()
    assert isinstance(second, dg.SensorResult)
    assert not second.dynamic_partitions_requests
    requested = [(r.partition_key, _selection(r)) for r in second.run_requests]
    assert requested == [
        ("longer-wins", ["aq_judgments", "aq_majority_votes"]),
        ("random", ["aq_judgments", "aq_majority_votes"]),
        ("random", ["political_predictions"]),
    ]
    assert all(r.tags[GPUS_TAG] == "0" and POOL_TAG not in r.tags for r in second.run_requests)
    assert json.loads(second.cursor)["pending"] == []
    # Nothing changed since: the next tick asks for nothing.
    third = h.tick()
    assert isinstance(third, dg.SensorResult) and not third.run_requests
    assert "added: none; changed: none; removed: none" in third.skip_reason.skip_message


def test_new_entry_is_judged_and_every_report_refreshes_once(reported: Harness) -> None:
    h = reported
    assert sorted(h.stored("aq_agreement_report")["judge_model"]) == ["longer-wins", "random"]
    assert sorted(h.stored("political_model_stats")["judge_model"]) == ["random"]

    # A researcher registers an imported judge that takes part in the political study.
    h.write(BASELINES + IMPORTED)
    result = h.tick()
    assert isinstance(result, dg.SensorResult)
    assert {r.partitions_def_name: list(r.partition_keys) for r in result.dynamic_partitions_requests} == {
        "judge_models": ["gpt-4o-import"],
        "models_political": ["gpt-4o-import"],
    }
    assert "gpt-4o-import" in h.partitions()
    assert [(r.partition_key, _selection(r)) for r in result.run_requests] == [
        ("gpt-4o-import", ["political_predictions"])
    ]
    request = result.run_requests[0]
    assert request.tags["argassets/model"] == "gpt-4o-import"
    assert request.tags["argassets/backend"] == "import"

    # While its run is not finished, the political report waits.
    sub_job = h.job.get_subset(asset_selection=set(request.asset_selection))
    pending_run = h.instance.create_run_for_job(
        sub_job,
        tags={**request.tags, "dagster/partition": request.partition_key},
        asset_selection=frozenset(request.asset_selection),
    )
    waiting = h.automation()
    assert not waiting.get_requested_partitions(K("political_model_stats"))
    h.instance.report_run_canceled(h.instance.get_run_by_id(pending_run.run_id))

    h.execute(request)
    refreshed = h.automation()
    assert refreshed.get_requested_partitions(K("political_model_stats")) == {None}
    # The argument-quality report does not depend on the new partition: left alone.
    assert not refreshed.get_requested_partitions(K("aq_agreement_report"))
    h.run_automation(refreshed)
    stats = h.stored("political_model_stats")
    assert sorted(stats["judge_model"]) == ["gpt-4o-import", "random"]
    assert stats.set_index("judge_model").loc["gpt-4o-import", "n"] == 2
    # And once is enough: the next evaluation requests nothing.
    assert h.automation().total_requested == 0


def test_several_new_partitions_refresh_the_report_once_after_the_last(reported: Harness) -> None:
    h = reported
    h.write(
        BASELINES
        + IMPORTED.replace("gpt-4o-import", "a-import").replace('["political"]', '["argument_quality"]')
        + IMPORTED.replace("gpt-4o-import", "b-import").replace('["political"]', '["argument_quality"]')
    )
    result = h.tick()
    requests = result.run_requests
    assert [r.partition_key for r in requests] == ["a-import", "b-import"]
    h.execute(requests[0])
    second = requests[1]
    run = h.instance.create_run_for_job(
        h.job.get_subset(asset_selection=set(second.asset_selection)),
        tags={**second.tags, "dagster/partition": second.partition_key},
        asset_selection=frozenset(second.asset_selection),
    )
    assert h.instance.get_run_by_id(run.run_id).status == DagsterRunStatus.NOT_STARTED
    early = h.automation()
    assert not early.get_requested_partitions(K("aq_agreement_report")), "refreshed once per partition"
    h.instance.report_run_canceled(h.instance.get_run_by_id(run.run_id))
    h.execute(second)
    late = h.automation()
    assert late.get_requested_partitions(K("aq_agreement_report")) == {None}
    h.run_automation(late)
    assert sorted(h.stored("aq_agreement_report")["judge_model"]) == [
        "a-import",
        "b-import",
        "longer-wins",
        "random",
    ]


def test_removed_entry_keeps_its_partition_and_is_reported(judged: Harness) -> None:
    h = judged
    h.write(BASELINES.split('[[models]]\nname = "random"')[0])  # only longer-wins is left
    result = h.tick()
    assert isinstance(result, dg.SensorResult)
    assert not result.run_requests
    assert not result.dynamic_partitions_requests
    message = result.skip_reason.skip_message
    assert "removed from the registry: random" in message
    assert "stored judgments are kept" in message
    assert h.partitions() == ["longer-wins", "random"]
    assert "random" in h.instance.get_materialized_partitions(K("aq_judgments"))
    observation = h.instance.fetch_observations(
        dg.AssetRecordsFilter(asset_key=K("aq_judgments"), asset_partitions=["random"]), limit=1
    ).records[0]
    assert "removed" in observation.asset_observation.metadata["registry_status"].value
    # The cursor now remembers random as retired; adding it back unchanged requests nothing.
    assert "random" in json.loads(result.cursor)["state"]["retired"]
    h.write(BASELINES)
    back = h.tick()
    assert not back.run_requests
    assert "already materialised" in back.skip_reason.skip_message


def test_partition_keys_added_by_hand_are_reported_and_never_run(judged: Harness) -> None:
    h = judged
    h.instance.add_dynamic_partitions(judge_models_partitions.name, ["it's mine", "Bad Name"])
    result = h.tick()
    assert isinstance(result, dg.SensorResult)
    assert not result.run_requests and not result.dynamic_partitions_requests
    message = result.skip_reason.skip_message
    assert "invalid partition keys (not model names; added by hand?), never run: \"it's mine\", 'Bad Name'" in message
    assert "removed from the registry" not in message
    assert "it's mine" not in json.loads(result.cursor)["state"].get("retired", {})
    # The UI adds a partition to the asset's own definition: reported the same way.
    h.instance.add_dynamic_partitions("models_political", ["typo key"])
    again = h.tick()
    assert not again.run_requests and "'typo key'" in again.skip_reason.skip_message


def test_invalid_registry_edit_skips_naming_entry_and_field_and_keeps_last_valid_state(judged: Harness) -> None:
    h = judged
    valid_cursor = h.cursor
    h.write(BASELINES + IMPORTED.replace('backend = "import"', 'backend = "import"\ntemprature = 0.7'))
    skipped = h.tick()
    assert isinstance(skipped, dg.SkipReason)
    assert "entry #3 ('gpt-4o-import')" in skipped.skip_message
    assert "temprature" in skipped.skip_message
    assert "keeping the last valid state" in skipped.skip_message
    assert h.cursor == valid_cursor
    assert "gpt-4o-import" not in h.partitions()

    h.write(BASELINES + IMPORTED)  # fixed
    fixed = h.tick()
    assert [r.partition_key for r in fixed.run_requests] == ["gpt-4o-import"]


def test_changed_entry_is_requested_again_but_a_description_edit_is_not(judged: Harness) -> None:
    h = judged
    h.write(BASELINES.replace("seed = 1", 'seed = 1\ndescription = "now documented"'))
    cosmetic = h.tick()
    assert not cosmetic.run_requests
    h.write(BASELINES.replace("seed = 1", "seed = 2"))
    changed = h.tick()
    assert [(r.partition_key, r.tags["argassets/study"]) for r in changed.run_requests] == [
        ("random", "argument_quality"),
        ("random", "political"),
    ]
    assert all(r.run_key.startswith(f"{r.tags['argassets/study']}:random:") for r in changed.run_requests)
    # A rerun of the same tick (daemon restart) yields the same run keys: Dagster launches once.
    again = model_registry_sensor(
        dg.build_sensor_context(instance=h.instance, cursor=cosmetic.cursor, definitions=h.defs)
    )
    assert [r.run_key for r in again.run_requests] == [r.run_key for r in changed.run_requests]


def test_gpu_entry_gets_a_partition_but_runs_only_where_vllm_runs(
    judged: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = judged
    h.write(BASELINES + GPU_MODEL)
    cpu_only = h.tick()
    assert "llama-3.3-70b-instruct" in h.partitions()
    assert not cpu_only.run_requests
    assert "backend 'vllm' is not run automatically here" in cpu_only.skip_reason.skip_message

    # On a GPU deployment (a machine with 4 GPUs and vLLM's CUDA build) the same edit is run,
    # tagged with its four GPUs.
    monkeypatch.setattr(registry_sensor, "machine_for_instance", lambda _instance: GPU_MACHINE)
    h.cursor = None
    h.write(BASELINES)
    h.tick()
    monkeypatch.setenv("ARGASSETS_RUN_BACKENDS", "all")
    h.write(BASELINES + GPU_MODEL)
    gpu = h.tick()
    [request] = gpu.run_requests
    assert request.partition_key == "llama-3.3-70b-instruct"
    assert request.tags[GPUS_TAG] == "4"
    assert request.tags[POOL_TAG] == "gpu"
    k8s = json.loads(request.tags[K8S_CONFIG_TAG])
    assert k8s["container_config"]["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert k8s["pod_spec_config"]["node_selector"] == {"nvidia.com/gpu.present": "true"}


def _preflight_observations(h: Harness, partition: str) -> list[dict]:
    records = h.instance.fetch_observations(dg.AssetRecordsFilter(asset_key=K("aq_judgments")), limit=100).records
    return [
        {key: value.value for key, value in r.asset_observation.metadata.items()}
        for r in records
        if r.asset_observation.partition == partition and RUNNABLE_KEY in r.asset_observation.metadata
    ]


def test_an_entry_the_machine_cannot_run_gets_no_run_and_its_partition_says_why(
    judged: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = judged
    monkeypatch.setattr(registry_sensor, "machine_for_instance", lambda _instance: CPU_MACHINE)
    monkeypatch.setenv("ARGASSETS_RUN_BACKENDS", "all")  # vLLM is run automatically here, where it can
    h.write(BASELINES + GPU_MODEL)
    added = h.tick()
    assert not added.run_requests
    reason = "needs 4 GPUs (vLLM on CUDA); this machine has none: run it on a GPU node"
    assert f"not run: llama-3.3-70b-instruct for argument_quality: {reason}" in added.skip_reason.skip_message
    # The partition exists now; the next tick records why it cannot run here, once.
    h.tick()
    h.tick()
    [observed] = _preflight_observations(h, "llama-3.3-70b-instruct")
    assert observed[RUNNABLE_KEY] is False
    assert observed[PREFLIGHT_KEY] == "cannot run on this machine: needs 4 GPUs (vLLM on CUDA); this machine has none"
    assert not _preflight_observations(h, "random"), "a partition that runs here gets no observation"
    # Moved to a GPU machine: it can run again, said once.
    monkeypatch.setattr(registry_sensor, "machine_for_instance", lambda _instance: GPU_MACHINE)
    h.tick()
    h.tick()
    latest, _ = _preflight_observations(h, "llama-3.3-70b-instruct")
    assert latest == {RUNNABLE_KEY: True, PREFLIGHT_KEY: "runs on a GPU node"}


def test_unknown_backend_in_the_environment_is_a_clear_skip(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    harness.write(BASELINES)
    monkeypatch.setenv("ARGASSETS_RUN_BACKENDS", "random,vlm")
    result = harness.tick()
    assert isinstance(result, dg.SkipReason)
    assert "unknown backend(s) vlm" in result.skip_message


def test_unreadable_cursor_starts_from_an_empty_state(harness: Harness) -> None:
    h = harness
    h.write(BASELINES)
    h.cursor = "{not json"
    result = h.tick()
    assert isinstance(result, dg.SensorResult)
    assert h.partitions() == ["longer-wins", "random"]
    assert json.loads(result.cursor)["state"]["entries"][0][0] == "longer-wins"
