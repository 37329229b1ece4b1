"""Orphaned runs are found from their processes' pids and freed; a signal stops a waiting execution.

Fast, in one process: the subprocess versions (a SIGKILLed ``dagster asset materialize``, every
CLI command signalled while it waits for a slot) are in ``test_reliability_runs.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import dagster as dg
import pytest

from argassets.platform.operations.run_recovery import PID_TAG, Stopped, fail_orphaned_runs, run_pids, run_stoppably
from sensors.orphaned_runs import orphaned_runs_sensor


@dg.asset
def thing() -> int:
    return 1


JOB = dg.Definitions(assets=[thing]).resolve_implicit_global_asset_job_def()


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def started_run(instance: dg.DagsterInstance, pid: int, tags: dict[str, str] | None = None) -> dg.DagsterRun:
    """A run in the state a SIGKILL leaves: started by process ``pid``, one step holding the gpu slot."""
    run = instance.create_run_for_job(JOB, tags=tags or {})
    for event_type, step_key in ((dg.DagsterEventType.RUN_START, None), (dg.DagsterEventType.STEP_START, "thing")):
        instance.handle_new_event(
            dg.EventLogEntry(
                error_info=None,
                level="debug",
                user_message="",
                run_id=run.run_id,
                timestamp=time.time(),
                dagster_event=dg.DagsterEvent(
                    event_type_value=event_type.value, job_name=run.job_name, step_key=step_key, pid=pid
                ),
            )
        )
    instance.event_log_storage.claim_concurrency_slot("gpu", run.run_id, "thing")
    return run


def test_a_run_whose_processes_are_gone_is_failed_by_the_sensor_and_its_slot_freed(
    dagster_instance: dg.DagsterInstance,
) -> None:
    storage = dagster_instance.event_log_storage
    storage.set_concurrency_slots("gpu", 2)
    dead, alive = dead_pid(), os.getpid()
    orphan = started_run(dagster_instance, dead)  # e.g. `dagster asset materialize`, SIGKILLed: no tags
    live = started_run(dagster_instance, alive)
    assert run_pids(dagster_instance, orphan) == {dead}
    result = orphaned_runs_sensor(dg.build_sensor_context(instance=dagster_instance))
    assert isinstance(result, dg.SkipReason) and orphan.run_id in (result.skip_message or "")
    assert dagster_instance.get_run_by_id(orphan.run_id).status == dg.DagsterRunStatus.FAILURE
    assert dagster_instance.get_run_by_id(live.run_id).status == dg.DagsterRunStatus.STARTED
    assert [slot.run_id for slot in storage.get_concurrency_info("gpu").claimed_slots] == [live.run_id]
    [failure] = dagster_instance.all_logs(orphan.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
    assert f"(pid {dead}) is gone (killed or crashed)" in failure.message
    # Nothing left to do on the next tick.
    assert fail_orphaned_runs(dagster_instance) == []


def test_a_tagged_run_is_judged_by_its_tag_not_by_the_pids_of_its_events(dagster_instance: dg.DagsterInstance) -> None:
    dagster_instance.event_log_storage.set_concurrency_slots("gpu", 1)
    run = started_run(dagster_instance, dead_pid(), tags={PID_TAG: str(os.getpid())})
    assert fail_orphaned_runs(dagster_instance) == []
    assert dagster_instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.STARTED


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_an_execution_that_waits_and_fails_the_runs_of_this_process(
    dagster_instance: dg.DagsterInstance, sig: signal.Signals
) -> None:
    mine = dagster_instance.create_run_for_job(JOB, tags={PID_TAG: str(os.getpid())})
    other = started_run(dagster_instance, dead_pid(), tags={PID_TAG: "1"})
    before = signal.getsignal(sig)
    release = threading.Event()
    threading.Timer(0.5, lambda: os.kill(os.getpid(), sig)).start()
    started = time.monotonic()
    with pytest.raises(Stopped, match=sig.name):
        run_stoppably(lambda: release.wait(60), dagster_instance)  # a wait Dagster would not interrupt
    release.set()
    assert time.monotonic() - started < 5
    assert dagster_instance.get_run_by_id(mine.run_id).status == dg.DagsterRunStatus.FAILURE
    assert dagster_instance.get_run_by_id(other.run_id).status == dg.DagsterRunStatus.STARTED
    assert signal.getsignal(sig) is before  # the handler in force before is back


def test_an_execution_that_ends_returns_its_value_or_raises_its_error(dagster_instance: dg.DagsterInstance) -> None:
    assert run_stoppably(lambda: 42, dagster_instance) == 42
    with pytest.raises(ZeroDivisionError):
        run_stoppably(lambda: 1 / 0, dagster_instance)
