"""The run-tag policy: a run launched from the UI's asset graph gets the registry tags CLI runs get."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.run_coordinator import SubmitRunContext
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

from argassets import run_queue
from argassets.platform.operations.machine import Machine
from argassets.platform.operations.run_tags import MODEL_TAG, POOL_TAG, REPORTS_TAG, run_tags_for_entry
from argassets.run_queue import TaggingRunCoordinator, policy_tags
from argassets.studies import load_registry

ROOT = Path(__file__).resolve().parents[2]
COORDINATOR = {"module": "argassets.run_queue", "class": "TaggingRunCoordinator"}
GPU_MODEL = "mixtral-8x7b-instruct-v0.1"
#: Where a queued run of the code location's implicit asset job comes from (the queue needs one).
ASSET_JOB_ORIGIN = RemoteJobOrigin(
    RemoteRepositoryOrigin(
        InProcessCodeLocationOrigin(LoadableTargetOrigin(module_name="argassets.definitions")), "__repository__"
    ),
    "__ASSET_JOB",
)


def submitted(instance: dg.DagsterInstance, tags: dict[str, str], selection: set[str] | None) -> dg.DagsterRun:
    """A run as the UI's asset graph creates it (implicit asset job), submitted to the queue."""
    run = dg.DagsterRun(
        job_name="__ASSET_JOB",
        run_id=str(uuid.uuid4()),
        tags=tags,
        remote_job_origin=ASSET_JOB_ORIGIN,
        asset_selection=None if selection is None else frozenset(dg.AssetKey(key) for key in selection),
    )
    instance.add_run(run)
    return instance.run_coordinator.submit_run(SubmitRunContext(run, workspace=None))  # type: ignore[arg-type]


def test_ui_partition_run_gets_the_registry_tags_before_it_is_queued(monkeypatch: pytest.MonkeyPatch) -> None:
    # A machine with the GPUs the entry needs: on one without, the pre-flight cancels the run
    # (tests/platform/test_preflight.py).
    gpu_node = Machine("a GPU node", "local", gpus=8, modules=frozenset({"vllm"}), vllm_build="cuda")
    monkeypatch.setattr(run_queue, "machine_for_instance", lambda _instance: gpu_node)
    entry = load_registry().get(GPU_MODEL)
    assert entry.gpus > 0 and "argument_quality" in entry.studies
    with dg.instance_for_test(overrides={"run_coordinator": COORDINATOR}) as instance:
        run = submitted(instance, {"dagster/partition": GPU_MODEL}, {"aq_judgments"})
        assert run.status == dg.DagsterRunStatus.QUEUED
        expected = {"dagster/partition": GPU_MODEL, **run_tags_for_entry(entry, study="argument_quality")}
        assert {k: v for k, v in run.tags.items() if k in expected} == expected
        assert run.tags[POOL_TAG] == "gpu"  # so the queue's limit on GPU runs holds for it


def test_tags_set_at_launch_are_kept_and_other_runs_get_none() -> None:
    with dg.instance_for_test(overrides={"run_coordinator": COORDINATOR}) as instance:
        tagged = submitted(
            instance, {"dagster/partition": "random", MODEL_TAG: "random", "mine": "1"}, {"aq_judgments"}
        )
        assert {k: v for k, v in tagged.tags.items() if not k.startswith("dagster/")} == {
            MODEL_TAG: "random",
            "mine": "1",
        }
        unpartitioned = submitted(instance, {}, {"aq_corpus"})
        assert not any(k.startswith("argassets/") for k in unpartitioned.tags)


def test_a_partition_not_in_the_registry_or_of_several_studies_is_tagged_without_guessing() -> None:
    assert policy_tags({"dagster/partition": "gone"}, None, entry_for=lambda _name: None) == {}
    entry = load_registry().get("random")
    both = policy_tags(
        {"dagster/partition": "random"}, {dg.AssetKey("aq_judgments"), dg.AssetKey("political_predictions")}
    )
    assert both == run_tags_for_entry(entry)  # no study tag: the run spans two studies
    assert (
        policy_tags({"dagster/partition": "random"}, {dg.AssetKey("political_predictions")})["argassets/study"]
        == "political"
    )


def test_the_local_instance_config_queues_runs_through_the_policy(tmp_path: Path) -> None:
    shutil.copy(ROOT / "deploy" / "local" / "dagster.yaml", tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert isinstance(instance.run_coordinator, TaggingRunCoordinator)
        limits = instance.get_concurrency_config().run_queue_config.tag_concurrency_limits
        assert {"key": POOL_TAG, "value": "gpu", "limit": 1} in limits
        # One report run per study at a time (the automation's report runs carry the study).
        assert {"key": REPORTS_TAG, "value": {"applyLimitPerUniqueValue": True}, "limit": 1} in limits
