"""Slurm settings in the registry and the sbatch options and job states built from them (no cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from argassets.platform.operations.slurm.jobs import SlurmError, parse_show_job, sbatch_options
from argassets.platform.operations.slurm.launcher import entry_of_run, job_script
from argassets.platform.registry.entries import RegistryError, parse_registry
from argassets.platform.registry.model_entry import SlurmSettings

REGISTRY = {
    "slurm": {"partition": "gpu", "account": "argproj", "time": "02:00:00", "mem": "32G"},
    "models": [
        {"name": "random", "backend": "random", "studies": ["argument_quality"]},
        {
            "name": "big",
            "backend": "vllm",
            "model_id": "m/big",
            "gpus": 4,
            "studies": ["argument_quality"],
            "slurm": {"partition": "a100", "qos": "long", "cpus": 16, "time": "1-00:00:00"},
        },
    ],
}

SHOW_JOB = (
    "JobId=7 JobName=argassets-big UserId=root(0) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) "
    "ExitCode=0:15 RunTime=00:01:04 TimeLimit=00:01:00 StdOut=/tmp/run-x.log Partition=debug"
)


def test_entry_settings_override_the_registry_defaults_field_by_field():
    registry = parse_registry(REGISTRY)
    big = registry.slurm_for(registry.get("big"))
    assert big == SlurmSettings(partition="a100", account="argproj", qos="long", cpus=16, mem="32G", time="1-00:00:00")
    assert registry.slurm_for(registry.get("random")) == SlurmSettings(
        partition="gpu", account="argproj", time="02:00:00", mem="32G"
    )


def test_sbatch_options_carry_the_gpus_and_every_setting_and_the_estimate_only_without_a_time():
    registry = parse_registry(REGISTRY)
    entry = registry.get("big")
    options = sbatch_options(
        entry.gpus, registry.slurm_for(entry), job_name="j", output=Path("/l/x.log"), time_limit="5"
    )
    assert options == [
        "--job-name=j", "--output=/l/x.log", "--parsable", "--gres=gpu:4", "--partition=a100", "--account=argproj",
        "--qos=long", "--cpus-per-task=16", "--mem=32G", "--time=1-00:00:00",
    ]  # fmt: skip
    plain = sbatch_options(0, SlurmSettings(), job_name="j", output=Path("x.log"), time_limit="17")
    assert plain == ["--job-name=j", "--output=x.log", "--parsable", "--time=17"]


@pytest.mark.parametrize(("field", "value"), [("mem", "32 GB"), ("time", "2 hours"), ("cpus", 0), ("partiton", "gpu")])
def test_bad_slurm_settings_name_the_entry_and_field(field, value):
    bad = {"models": [{"name": "x", "backend": "random", "studies": ["political"], "slurm": {field: value}}]}
    with pytest.raises(RegistryError, match=rf"entry #1 \('x'\): field 'slurm.{field}'"):
        parse_registry(bad, "models.toml")


def test_a_bad_registry_default_names_the_slurm_table():
    with pytest.raises(RegistryError, match=r"field 'slurm.mem'"):
        parse_registry({**REGISTRY, "slurm": {"mem": "lots"}}, "models.toml")


def test_a_timed_out_job_is_described_with_its_time_limit():
    state = parse_show_job(SHOW_JOB)
    assert not state.active
    assert state.describe() == (
        "Slurm job 7 reached its time limit (TIMEOUT, reason TimeLimit, time limit 00:01:00, exit code 0:15)"
    )
    running = parse_show_job(SHOW_JOB.replace("TIMEOUT", "RUNNING").replace("TimeLimit ", "None "))
    assert running.active and running.describe() == "Slurm job 7 is running (RUNNING)"
    with pytest.raises(SlurmError, match="unexpected answer"):
        parse_show_job("slurm_load_jobs error: Invalid job id specified")


def test_runs_find_their_entry_by_model_tag_or_partition_and_others_none():
    registry = parse_registry(REGISTRY)
    assert entry_of_run(registry, {"argassets/model": "big"}).name == "big"
    assert entry_of_run(registry, {"dagster/partition": "random"}).name == "random"
    assert entry_of_run(registry, {"dagster/partition": "gone"}) is None
    assert entry_of_run(registry, {}) is None


def test_job_script_exports_the_instance_environment_and_execs_the_worker():
    script = job_script(
        "r1", ["/venv/bin/python", "-m", "dagster", "api", "execute_run", '{"a": 1}'], Path("/proj"),
        {"DAGSTER_HOME": "/h", "ARGASSETS_CACHE": "postgresql://u:p w@h/db", "HOME": "/root"},
    )  # fmt: skip
    assert script.splitlines() == [
        "#!/bin/bash",
        "# Dagster run r1",
        "set -e",
        "export ARGASSETS_CACHE='postgresql://u:p w@h/db'",
        "export DAGSTER_HOME=/h",
        "cd /proj",
        "exec /venv/bin/python -m dagster api execute_run '{\"a\": 1}'",
    ]
