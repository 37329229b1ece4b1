"""A run whose steps wait for a pool slot sleeps until the next claim instead of spinning a core (Dagster 1.13).

Dagster 1.13.27 never sleeps while a step waits for a slot: the in-process plan loop sleeps
``interval_to_next_pending_claim_check()``, which returns ``min(0, ...)``, and the multiprocess
executor's loop has no sleep at all. A run waiting for the ``gpu`` pool (a second ``argassets
materialize``, a run launched from the UI) therefore spins a core, half of a 2-core machine's, which
the running judge needs. A claim is only retried once its backoff has passed, so sleeping until then
(at most 1 s, to stay responsive to interrupts) changes nothing but the CPU spent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from dagster._core.execution.plan.active import ActiveExecution
from dagster._core.execution.plan.instance_concurrency_context import InstanceConcurrencyContext
from dagster._core.execution.plan.step import ExecutionStep

__all__ = ["DAGSTER_GET_STEPS", "MAX_SLEEP_S", "seconds_to_next_claim", "sleep_between_slot_claims"]

#: Dagster's own method, kept for the wrapper and for the test that shows the loop spins without it.
DAGSTER_GET_STEPS = ActiveExecution.get_steps_to_execute
#: The longest sleep: a signal or a freed slot is acted on within it.
MAX_SLEEP_S = 1.0


def seconds_to_next_claim(context: InstanceConcurrencyContext) -> float:
    """Seconds until the earliest pending claim of ``context`` is retried (0 when one is due or none waits)."""
    timeouts = context._pending_timeouts  # private in Dagster: when each waiting step's claim is retried
    return max(0.0, min(timeouts.values()) - time.time()) if timeouts else 0.0


def _steps_or_sleep(self: ActiveExecution, limit: int | None = None) -> Sequence[ExecutionStep]:
    """Dagster's next steps; when there are none, nothing runs and a claim waits, sleep until it is retried."""
    steps = DAGSTER_GET_STEPS(self, limit)
    waiting = self._instance_concurrency_context
    if not steps and not self._in_flight and waiting is not None and waiting.has_pending_claims():
        time.sleep(min(MAX_SLEEP_S, seconds_to_next_claim(waiting)))
    return steps


def sleep_between_slot_claims() -> None:
    """Make both executors' plan loops sleep between claims (idempotent; every process running steps calls it)."""
    ActiveExecution.get_steps_to_execute = _steps_or_sleep  # type: ignore[method-assign]
