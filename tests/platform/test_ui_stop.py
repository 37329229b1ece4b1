"""``argassets ui`` stops with every process it started, with a run in flight.

``argassets ui`` (dagster dev: webserver, daemon, code servers, run workers) runs on a free port
with a temporary ``DAGSTER_HOME``. A run of ``aq_judgments_job`` is submitted through the
webserver's GraphQL API and, once the daemon has launched it, the test sends SIGTERM to
``argassets ui`` (or SIGINT to its process group, as Ctrl-C does): within 15 s no process of the
tree is left, and the run is no longer active (marked failed).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dagster as dg
import psutil
import pytest
from dagster_graphql import DagsterGraphQLClient

from tests.cli_home import cli_environment
from tests.platform.test_ui_materialize import REGISTRY, ROOT, free_port, wait_http

BIN = Path(sys.executable).parent
STOP_WITHIN_S = 15
ACTIVE = {dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _environment(tmp: Path) -> dict[str, str]:
    return cli_environment(tmp, REGISTRY, without=("ARGASSETS_", "DAGSTER_", "NEO4J_"))


def _run_status(home: Path, run_id: str) -> dg.DagsterRunStatus | None:
    previous = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.get() as instance:
            run = instance.get_run_by_id(run_id)
            return run.status if run else None
    finally:
        if previous is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = previous


def _wait_until_launched(home: Path, run_id: str, timeout_s: float = 180) -> dg.DagsterRunStatus:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = _run_status(home, run_id)
        if status in ACTIVE:
            return status
        assert status in (dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED), status
        time.sleep(0.3)
    pytest.fail(f"run {run_id} was not launched within {timeout_s} s")


def _running(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running; a zombie has exited (PID 1 of a container may never reap it)."""
    running = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            continue
    return running


def _wait_gone(processes: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout_s
    while _running(processes) and time.monotonic() < deadline:
        time.sleep(0.2)
    return _running(processes)


def _tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


@pytest.fixture(scope="module")
def synced_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``DAGSTER_HOME`` after ``argassets partitions sync`` of :data:`REGISTRY` (run once, copied by each test)."""
    folder = tmp_path_factory.mktemp("synced")
    sync = subprocess.run(
        [str(BIN / "argassets"), "partitions", "sync"],
        cwd=ROOT,
        env=_environment(folder),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert sync.returncode == 0, sync.stdout + sync.stderr
    return folder / "dagster_home"


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT to the group"])
def test_ui_stops_with_every_child_and_its_run_in_flight(stop: str, synced_home: Path, tmp_path: Path) -> None:
    env = _environment(tmp_path)
    shutil.copytree(synced_home, env["DAGSTER_HOME"], dirs_exist_ok=True)
    port = free_port()
    log = tmp_path / "ui.log"
    process = subprocess.Popen(
        [str(BIN / "argassets"), "ui", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    tree: list[psutil.Process] = []
    try:
        wait_http(f"http://127.0.0.1:{port}/server_info", process, log)
        client = DagsterGraphQLClient("127.0.0.1", port_number=port)
        run_id = client.submit_job_execution("aq_judgments_job", tags={"dagster/partition": "random"})
        status = _wait_until_launched(Path(env["DAGSTER_HOME"]), run_id)
        tree = _tree(process.pid)
        assert len(tree) >= 4, f"dagster dev, webserver, daemon and code server expected: {tree}"
        start = time.monotonic()
        if stop == "SIGTERM":
            process.send_signal(signal.SIGTERM)
        else:
            os.killpg(process.pid, signal.SIGINT)
        process_exit = threading.Thread(target=process.wait)  # reap the wrapper, our child
        process_exit.start()
        alive = _wait_gone(tree, STOP_WITHIN_S)
        took = time.monotonic() - start
        assert not alive, (
            f"still running {took:.1f} s after {stop}: {[p.cmdline() for p in alive]}\n{log.read_text()[-3000:]}"
        )
        process_exit.join(timeout=5)
        assert process.returncode == 128 + (signal.SIGTERM if stop == "SIGTERM" else signal.SIGINT)
        after = _run_status(Path(env["DAGSTER_HOME"]), run_id)
        assert after not in ACTIVE, f"run {run_id} (was {status}) left {after}\n{log.read_text()[-3000:]}"
    finally:
        for leftover in _running([*tree, *(_tree(process.pid) if process.poll() is None else [])]):
            leftover.kill()
