"""Sensors and schedules that operate the platform (assembled by argassets/definitions.py).

- ``model_registry_sensor`` (:mod:`sensors.registry_sensor`): registry edits become partitions
  and runs.
- ``<study>_reports_sensor`` (:func:`report_sensors`, one per study): evaluates the declarative
  automation conditions (:mod:`argassets.platform.operations.automation`) of the study's reports, which
  refresh once model partitions land; its runs carry ``argassets/reports: <study>``, which the
  run queue limits to one run per study at a time.
- ``argassets_automation_sensor`` (:func:`automation_sensor`): the automation conditions of
  everything else (per-model aggregates, standalone tables).
- ``nightly_refresh_schedule`` (:mod:`sensors.schedules`): each night, materialise what is stale.
- ``orphaned_runs_sensor`` (:mod:`sensors.orphaned_runs`): runs whose process is gone are failed
  and their pool slots freed, every 30 s.

All of them start running with the daemon (``dagster dev``). ``ARGASSETS_AUTOMATION=off`` in the
environment of the code location makes them start stopped instead (tests, staging); a status set
in the UI always wins over this default (:mod:`sensors.settings`).
"""

from __future__ import annotations

import dagster as dg

from argassets.platform.operations.automation import OperationsLayout, report_groups
from argassets.platform.operations.run_tags import REPORTS_TAG
from sensors.orphaned_runs import orphaned_runs_sensor
from sensors.registry_sensor import model_registry_sensor
from sensors.schedules import nightly_refresh_schedule
from sensors.settings import automation_interval_s, sensor_status


def report_sensors(layout: OperationsLayout) -> list[dg.AutomationConditionSensorDefinition]:
    """One automation sensor per study's reports, tagging its runs with the study (one at a time)."""
    return [
        dg.AutomationConditionSensorDefinition(
            f"{study}_reports_sensor",
            target=dg.AssetSelection.assets(*reports),
            run_tags={REPORTS_TAG: study},
            default_status=sensor_status(),
            minimum_interval_seconds=automation_interval_s(),
            description=f"Refreshes the {study} reports once all requested partitions landed, one run at a time.",
        )
        for study, reports in report_groups(layout).items()
    ]


def automation_sensor(layout: OperationsLayout) -> dg.AutomationConditionSensorDefinition:
    """Evaluates the automation conditions of every asset but the reports (replaces Dagster's
    implicit default sensor)."""
    return dg.AutomationConditionSensorDefinition(
        "argassets_automation_sensor",
        target=dg.AssetSelection.all() - dg.AssetSelection.assets(*layout.reports),
        default_status=sensor_status(),
        minimum_interval_seconds=automation_interval_s(),
        description="Refreshes aggregates per model partition and the standalone tables.",
    )


def code_location_sensors(layout: OperationsLayout) -> list[dg.SensorDefinition]:
    """Every sensor of the code location whose assets ``layout`` describes."""
    return [model_registry_sensor, *report_sensors(layout), automation_sensor(layout), orphaned_runs_sensor]


SCHEDULES: list = [nightly_refresh_schedule]
