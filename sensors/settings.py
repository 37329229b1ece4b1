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
