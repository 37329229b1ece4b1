"""The operations part of the real code location: sensors, schedule, jobs and automation conditions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from argassets.definitions import defs
from argassets.platform.operations.automation import MANUAL_KINDS, operations_layout
from argassets.platform.operations.check_coverage import study_of_assets
from argassets.studies import code_location_studies

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def graph():
    return defs.resolve_asset_graph()


def test_sensors_schedule_and_jobs_are_registered_and_start_running() -> None:
    repo = defs.get_repository_def()
    sensors = {s.name: s for s in repo.sensor_defs}
    assert {"model_registry_sensor", "argassets_automation_sensor"} <= set(sensors)
    assert all(s.default_status == dg.DefaultSensorStatus.RUNNING for s in sensors.values())
    schedule = repo.get_schedule_def("nightly_refresh_schedule")
    assert schedule.cron_schedule == "0 3 * * *"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert {"aq_judgments_job", "political_predictions_job"} <= {j.name for j in repo.get_all_jobs()}


def test_each_studys_reports_have_a_sensor_of_their_own_tagging_its_runs(graph) -> None:
    """One automation sensor per study's reports (its runs tagged for the queue's one-per-study
    limit); the code location's automation sensor evaluates everything else."""
    layout = operations_layout(graph, code_location_studies())
    repo = defs.get_repository_def()
    sensors = {s.name: s for s in repo.sensor_defs}
    for study, reports in layout.reports_by_study.items():
        sensor = sensors[f"{study}_reports_sensor"]
        assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
        assert sensor.run_tags == {"argassets/reports": study}
        assert sensor.asset_selection.resolve(graph) == set(reports)
    rest = sensors["argassets_automation_sensor"].asset_selection.resolve(graph)
    assert not rest & set(layout.reports)
    assert set(layout.standalone) <= rest


def test_bad_automation_settings_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from sensors.settings import automation_interval_s, run_executor

    monkeypatch.setenv("ARGASSETS_AUTOMATION_INTERVAL_S", "soon")
    with pytest.raises(ValueError, match="ARGASSETS_AUTOMATION_INTERVAL_S='soon'"):
        automation_interval_s()
    monkeypatch.setenv("ARGASSETS_EXECUTOR", "threads")
    with pytest.raises(ValueError, match="ARGASSETS_EXECUTOR='threads'"):
        run_executor()
    monkeypatch.setenv("ARGASSETS_EXECUTOR", "in_process")
    assert run_executor().config_schema.default_value == {"in_process": {}}
    monkeypatch.delenv("ARGASSETS_EXECUTOR")
    assert run_executor() is dg.multi_or_in_process_executor


def test_automation_off_starts_everything_stopped() -> None:
    code = (
        "from argassets.definitions import defs;"
        "r = defs.get_repository_def();"
        "print(sorted({s.default_status.value for s in r.sensor_defs} | {s.default_status.value for s in r.schedule_defs}))"
    )
    env = {**os.environ, "ARGASSETS_AUTOMATION": "off"}
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "['STOPPED']"


def test_every_report_over_all_partitions_has_the_all_partitions_condition(graph) -> None:
    layout = operations_layout(graph, code_location_studies())
    assert layout.roots == {
        "argument_quality": dg.AssetKey("aq_judgments"),
        "political": dg.AssetKey("political_predictions"),
    }
    assert {"aq_agreement_report", "political_pointwise_validation"} <= {k.to_user_string() for k in layout.reports}
    for key in layout.reports:
        condition = graph.get(key).automation_condition
        assert condition is not None and condition.get_label() == "after_all_model_partitions", key
    for key in layout.roots.values():
        assert graph.get(key).automation_condition is None, "roots are run by the registry sensor"
    for key in graph.get_all_asset_keys():
        if set(graph.get(key).kinds) & MANUAL_KINDS:
            assert graph.get(key).automation_condition is None, f"{key} needs an external server"


def test_every_checked_asset_is_run_by_run_default_and_by_automation(graph) -> None:
    """A check whose asset nobody materialises is never evaluated (political_pairwise_graph_connected
    was): every checked asset belongs to a study's layout, which run-default and --with-reports
    run, and all but the roots and the study inputs (run before any judging) have an automation
    condition."""
    layout = operations_layout(graph, code_location_studies())
    owners = study_of_assets(layout)
    assert dg.AssetKey("political_pairwise_connections") in layout.standalone_by_study["political"]
    for check_key in graph.asset_check_keys:
        key = check_key.asset_key
        if set(graph.get(key).kinds) & MANUAL_KINDS:
            continue
        assert owners.get(key), f"{check_key.to_user_string()}: its asset is run by no study"
        if key not in layout.roots.values() and key not in layout.inputs:
            assert graph.get(key).automation_condition is not None, f"{check_key.to_user_string()}: not automated"


def test_study_jobs_tag_each_partition_with_its_gpus() -> None:
    job = defs.resolve_job_def("aq_judgments_job")
    # The study's own model partitions: its partition list holds only the models taking part in it.
    assert job.partitions_def is not None and job.partitions_def.name == "models_argument_quality"
    assert defs.resolve_job_def("political_predictions_job").partitions_def.name == "models_political"
    tags = job.partitioned_config.get_tags_for_partition_key("llama-3.3-70b-instruct")
    assert tags["argassets/gpus"] == "4" and tags["argassets/pool"] == "gpu"
    assert json.loads(tags["dagster-k8s/config"])["container_config"]["resources"]["limits"] == {"nvidia.com/gpu": "4"}
    assert job.partitioned_config.get_tags_for_partition_key("random")["argassets/gpus"] == "0"
    # A partition whose entry left the registry still lists (minimal tags, no error).
    gone = job.partitioned_config.get_tags_for_partition_key("gone-model")
    assert gone["argassets/model"] == "gone-model" and "argassets/gpus" not in gone


def test_judging_runs_in_the_gpu_pool(graph) -> None:
    assert graph.get(dg.AssetKey("aq_judgments")).pools == {"gpu"}
