"""``orphaned_runs_sensor``: the daemon fails runs whose process is gone and frees their pool slots.

Every 30 s, so a run SIGKILLed anywhere on this machine (UI run worker, ``dagster asset
materialize``, ``argassets``) stops holding the ``gpu`` pool within a minute even when no platform
command starts (:mod:`argassets.platform.operations.run_recovery`).
"""

from __future__ import annotations

import dagster as dg

from argassets.platform.operations.run_recovery import fail_orphaned_runs
from sensors.settings import sensor_status


@dg.sensor(
    name="orphaned_runs_sensor",
    minimum_interval_seconds=30,
    default_status=sensor_status(),
    description="Marks runs whose process is gone (SIGKILL, crash) failed and frees their pool slots.",
)
def orphaned_runs_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    """Fail orphaned runs of this machine's instance; the tick's message lists them."""
    failed = fail_orphaned_runs(context.instance)
    for run, reason in failed:
        context.log.warning(f"marked failed: run {run.run_id} ({run.job_name}); {reason}")
    if not failed:
        return dg.SkipReason("no orphaned run")
    return dg.SkipReason("marked failed: " + ", ".join(run.run_id for run, _ in failed))
