"""A run whose step waits for a pool slot sleeps between claims (argassets/platform/operations/slot_wait.py).

Counted, not timed: how often Dagster's plan loop asks for the next step while the only slot of
the ``gpu`` pool is held for 2 s. Spinning, it asks hundreds of thousands of times; asleep between
claims, once per claim.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import dagster as dg
import pytest
from dagster._core.execution.plan.active import ActiveExecution
from dagster._core.execution.plan.instance_concurrency_context import InstanceConcurrencyContext

from argassets.platform.operations import slot_wait


@dg.asset(pool="gpu")
def gpu_step() -> int:
    """A step of the gpu pool."""
    return 1


@pytest.fixture()
def dagster_loop_as_shipped(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Dagster's own claim interval (undone at the end), and a count of the plan loop's turns."""
    monkeypatch.setattr(
        InstanceConcurrencyContext, "interval_to_next_pending_claim_check", slot_wait.DAGSTER_CLAIM_INTERVAL
    )
    turns = [0]
    original = ActiveExecution.get_next_step

    def counted(self: ActiveExecution):  # type: ignore[no-untyped-def]
        turns[0] += 1
        return original(self)

    monkeypatch.setattr(ActiveExecution, "get_next_step", counted)
    yield turns


def _turns_while_the_slot_is_held(instance: dg.DagsterInstance, turns: list[int]) -> int:
    storage = instance.event_log_storage
    storage.set_concurrency_slots("gpu", 1)
    storage.claim_concurrency_slot("gpu", "another-run", "another-step")
    threading.Timer(2.0, storage.free_concurrency_slots_for_run, ["another-run"]).start()
    turns[0] = 0
    started = time.monotonic()
    assert dg.materialize([gpu_step], instance=instance).success
    assert time.monotonic() - started >= 2.0  # it did wait for the slot
    return turns[0]


def test_a_step_waiting_for_a_slot_sleeps_between_claims(
    dagster_instance: dg.DagsterInstance, dagster_loop_as_shipped: list[int]
) -> None:
    slot_wait.sleep_between_slot_claims()
    assert _turns_while_the_slot_is_held(dagster_instance, dagster_loop_as_shipped) < 100  # 4 here


def test_the_control_dagster_as_shipped_spins(
    dagster_instance: dg.DagsterInstance, dagster_loop_as_shipped: list[int]
) -> None:
    # If this fails, Dagster sleeps between claims itself and slot_wait.py can go.
    assert _turns_while_the_slot_is_held(dagster_instance, dagster_loop_as_shipped) > 10_000  # 765,878 in 3 s here


def test_the_code_location_applies_it() -> None:
    import argassets.definitions  # noqa: F401  (loading the code location applies it)

    assert InstanceConcurrencyContext.interval_to_next_pending_claim_check is slot_wait.seconds_to_next_claim
