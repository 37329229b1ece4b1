"""A step waiting for a pool slot sleeps until its next claim instead of spinning a core (Dagster 1.13).

Dagster's in-process plan loop sleeps ``interval_to_next_pending_claim_check()`` seconds between
tries; Dagster 1.13.27 returns ``min(0, ...)`` there, never positive, so a run whose step waits
for a slot (another ``argassets materialize`` judging on the ``gpu`` pool) spins a core, which on a
2-core machine is half of what the running judge has. The claim itself is only retried once its
backoff has passed, so sleeping until then changes nothing but the CPU spent.
"""

from __future__ import annotations

import time

from dagster._core.execution.plan.instance_concurrency_context import InstanceConcurrencyContext

__all__ = ["DAGSTER_CLAIM_INTERVAL", "seconds_to_next_claim", "sleep_between_slot_claims"]

#: Dagster's own method, kept for the test that shows it spins.
DAGSTER_CLAIM_INTERVAL = InstanceConcurrencyContext.interval_to_next_pending_claim_check


def seconds_to_next_claim(context: InstanceConcurrencyContext) -> float:
    """Seconds until the earliest pending claim of ``context`` is retried (0 when one is due or none waits)."""
    timeouts = context._pending_timeouts  # private in Dagster: when each waiting step's claim is retried
    if not context.has_pending_claims() or not timeouts:
        return 0.0
    return max(0.0, min(timeouts.values()) - time.time())


def sleep_between_slot_claims() -> None:
    """Make Dagster's plan loop sleep until the next claim (idempotent; every process that runs steps calls it)."""
    InstanceConcurrencyContext.interval_to_next_pending_claim_check = seconds_to_next_claim  # type: ignore[method-assign, assignment]
