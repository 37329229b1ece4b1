"""``SlurmRunLauncher``: each Dagster run becomes one Slurm batch job (docs/operations.md)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.events import EngineEventData
from dagster._core.launcher import CheckRunHealthResult, LaunchRunContext, RunLauncher, WorkerStatus
from dagster._core.storage.dagster_run import DagsterRun
from dagster._grpc.types import ExecuteRunArgs
from dagster._serdes import ConfigurableClass, ConfigurableClassData, serialize_value

from argassets.platform.operations.slurm import jobs
from argassets.platform.registry.entries import ModelRegistry, RegistryError, load_registry
from argassets.platform.registry.model_entry import ModelEntry, SlurmSettings

JOB_ID_TAG = "argassets/slurm-job-id"
JOB_LOG_TAG = "argassets/slurm-log"
TIME_TAG = "argassets/slurm-time"
MODEL_TAG = "argassets/model"
PARTITION_TAG = "dagster/partition"


def entry_of_run(registry: ModelRegistry, tags: Mapping[str, str]) -> ModelEntry | None:
    """The registry entry a run judges with (its model tag or partition), ``None`` for other runs."""
    name = tags.get(MODEL_TAG) or tags.get(PARTITION_TAG)
    if name is None or name not in registry.names:
        return None
    return registry.get(name)


def job_script(run_id: str, command: list[str], workdir: Path, environ: Mapping[str, str]) -> str:
    """The batch script: the instance's environment, then the run worker in the project folder."""
    exported = {key: value for key, value in environ.items() if key.startswith(("ARGASSETS_", "DAGSTER_"))}
    lines = ["#!/bin/bash", f"# Dagster run {run_id}", "set -e"]
    lines += [f"export {key}={shlex.quote(value)}" for key, value in sorted(exported.items())]
    lines += [f"cd {shlex.quote(str(workdir))}", "exec " + shlex.join(command), ""]
    return "\n".join(lines)


class SlurmRunLauncher(RunLauncher, ConfigurableClass):
    """Launches each run as one ``sbatch`` job; see the module docstring."""

    def __init__(self, work_dir: str | None = None, inst_data: ConfigurableClassData | None = None) -> None:
        self._inst_data = inst_data
        self._work_dir = work_dir
        super().__init__()

    @property
    def inst_data(self) -> ConfigurableClassData | None:
        return self._inst_data

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {"work_dir": dg.Field(dg.StringSource, is_required=False)}

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]) -> SlurmRunLauncher:
        return cls(inst_data=inst_data, **config_value)

    @property
    def work_dir(self) -> Path:
        """Scripts and logs: the configured folder, else ``$DAGSTER_HOME/slurm``."""
        root = Path(self._work_dir or Path(os.environ.get("DAGSTER_HOME", ".")) / "slurm")
        root.mkdir(parents=True, exist_ok=True)
        return root

    def _settings(self, run: DagsterRun) -> tuple[ModelEntry | None, SlurmSettings]:
        try:
            # Read without the studies (the launcher runs outside the code location): GPUs and Slurm settings only.
            registry = load_registry(studies=None)
        except RegistryError as exc:
            raise dg.DagsterInvariantViolationError(f"run {run.run_id}: {exc}") from None
        entry = entry_of_run(registry, run.tags)
        return entry, (registry.slurm_for(entry) if entry else registry.slurm)

    def _refused(self, run: DagsterRun, entry: ModelEntry | None) -> bool:
        """Whether the pre-flight refuses ``run`` (it judges an entry no node of the cluster can
        run); the run is then cancelled with the reason, and nothing is submitted."""
        from argassets.platform.operations.machine import slurm_machine
        from argassets.platform.operations.preflight import refusals

        # Read without the studies, as in _settings: a run tagged with a partition judges that entry.
        if entry is None:
            return False
        refusal = refusals(load_registry(studies=None), [entry.name], slurm_machine()).get(entry.name)
        if refusal is None:
            return False
        self._instance.report_run_canceled(run, message=f"Not submitted to Slurm: {refusal.line}")
        return True

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        entry, settings = self._settings(run)
        if self._refused(run, entry):
            return
        origin = run.job_code_origin
        if origin is None:
            raise dg.DagsterInvariantViolationError(f"run {run.run_id} has no code origin to run on a Slurm node")
        args = ExecuteRunArgs(job_origin=origin, run_id=run.run_id, instance_ref=self._instance.get_ref())
        folder = self.work_dir
        script = folder / f"run-{run.run_id}.sh"
        log = folder / f"run-{run.run_id}.log"
        workdir = Path(getattr(origin.repository_origin.code_pointer, "working_directory", None) or os.getcwd())
        # The code location's own interpreter, not whatever `dagster` the node's PATH finds first.
        command = [origin.executable_path, "-m", "dagster", "api", "execute_run"]
        command.append(serialize_value(args))
        script.write_text(job_script(run.run_id, command, workdir, os.environ), encoding="utf-8")
        job_name = f"argassets-{run.tags.get(MODEL_TAG) or run.job_name}"[:64]
        options = jobs.sbatch_options(
            entry.gpus_needed if entry else 0,
            settings,
            job_name=job_name,
            output=log,
            time_limit=run.tags.get(TIME_TAG),
        )
        try:
            job_id = jobs.submit(script, options)
        except jobs.SlurmError as exc:
            raise dg.DagsterInvariantViolationError(
                f"Slurm refused the job of run {run.run_id} ({entry.name if entry else run.job_name}"
                f"{f', {entry.gpus_needed} GPU(s)' if entry and entry.gpus_needed else ''}): {exc}"
            ) from None
        self._instance.add_run_tags(run.run_id, {JOB_ID_TAG: job_id, JOB_LOG_TAG: str(log)})
        self._instance.report_engine_event(
            f"Submitted Slurm job {job_id}: sbatch {' '.join(options)} (log {log})",
            run,
            EngineEventData(
                {"Slurm job id": dg.MetadataValue.text(job_id), "Slurm log": dg.MetadataValue.path(str(log))}
            ),
        )

    def _job_id(self, run_id: str) -> str | None:
        run = self._instance.get_run_by_id(run_id)
        return None if run is None else run.tags.get(JOB_ID_TAG)

    def terminate(self, run_id: str) -> bool:
        job_id = self._job_id(run_id)
        run = self._instance.get_run_by_id(run_id)
        if job_id is None or run is None:
            return False
        self._instance.report_run_canceling(run, message=f"Cancelling Slurm job {job_id} (scancel)")
        jobs.cancel(job_id)
        return True

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        job_id = run.tags.get(JOB_ID_TAG)
        if job_id is None:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, "no Slurm job id on the run")
        state = jobs.job_state(job_id)
        if state is None:
            return CheckRunHealthResult(WorkerStatus.NOT_FOUND, f"Slurm no longer knows job {job_id}")
        if state.active:
            return CheckRunHealthResult(WorkerStatus.RUNNING, state.describe(), run_worker_id=job_id)
        status = WorkerStatus.SUCCESS if state.state == "COMPLETED" else WorkerStatus.FAILED
        return CheckRunHealthResult(status, state.describe(), run_worker_id=job_id)

    def get_run_worker_debug_info(self, run: DagsterRun, include_container_logs: bool | None = True) -> str | None:
        log = run.tags.get(JOB_LOG_TAG)
        return f"End of the Slurm job's log {log}:\n{jobs.log_tail(log)}" if log else None
