"""Deployment switches read from the environment of the code location (never secrets)."""

from __future__ import annotations

import os

import dagster as dg

#: ``off`` starts every sensor and schedule of the platform stopped (tests, staging); default ``on``.
AUTOMATION_ENV_VAR = "ARGASSETS_AUTOMATION"


#: Seconds between evaluations of the automation sensors (default 30; tests use fewer).
AUTOMATION_INTERVAL_ENV_VAR = "ARGASSETS_AUTOMATION_INTERVAL_S"


def automation_interval_s() -> int:
    """The automation sensors' minimum interval (``$ARGASSETS_AUTOMATION_INTERVAL_S``, default 30)."""
    raw = os.environ.get(AUTOMATION_INTERVAL_ENV_VAR, "30").strip()
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{AUTOMATION_INTERVAL_ENV_VAR}={raw!r}: expected a whole number of seconds, at least 1")
    return int(raw)


#: ``in_process``: every step of a run the daemon launches runs in the run's process, one after the
#: other (as the ``argassets`` CLI runs them), instead of a process per step; default ``multiprocess``.
EXECUTOR_ENV_VAR = "ARGASSETS_EXECUTOR"


def run_executor() -> dg.ExecutorDefinition:
    """Dagster's default executor, whose default mode is ``$ARGASSETS_EXECUTOR`` (``multiprocess``).

    A step process imports the code location again (10-20 s on a loaded 2-core machine), so a
    report run of nine steps spends most of its time importing. Both modes stay selectable per
    run (``execution: {config: {in_process: {}}}``), as the CLI selects one.
    """
    from dagster._core.definitions.executor_definition import IN_PROC_CONFIG, MULTI_PROC_CONFIG

    mode = os.environ.get(EXECUTOR_ENV_VAR, "multiprocess").strip()
    if mode not in ("multiprocess", "in_process"):
        raise ValueError(f"{EXECUTOR_ENV_VAR}={mode!r}: expected multiprocess or in_process")
    default = dg.multi_or_in_process_executor
    if mode == "multiprocess":
        return default
    return dg.ExecutorDefinition(
        name=default.name,
        config_schema=dg.Field(
            dg.Selector({"multiprocess": MULTI_PROC_CONFIG, "in_process": IN_PROC_CONFIG}),
            default_value={mode: {}},
        ),
        executor_creation_fn=default.executor_creation_fn,
        requirements=default.get_requirements,
    )


def automation_enabled() -> bool:
    """Whether sensors and schedules start running (``$ARGASSETS_AUTOMATION``, default on)."""
    return os.environ.get(AUTOMATION_ENV_VAR, "on").strip().lower() not in ("off", "0", "false", "no")


def sensor_status() -> dg.DefaultSensorStatus:
    """The default status of the platform's sensors; a status set in the UI wins."""
    return dg.DefaultSensorStatus.RUNNING if automation_enabled() else dg.DefaultSensorStatus.STOPPED


def schedule_status() -> dg.DefaultScheduleStatus:
    """The default status of the platform's schedules; a status set in the UI wins."""
    return dg.DefaultScheduleStatus.RUNNING if automation_enabled() else dg.DefaultScheduleStatus.STOPPED


#: Dagster's implicit job over every asset (``dagster._core.definitions.assets.job.asset_job``):
#: the one job that may hold assets with different partitions definitions, as the studies' are.
IMPLICIT_ASSET_JOB = "__ASSET_JOB"
