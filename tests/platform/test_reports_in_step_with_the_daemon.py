"""The same partition launched twice: the daemon's automation leaves every report fresh (issue 20).

A real ``dagster-daemon`` on an isolated ``DAGSTER_HOME`` (the shipped local instance: its queue,
the ``gpu`` pool, the one-report-run-per-study limit), the real code location on the embedded
sample, only Study A's reports sensor running (every 5 s). The ``longer-wins`` partition of
``aq_judgments`` is launched twice at once, as from the UI (the second waits for the ``gpu``
pool). Once the daemon has settled: every run succeeded, the study's report runs never overlapped,
every report is newer than each of its inputs, and Dagster's own stale status calls none of them
stale. Before the fix, overlapping report runs left ``aq_bt_scores`` built from a copy of
``aq_majority_votes`` that another report run had replaced ("Upstream data").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.loader import LoadingContextForTest
from dagster._core.storage.dagster_run import NOT_FINISHED_STATUSES, RunRecord

from argassets.cli.common import sync_partitions
from argassets.definitions import defs
from argassets.platform.operations.automation import report_groups
from argassets.platform.operations.run_tags import REPORTS_TAG
from argassets.platform.registry.entries import load_registry
from sensors.layout import code_location_layout
from tests.cli_home import cli_environment

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
STUDY = "argument_quality"
PARTITION = "longer-wins"
INTERVAL_S = 5
#: The daemon has settled once nothing ran for this long (several of the sensor's ticks).
QUIET_S = 4 * INTERVAL_S
SETTLE_TIMEOUT_S = 600

REGISTRY = f"""
[[models]]
name = "{PARTITION}"
backend = "longer-wins"
studies = ["{STUDY}"]
"""

pytestmark = [pytest.mark.slow, pytest.mark.concurrency, pytest.mark.timeout(900)]


def _cli(env: dict[str, str], *command: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / command[0]), *command[1:]],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finish(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        out, _ = process.communicate(timeout=300)
        assert process.returncode == 0, f"{process.args}:\n{out[-3000:]}"


def _settled_runs(instance: dg.DagsterInstance, daemon: subprocess.Popen, log: Path) -> list[RunRecord]:
    """The instance's runs once none is pending and none ended for :data:`QUIET_S` seconds."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            pytest.fail(f"dagster-daemon exited:\n{log.read_text(errors='replace')[-4000:]}")
        records = list(instance.get_run_records())
        pending = [r for r in records if r.dagster_run.status in NOT_FINISHED_STATUSES]
        reports = [r for r in records if r.dagster_run.tags.get(REPORTS_TAG) == STUDY]
        last_end = max((r.end_time or 0.0 for r in records), default=0.0)
        if reports and not pending and time.time() - last_end > QUIET_S:
            return records
        time.sleep(2)
    pytest.fail(f"the daemon did not settle in {SETTLE_TIMEOUT_S} s:\n{log.read_text(errors='replace')[-4000:]}")


def _stop_everything_of(home: Path, daemon: subprocess.Popen) -> None:
    """Stop the daemon, then every process it left that runs on ``home`` (code servers, run workers)."""
    os.killpg(daemon.pid, signal.SIGTERM)
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(daemon.pid, signal.SIGKILL)
        daemon.wait(timeout=10)
    marker = f"DAGSTER_HOME={home}".encode()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker in (proc / "environ").read_bytes().split(b"\0"):
                os.kill(int(proc.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


@pytest.fixture()
def home(tmp_path: Path, study_a_inputs_home: Path) -> Iterator[tuple[dict[str, str], dg.DagsterInstance]]:
    # Steps in the run's process: the runs' import of the code location per step is not under test.
    # The study's inputs come materialised (a copy of the session's home, by `dagster asset materialize`).
    env = cli_environment(
        tmp_path,
        REGISTRY,
        inputs=study_a_inputs_home,
        ARGASSETS_AUTOMATION_INTERVAL_S=str(INTERVAL_S),
        ARGASSETS_EXECUTOR="in_process",
    )
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        sync_partitions(instance, load_registry(tmp_path / "models.toml"))
        yield env, instance


def test_a_partition_launched_twice_leaves_every_report_fresh(home, tmp_path: Path) -> None:
    env, instance = home
    layout = code_location_layout()
    reports = report_groups(layout)[STUDY]
    workspace = ("-w", str(ROOT / "workspace.yaml"))
    assert all(instance.get_latest_materialization_event(key) for key in layout.inputs_by_study[STUDY])
    # Only Study A's reports sensor running (the others stay stopped).
    _finish([_cli(env, "dagster", "sensor", "start", *workspace, f"{STUDY}_reports_sensor")])
    log = tmp_path / "daemon.log"
    daemon = subprocess.Popen(
        [str(BIN / "dagster-daemon"), "run", *workspace],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        tags = json.dumps({"dagster/partition": PARTITION})
        # Twice at once, as two clicks in the UI: both queued, the second judging step waits for the pool.
        _finish(
            [_cli(env, "dagster", "job", "launch", *workspace, "-j", "aq_judgments_job", "--tags", tags) for _ in "12"]
        )
        records = _settled_runs(instance, daemon, log)
    finally:
        _stop_everything_of(Path(env["DAGSTER_HOME"]), daemon)

    failed = {
        r.dagster_run.run_id: r.dagster_run.status
        for r in records
        if r.dagster_run.status != dg.DagsterRunStatus.SUCCESS
    }
    assert not failed, failed
    judging = [r for r in records if r.dagster_run.tags.get("dagster/partition") == PARTITION]
    assert len(judging) == 2
    # Launched overlapping: the second was created before the first ended (it then waited in the queue).
    assert max(r.create_timestamp.timestamp() for r in judging) < min(r.end_time or 0.0 for r in judging)
    report_runs = sorted(
        (r for r in records if r.dagster_run.tags.get(REPORTS_TAG) == STUDY), key=lambda r: r.start_time or 0
    )
    for before, after in zip(report_runs, report_runs[1:], strict=False):
        assert after.start_time >= before.end_time, "two report runs of the study overlapped"

    latest = {
        key: instance.fetch_materializations(key, limit=1).records[0].storage_id
        for key in {*reports, *(parent for key in reports for parent in layout.parents[key])}
    }
    for key in reports:
        for parent in layout.parents[key]:
            assert latest[key] > latest[parent], f"{key.to_user_string()} is older than {parent.to_user_string()}"
    resolver = CachingStaleStatusResolver(instance, defs.resolve_asset_graph(), LoadingContextForTest(instance))
    stale = {
        key.to_user_string(): resolver.get_stale_causes(key)
        for key in reports
        if resolver.get_status(key) != StaleStatus.FRESH
    }
    assert not stale, stale
    spans = ", ".join(f"{r.end_time - r.start_time:.0f} s" for r in report_runs)
    print(f"{len(report_runs)} report runs of {STUDY} ({spans}), one after the other; every report fresh")
