"""A kill blocks nothing and a signal stops every command; no secret is stored (issue 21, parts 3-5).

Real processes on a real ``DAGSTER_HOME`` (``deploy/local/dagster.yaml``: the judging step holds a
slot of the ``gpu`` pool, limit 1), judging the sample corpus through the ``openai`` backend
against a local endpoint (``FakeFleet``):

- a ``dagster asset materialize`` SIGKILLed while it holds the slot is found by the next command
  (the code location's load), marked failed and its slot freed: the next run of the same
  partition completes;
- ``argassets materialize`` / ``backfill`` / ``run-default``, waiting for a slot another run holds,
  stop within 15 s on SIGTERM or SIGINT and mark their run failed;
- credentials planted in the endpoint URL and the API key appear nowhere in ``DAGSTER_HOME``, the
  DuckDB file, the cache or the captured output, after a failing and a succeeding run.

The judge's scope is the sample's zero-shot prompts (105 x 3 runs = 315 requests, a third of the
whole sample): none of these properties depends on the size, and the kill still lands mid-partition
(after 4 requests, with at least 7 s of the endpoint's 0.05 s answers, two at a time, still to come;
the killed run is asserted still ``STARTED``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from tests.platform.test_deploy_fleet import FakeFleet

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "data" / "sample"
MODEL = "fleet-judge"
KEY = "sk-argassets-KEY-SECRET-4242"
URL_SECRET = "sk-URLSECRET456"
REGISTRY = f"""
[[models]]
name = "{MODEL}"
backend = "openai"
studies = ["argument_quality"]
model_id = "fake/judge-7b"
base_url_env = "FAKE_FLEET_URL"
api_key_env = "FAKE_FLEET_KEY"
max_concurrency = 2
scope.argument_quality = {{ strategies = ["zero"] }}
"""
INPUTS = "webis_arguments,webis_expert_comparisons,aq_few_shot_examples,aq_prompts"
MATERIALIZE = ["dagster", "asset", "materialize", "-m", "argassets.definitions", "--select", "aq_judgments"]

pytestmark = pytest.mark.slow


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGASSETS_", "DAGSTER_"))}
    env.update(
        DAGSTER_HOME=str(folder / "home"),
        ARGASSETS_DUCKDB=str(folder / "argassets.duckdb"),
        ARGASSETS_CACHE=str(folder / "cache.sqlite"),
        ARGASSETS_DATA_DIR=str(SAMPLE),
        ARGASSETS_MODELS=str(folder / "models.toml"),
        ARGASSETS_AUTOMATION="off",
        FAKE_FLEET_KEY=KEY,
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
    )
    return env


def _run(command: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / command[0]), *command[1:]],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home whose partition exists and whose Study A inputs are materialised (copied by each test)."""
    folder = tmp_path_factory.mktemp("prepared")
    (folder / "home").mkdir()
    shutil.copy(ROOT / "deploy" / "local" / "dagster.yaml", folder / "home" / "dagster.yaml")
    (folder / "models.toml").write_text(REGISTRY, encoding="utf-8")
    env = _env(folder)
    synced = _run(["argassets", "partitions", "sync"], env)
    assert synced.returncode == 0, synced.stderr
    inputs = _run(["dagster", "asset", "materialize", "-m", "argassets.definitions", "--select", INPUTS], env)
    assert inputs.returncode == 0, inputs.stdout[-3000:]
    return folder


@pytest.fixture()
def folder(prepared: Path, tmp_path: Path) -> Path:
    target = tmp_path / "work"
    shutil.copytree(prepared, target)
    return target


@pytest.fixture()
def instance(folder: Path) -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.from_config(str(folder / "home")) as instance:
        yield instance


def _partition_runs(instance: dg.DagsterInstance) -> list[dg.DagsterRun]:
    return [r for r in instance.get_runs() if r.tags.get("dagster/partition") == MODEL]


def _wait(predicate, timeout_s: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting until {what}:\n{log.read_text()[-3000:]}")


# --- 3. a SIGKILLed run blocks nothing ---------------------------------------------------------


def test_a_sigkilled_dagster_run_is_failed_and_the_next_run_of_its_partition_completes(
    folder: Path, instance: dg.DagsterInstance
) -> None:
    env = _env(folder)
    with FakeFleet(api_key=KEY, delay_s=0.05) as fleet:
        env["FAKE_FLEET_URL"] = fleet.base_url
        first_log = folder / "first.log"
        first = _start([*MATERIALIZE, "--partition", MODEL], env, first_log)
        storage = instance.event_log_storage
        _wait(
            lambda: bool(storage.get_concurrency_info("gpu").claimed_slots) and len(fleet.requests) >= 4,
            240,
            "the run holds the gpu slot and judges",
            first_log,
        )
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        [killed] = _partition_runs(instance)
        assert killed.status == dg.DagsterRunStatus.STARTED  # killed without a trace
        assert storage.get_concurrency_info("gpu").claimed_slots  # and still holding its slot

        second = _run([*MATERIALIZE, "--partition", MODEL], env, timeout=400)
    assert second.returncode == 0, second.stdout[-3000:]
    assert f"marked failed: run {killed.run_id}" in second.stdout + second.stderr
    statuses = {r.run_id: r.status for r in _partition_runs(instance)}
    assert statuses.pop(killed.run_id) == dg.DagsterRunStatus.FAILURE
    assert list(statuses.values()) == [dg.DagsterRunStatus.SUCCESS]
    [failure] = instance.all_logs(killed.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
    assert "is gone (killed or crashed)" in failure.message
    assert not storage.get_concurrency_info("gpu").claimed_slots


# --- 4. every command stops on a signal, also while it waits for a pool slot ---------------------


@pytest.mark.parametrize(
    ("command", "sig"),
    [
        (["argassets", "materialize", MODEL], signal.SIGTERM),
        (["argassets", "backfill", "--partitions", MODEL], signal.SIGINT),
        (["argassets", "run-default", "--models", MODEL], signal.SIGTERM),
    ],
    ids=["materialize-sigterm", "backfill-sigint", "run-default-sigterm"],
)
def test_a_command_waiting_for_a_pool_slot_stops_on_a_signal_within_15_s(
    folder: Path, instance: dg.DagsterInstance, command: list[str], sig: signal.Signals
) -> None:
    storage = instance.event_log_storage
    storage.set_concurrency_slots("gpu", 1)
    # Another (live) holder of the only slot: the command's judging step has to wait.
    storage.claim_concurrency_slot("gpu", "another-run", "another-step")
    env = {**_env(folder), "FAKE_FLEET_URL": "http://127.0.0.1:9/v1"}
    log = folder / "command.log"
    process = _start(command, env, log)

    def waiting() -> bool:
        runs = [r for r in _partition_runs(instance) if r.status == dg.DagsterRunStatus.STARTED]
        pending = storage.get_concurrency_info("gpu").pending_steps
        return bool(runs) and any(step.run_id == runs[0].run_id for step in pending)

    _wait(waiting, 240, "the judging step waits for the gpu slot", log)
    # Nothing waits in silence: the terminal says what holds the step and how to unblock it.
    said = "waits for a slot of pool 'gpu' (limit 1, in use by run another- step another-step)"
    _wait(
        lambda: any(
            line.startswith("argassets: waiting: run ") and said in line for line in log.read_text().splitlines()
        ),
        30,
        "the command says what it waits for",
        log,
    )
    time.sleep(1.0)
    signalled = time.monotonic()
    os.kill(process.pid, sig)
    try:
        returncode = process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"{' '.join(command)} ignored {sig.name} for 15 s:\n{log.read_text()[-3000:]}")
    stopped_in = time.monotonic() - signalled
    assert returncode == 128 + sig, log.read_text()[-3000:]
    [run] = _partition_runs(instance)
    assert run.status == dg.DagsterRunStatus.FAILURE
    [failure] = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
    assert f"stopped by {sig.name}" in failure.message
    info = storage.get_concurrency_info("gpu")
    assert not any(step.run_id == run.run_id for step in info.pending_steps)
    assert [slot.run_id for slot in info.claimed_slots] == ["another-run"]
    print(f"{' '.join(command)}: stopped {stopped_in:.1f} s after {sig.name}")  # noqa: T201


# --- 5. no secret stored -------------------------------------------------------------------------


def test_no_secret_from_the_endpoint_url_or_key_is_stored_or_printed(
    folder: Path, instance: dg.DagsterInstance
) -> None:
    env = _env(folder)
    with FakeFleet(api_key=KEY) as fleet:
        port = fleet.base_url.split(":")[2].split("/")[0]
        # Credentials in the URL: sent as basic auth, which this endpoint rejects: a failing run.
        env["FAKE_FLEET_URL"] = f"http://user:{URL_SECRET}@127.0.0.1:{port}/v1"
        failing = _run(["argassets", "materialize", MODEL], env)
        # The same partition with the key alone: a succeeding run.
        env["FAKE_FLEET_URL"] = fleet.base_url
        succeeding = _run([*MATERIALIZE, "--partition", MODEL], env)
    assert failing.returncode == 1, failing.stdout[-3000:]
    assert "rejected with HTTP 401" in failing.stdout + failing.stderr
    assert succeeding.returncode == 0, succeeding.stdout[-3000:]
    statuses = sorted(r.status.value for r in _partition_runs(instance))
    assert statuses == ["FAILURE", "SUCCESS"]

    captured = failing.stdout + failing.stderr + succeeding.stdout + succeeding.stderr
    # The home, the reader file, the runs' store, the Parquet tables and the cache: every file.
    searched = sorted(folder.rglob("*"))
    files = [path for path in searched if path.is_file()]
    assert any(path.name.endswith(".db") for path in files), "the run history was searched"
    for secret in (URL_SECRET, KEY):
        assert secret not in captured
        leaked = [str(path) for path in files if secret.encode() in path.read_bytes()]
        assert not leaked, f"{secret} stored in {leaked}"
