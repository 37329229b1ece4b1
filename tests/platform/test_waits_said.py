"""Nothing waits in silence (issue 35, part 4): a run held by a pool or the run queue says why.

A real in-process execution of an asset of the ``gpu`` pool, run as ``argassets`` runs it
(:func:`run_stoppably`, its runs tagged with this process's pid), while another run holds the
pool's only slot: the terminal and the run's log say what it waits for and how to unblock it,
and the run proceeds once the slot is freed. A pool of limit 0 says that nothing can ever run.
A run queued behind a full tag limit gets an engine event naming the limit and the runs ahead.
"""

from __future__ import annotations

import os
import threading
import uuid

import dagster as dg

from argassets.platform.operations.run_recovery import PID_TAG, run_stoppably
from argassets.platform.operations.run_tags import POOL_TAG
from argassets.platform.operations.waiting import pool_waits
from tests.platform.test_run_recovery import dead_pid, started_run
from tests.platform.test_run_tag_policy import COORDINATOR, submitted


@dg.asset(pool="gpu")
def gpu_step() -> int:
    """A step of the gpu pool."""
    return 1


def _waits_logged(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    events = instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
    return [event.message for event in events if event.message.startswith("Waiting: ")]


def test_a_run_waiting_for_a_pool_slot_says_what_holds_it_and_goes_on_once_freed(
    dagster_instance: dg.DagsterInstance,
) -> None:
    storage = dagster_instance.event_log_storage
    storage.set_concurrency_slots("gpu", 1)
    holder = started_run(dagster_instance, dead_pid(), tags={PID_TAG: "1"})  # holds the only slot
    # The holder lets go once the wait is said (at the latest after 60 s, so that a wait never said
    # fails the assertions below instead of hanging). What the terminal is told is collected
    # directly: the run's thread under pytest's output capture failed once with "I/O operation on
    # closed file" in a full fast loop.
    told: list[str] = []

    def tell_and_free(line: str) -> None:
        told.append(line)
        if line.startswith("waiting: "):
            storage.free_concurrency_slots_for_run(holder.run_id)

    deadline = threading.Timer(60.0, storage.free_concurrency_slots_for_run, [holder.run_id])
    deadline.start()
    try:
        result = run_stoppably(
            lambda: dg.materialize([gpu_step], instance=dagster_instance, tags={PID_TAG: str(os.getpid())}),
            dagster_instance,
            say=tell_and_free,
        )
    finally:
        deadline.cancel()
    assert result.success
    said = [line for line in told if line.startswith("waiting: ")]
    expected = (
        f"run {result.run_id[:8]} step gpu_step waits for a slot of pool 'gpu' "
        f"(limit 1, in use by run {holder.run_id[:8]} step thing); it starts when a slot is free; "
        "to allow more at once: argassets pools --gpu 2"
    )
    assert said and said[0].startswith(f"waiting: {expected}"), said
    assert "argassets runs mark-orphans" in said[0]
    logged = _waits_logged(dagster_instance, result.run_id)
    assert logged and logged[0].startswith(f"Waiting: {expected}")


def test_a_pool_of_limit_zero_says_nothing_can_ever_run(dagster_instance: dg.DagsterInstance) -> None:
    storage = dagster_instance.event_log_storage
    storage.set_concurrency_slots("gpu", 0)
    run_id = str(uuid.uuid4())
    storage.claim_concurrency_slot("gpu", run_id, "gpu_step")  # pending: no slot exists
    [(waiting_run, step, message)] = pool_waits(dagster_instance, [run_id])
    assert (waiting_run, step) == (run_id, "gpu_step")
    assert "pool 'gpu' limit 0 blocks every step of the pool for ever" in message
    assert "argassets pools --gpu 1" in message


def test_a_run_queued_behind_a_full_tag_limit_says_so_in_its_log() -> None:
    overrides = {
        "run_coordinator": {
            **COORDINATOR,
            "config": {"tag_concurrency_limits": [{"key": POOL_TAG, "value": "gpu", "limit": 1}]},
        }
    }
    with dg.instance_for_test(overrides=overrides) as instance:
        running = submitted(instance, {POOL_TAG: "gpu"}, None)
        instance.handle_run_event(  # the first run has started
            running.run_id,
            dg.DagsterEvent(event_type_value=dg.DagsterEventType.RUN_START.value, job_name=running.job_name),
        )
        assert instance.get_run_by_id(running.run_id).status == dg.DagsterRunStatus.STARTED
        queued = submitted(instance, {POOL_TAG: "gpu"}, None)
        messages = [e.message for e in instance.all_logs(queued.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)]
        assert any(
            m.startswith(
                f"queued: at most 1 run(s) tagged {POOL_TAG}=gpu run at a time (in progress: {running.run_id[:8]})"
            )
            for m in messages
        ), messages
        alone = submitted(instance, {"other": "x"}, None)
        assert not [e for e in instance.all_logs(alone.run_id) if (e.message or "").startswith("queued: ")]
