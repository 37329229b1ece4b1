"""Sensors, schedules and jobs that operate the platform (imported by argassets/definitions.py).

- ``model_registry_sensor`` (:mod:`sensors.registry_sensor`): registry edits become partitions
  and runs.
- ``argassets_automation_sensor`` (:data:`AUTOMATION_SENSOR`): evaluates the declarative
  automation conditions (:mod:`argassets.platform.automation`) that refresh aggregates and reports once
  model partitions land.
- ``nightly_refresh_schedule`` (:mod:`sensors.schedules`): each night, materialise what is stale.
- ``orphaned_runs_sensor`` (:mod:`sensors.orphaned_runs`): runs whose process is gone are failed
  and their pool slots freed, every 30 s.
- Per-study partitioned jobs (:mod:`sensors.jobs`): ``<root asset>_job`` for each study, for UI
  and CLI backfills with per-partition GPU tags.

All of them start running with the daemon (``dagster dev``). ``ARGASSETS_AUTOMATION=off`` in the
environment of the code location makes them start stopped instead (tests, staging); a status set
in the UI always wins over this default (:mod:`sensors.settings`).
"""

from __future__ import annotations

import dagster as dg

from sensors.jobs import build_study_jobs
from sensors.orphaned_runs import orphaned_runs_sensor
from sensors.registry_sensor import model_registry_sensor
from sensors.schedules import nightly_refresh_schedule
from sensors.settings import sensor_status

#: Evaluates every asset's automation condition (replaces Dagster's implicit default sensor).
AUTOMATION_SENSOR = dg.AutomationConditionSensorDefinition(
    "argassets_automation_sensor",
    target=dg.AssetSelection.all(),
    default_status=sensor_status(),
    minimum_interval_seconds=30,
    description="Refreshes aggregates per model partition and reports once all requested partitions landed.",
)

SENSORS: list = [model_registry_sensor, AUTOMATION_SENSOR, orphaned_runs_sensor]
SCHEDULES: list = [nightly_refresh_schedule]
JOBS: list = build_study_jobs()
