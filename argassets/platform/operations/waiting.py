"""Nothing waits in silence: a run held by a pool or the run queue says what it waits for.

Dagster records a step waiting for a concurrency slot only as a DEBUG line ("Step blocked by limit
for pool gpu"), and a queued run says nothing at all where it was launched. Here the waits are
read back from the instance (the pool's pending steps and holders, the queue's tag limits) and
put into words: what holds the run, and what unblocks it. The CLI prints them while it waits
(:class:`WaitReporter`, from :func:`~argassets.platform.operations.run_recovery.run_stoppably`)
and writes them into the run's log (an engine event at INFO, in the UI's run view); the run
queue writes its own when it queues a run behind a limit (``argassets/run_queue.py``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dagster as dg

__all__ = ["WaitReporter", "pool_limit_problem", "pool_waits", "queue_wait"]


def _set_limit(pool: str, limit: int) -> str:
    command = f"dagster instance concurrency set {pool} {limit}"
    return f"argassets pools --gpu {limit} (or {command})" if pool == "gpu" else command


def _unblock(pool: str, limit: int) -> str:
    return (
        f"it starts when a slot is free; to allow more at once: {_set_limit(pool, limit + 1)}; "
        "a slot held by a run whose process died is freed by argassets runs mark-orphans"
    )


def pool_limit_problem(pool: str, limit: int) -> str | None:
    """Why a pool limit cannot be right (0 or less blocks every step of the pool for ever), or ``None``."""
    if limit >= 1:
        return None
    return (
        f"pool '{pool}' limit {limit} blocks every step of the pool for ever (no slot is ever free); "
        f"use 1 or more: {_set_limit(pool, 1)}; to hold {pool} work back, stop launching it instead"
    )


def _short(run_id: str) -> str:
    return run_id[:8]


def pool_waits(instance: dg.DagsterInstance, run_ids: Sequence[str]) -> list[tuple[str, str, str]]:
    """``(run_id, step_key, message)`` for every step of ``run_ids`` waiting for a pool slot."""
    storage = instance.event_log_storage
    wanted = set(run_ids)
    waits = []
    for pool in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(pool)
        for step in info.pending_steps:
            if step.run_id not in wanted or step.assigned_timestamp is not None:
                continue
            problem = pool_limit_problem(pool, info.slot_count)
            holders = ", ".join(f"run {_short(s.run_id)} step {s.step_key}" for s in info.claimed_slots)
            held = f"in use by {holders}" if holders else "no slot in use"
            message = (
                f"run {_short(step.run_id)} step {step.step_key} waits for a slot of pool '{pool}' "
                f"(limit {info.slot_count}, {held}); " + (problem or _unblock(pool, info.slot_count))
            )
            waits.append((step.run_id, step.step_key, message))
    return waits


def queue_wait(instance: dg.DagsterInstance, run: dg.DagsterRun, limits: Sequence[Mapping[str, Any]]) -> str | None:
    """What a queued run waits behind: the first tag limit its tags meet that is already full."""
    in_progress = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]
    for limit in limits:
        key, value = str(limit.get("key")), limit.get("value")
        if key not in run.tags or (isinstance(value, str) and run.tags[key] != value):
            continue
        tag_value = run.tags[key]
        running = instance.get_runs(dg.RunsFilter(statuses=in_progress, tags={key: tag_value}))
        if len(running) >= int(limit.get("limit", 0)):
            names = ", ".join(_short(r.run_id) for r in running) or "none"
            return (
                f"queued: at most {limit.get('limit')} run(s) tagged {key}={tag_value} run at a time "
                f"(in progress: {names}); it starts when one of them ends. The limits are the run queue's "
                "tag_concurrency_limits in $DAGSTER_HOME/dagster.yaml; the daemon (argassets ui) must run"
            )
    return None


class WaitReporter:
    """Says, at the terminal and in the run's log, what this process's runs wait for.

    ``poll()`` is cheap to call often: it looks at the instance every ``interval_s`` and repeats a
    wait every ``repeat_s`` while it lasts.
    """

    def __init__(
        self,
        instance: dg.DagsterInstance,
        say: Callable[[str], None],
        pid_tag: str,
        interval_s: float = 2.0,
        repeat_s: float = 60.0,
    ):
        self.instance = instance
        self.say = say
        self.pid_tag = pid_tag
        self.interval_s = interval_s
        self.repeat_s = repeat_s
        self._checked = 0.0
        self._said: dict[str, float] = {}
        self._failed = False

    def _my_runs(self) -> list[dg.DagsterRun]:
        runs = self.instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
        return [run for run in runs if run.tags.get(self.pid_tag) == str(os.getpid())]

    def poll(self) -> None:
        """Report the waits found now (never raises: reporting must not stop the run it reports on)."""
        now = time.monotonic()
        if now - self._checked < self.interval_s:
            return
        self._checked = now
        try:
            self._report(now)
        except Exception as exc:  # noqa: BLE001 (a busy instance database; said once)
            if not self._failed:
                self._failed = True
                self.say(f"cannot tell what the run waits for ({type(exc).__name__}: {exc})")

    def _report(self, now: float) -> None:
        runs = {run.run_id: run for run in self._my_runs()}
        if not runs:
            return
        for run_id, step_key, message in pool_waits(self.instance, list(runs)):
            key = f"{run_id}/{step_key}"
            if now - self._said.get(key, -self.repeat_s) < self.repeat_s:
                continue
            self._said[key] = now
            self.say(f"waiting: {message}")
            self.instance.report_engine_event(f"Waiting: {message}", runs[run_id], step_key=step_key)
