"""Runs whose process is gone are failed and their pool slots freed; a signalled run stops."""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import dagster as dg

from argassets.platform.operations.slot_wait import sleep_between_slot_claims
from argassets.platform.operations.waiting import WaitReporter

PID_TAG = "argassets/pid"
HOST_TAG = "argassets/host"
#: Latest events of a run read to learn the pids of the processes running its steps.
EVENTS_SCANNED = 50
ACTIVE = [dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.CANCELING]

T = TypeVar("T")


def is_local_instance(instance: dg.DagsterInstance) -> bool:
    """Whether runs of this instance run on this machine (SQLite run storage): pids mean something."""
    from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage

    return isinstance(instance.run_storage, SqliteRunStorage)


def process_alive(pid: int) -> bool:
    """Whether a process with this pid exists (one we may not signal counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run_pids(instance: dg.DagsterInstance, run: dg.DagsterRun) -> set[int]:
    """The pids of the processes that ran ``run``: its ``argassets/pid`` tag, else the pids of its
    run-start and step events (those are written by the run's own processes; queue and launch
    events come from the daemon or the webserver, which outlive the run)."""
    if run.tags.get(PID_TAG):
        return {int(run.tags[PID_TAG])}
    started = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.RUN_START, limit=1).records
    latest = instance.get_records_for_run(run.run_id, limit=EVENTS_SCANNED, ascending=False).records
    pids: set[int] = set()
    for record in [*started, *latest]:
        event = record.event_log_entry.dagster_event
        if event is None or not event.pid:
            continue
        if event.event_type == dg.DagsterEventType.RUN_START or event.step_key:
            pids.add(int(event.pid))
    return pids


def orphan_reason(instance: dg.DagsterInstance, run: dg.DagsterRun, host: str) -> str | None:
    """Why ``run`` is an orphan, or ``None`` when it is alive or cannot be told."""
    if run.tags.get(HOST_TAG, host) != host:
        return None
    pids = run_pids(instance, run)
    if not pids or any(process_alive(pid) for pid in pids):
        return None
    listed = ", ".join(str(pid) for pid in sorted(pids))
    return f"the process running it (pid {listed}) is gone (killed or crashed)"


def free_slots(instance: dg.DagsterInstance, run_id: str) -> None:
    """Free the pool slots (claimed or waited for) of a run that will not run on."""
    storage = instance.event_log_storage
    if storage.supports_global_concurrency_limits:
        storage.free_concurrency_slots_for_run(run_id)


def fail_orphaned_runs(instance: dg.DagsterInstance) -> list[tuple[dg.DagsterRun, str]]:
    """Mark every orphaned run of a local instance failed and free its slots; returns them with the reason."""
    if not is_local_instance(instance):
        return []
    host = socket.gethostname()
    failed = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=ACTIVE)):
        run = record.dagster_run
        reason = orphan_reason(instance, run, host)
        if reason is None:
            continue
        instance.report_run_failed(run, reason)
        free_slots(instance, run.run_id)
        failed.append((run, reason))
    return failed


def fail_runs_of_stopped_processes(instance: dg.DagsterInstance, stopped: set[int], reason: str) -> list[str]:
    """After a local ``dagster dev`` and every process it started were stopped: mark its active runs failed.

    A run is one of them when it carries no ``argassets/pid`` (the CLI's runs are another
    process's) and its processes, if any wrote events yet, are among ``stopped``; a run still
    ``STARTING`` has written none. (Pids alone cannot tell: a killed worker may linger as a zombie
    that the container's init never reaps.) Returns the run ids.
    """
    if not is_local_instance(instance):
        return []
    ids = []
    for record in instance.get_run_records(dg.RunsFilter(statuses=ACTIVE)):
        run = record.dagster_run
        if run.tags.get(PID_TAG) or not run_pids(instance, run) <= stopped:
            continue
        instance.report_run_failed(run, reason)
        free_slots(instance, run.run_id)
        ids.append(run.run_id)
    return ids


def recover_at_load() -> None:
    """Fail orphaned runs of ``$DAGSTER_HOME`` when a process loads the code location.

    Housekeeping must never stop the code location from loading: a failure is printed, not raised.
    """
    if not os.environ.get("DAGSTER_HOME") or os.environ.get("ARGASSETS_RECOVER_AT_LOAD") == "off":
        return
    try:
        with dg.DagsterInstance.get() as instance:
            for run, reason in fail_orphaned_runs(instance):
                print(f"argassets: marked failed: run {run.run_id} ({run.job_name}); {reason}", flush=True)
    except Exception as exc:  # reported, and the code location still loads
        print(f"argassets: could not check for orphaned runs: {exc}", flush=True)


# --- stopping on SIGTERM / SIGINT ---------------------------------------------------------------


class Stopped(Exception):
    """The command received SIGTERM or SIGINT; its runs were marked failed."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def fail_runs_of_this_process(instance: dg.DagsterInstance, reason: str) -> list[str]:
    """Mark the active runs this process started (``argassets/pid``) failed and free their slots."""
    pid, ids = str(os.getpid()), []
    for record in instance.get_run_records(dg.RunsFilter(statuses=[*ACTIVE, dg.DagsterRunStatus.NOT_STARTED])):
        run = record.dagster_run
        if run.tags.get(PID_TAG) == pid:
            instance.report_run_failed(run, reason)
            free_slots(instance, run.run_id)
            ids.append(run.run_id)
    return ids


@contextmanager
def signals_recorded() -> Iterator[list[int]]:
    """SIGTERM and SIGINT recorded (in the returned list) instead of acted on; restored after."""
    received: list[int] = []
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda signum, _frame: received.append(signum))
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def say_on_terminal(line: str) -> None:
    """Tell the terminal (``argassets: <line>``), at once."""
    print(f"argassets: {line}", flush=True)  # noqa: T201


def run_stoppably(
    execute: Callable[[], T],
    instance: dg.DagsterInstance,
    poll_s: float = 0.2,
    say: Callable[[str], None] = say_on_terminal,
) -> T:
    """``execute()`` in a worker thread; on SIGTERM or SIGINT, fail this process's runs and raise :class:`Stopped`.

    While it runs, what a run waits for (a pool slot, the run queue) is said through ``say``.

    The worker is a daemon thread: the caller exits the process after :class:`Stopped`, and the
    partition being written, if any, keeps its old rows or gets the new ones (writes are atomic).
    """
    sleep_between_slot_claims()
    if threading.current_thread() is not threading.main_thread():
        return execute()
    values: list[T] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            values.append(execute())
        except BaseException as exc:  # re-raised in the main thread
            errors.append(exc)

    worker = threading.Thread(target=work, name="argassets-run", daemon=True)
    waits = WaitReporter(instance, say=say, pid_tag=PID_TAG)
    with signals_recorded() as received:
        worker.start()
        while worker.is_alive() and not received:
            worker.join(poll_s)
            waits.poll()
        if received:
            name = signal.Signals(received[0]).name
            fail_runs_of_this_process(instance, f"argassets was stopped by {name}")
            raise Stopped(received[0])
    if errors:
        raise errors[0]
    return values[0]
