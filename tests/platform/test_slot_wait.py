"""A run whose step waits for a pool slot sleeps between claims (argassets/platform/operations/slot_wait.py).

Counted, not timed: how often the executor's plan loop asks Dagster for the next steps while the
only slot of the ``gpu`` pool is held for 1 s, in process (``argassets`` commands) and with the
multiprocess executor (runs launched from the UI). Spinning, it asks hundreds of thousands of
times; asleep between claims, about once per claim.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import dagster as dg
import pytest
from dagster._core.execution.plan.active import ActiveExecution

from argassets.platform.operations import slot_wait


@dg.asset(pool="gpu")
def gpu_step() -> int:
    """A step of the gpu pool."""
    return 1


def gpu_job() -> dg.JobDefinition:
    """The step as a job of the multiprocess executor (the UI's run workers' default)."""
    job = dg.define_asset_job("gpu_job", executor_def=dg.multiprocess_executor)
    return dg.Definitions(assets=[gpu_step], jobs=[job]).resolve_job_def("gpu_job")


def _count_turns(monkeypatch: pytest.MonkeyPatch, *, fixed: bool) -> list[int]:
    """Count the calls of Dagster's own step selection, with the fix applied or Dagster as shipped."""
    turns = [0]
    dagster_own = slot_wait.DAGSTER_GET_STEPS

    def counted(self: ActiveExecution, limit: int | None = None) -> Sequence[Any]:
        turns[0] += 1
        return dagster_own(self, limit)

    monkeypatch.setattr(ActiveExecution, "get_steps_to_execute", counted)  # undone after the test
    if fixed:
        monkeypatch.setattr(slot_wait, "DAGSTER_GET_STEPS", counted)
        slot_wait.sleep_between_slot_claims()
    return turns


def _run_while_the_slot_is_held(instance: dg.DagsterInstance, multiprocess: bool) -> None:
    storage = instance.event_log_storage
    storage.set_concurrency_slots("gpu", 1)
    storage.claim_concurrency_slot("gpu", "another-run", "another-step")
    threading.Timer(1.0, storage.free_concurrency_slots_for_run, ["another-run"]).start()
    started = time.monotonic()
    if multiprocess:
        with dg.execute_job(dg.reconstructable(gpu_job), instance=instance) as result:
            assert result.success
    else:
        assert dg.materialize([gpu_step], instance=instance).success
    assert time.monotonic() - started >= 1.0  # it did wait for the slot


@pytest.mark.parametrize("multiprocess", [False, True], ids=["in-process", "multiprocess"])
def test_a_step_waiting_for_a_slot_sleeps_between_claims_where_dagster_spins(
    dagster_instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch, multiprocess: bool
) -> None:
    # The control first: Dagster as shipped spins (if not, it sleeps by itself and slot_wait.py can go).
    shipped = _count_turns(monkeypatch, fixed=False)
    _run_while_the_slot_is_held(dagster_instance, multiprocess)
    assert shipped[0] > 10_000, shipped  # 215,574 in process and 162,494 multiprocess here
    fixed = _count_turns(monkeypatch, fixed=True)
    _run_while_the_slot_is_held(dagster_instance, multiprocess)
    assert fixed[0] < 1_000, fixed  # 2 and 73 here (the multiprocess ones while the step runs)


def test_the_code_location_applies_it() -> None:
    import argassets.definitions  # noqa: F401  (loading the code location applies it)

    assert ActiveExecution.get_steps_to_execute.__module__ == slot_wait.__name__
