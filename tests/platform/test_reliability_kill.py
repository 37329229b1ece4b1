"""Kill a judgments run in the middle of its partition, run it again, and lose nothing.

A real ``dagster asset materialize`` (or ``argassets materialize``) process judges the sample
corpus through the ``openai`` backend against a local counting endpoint (``FakeFleet``). Once some
batches are in the judgment cache and others are in flight, the process group gets SIGTERM, then
SIGKILL if it is still alive (``dagster``), or SIGKILL straight away (``argassets``). Then:

- the run history shows the killed run as failed (Dagster records the interrupt; a run killed
  without a trace is marked by the next ``argassets`` command, which frees its pool slot);
- the second run succeeds and sends exactly the completions the cache did not hold: nothing
  cached is re-sent;
- the partition's table holds every (comparison, dimension, strategy, order, run) exactly once;
- the endpoint's key, set only in the environment, appears in no event, metadata, log or table.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster._serdes import serialize_value

from argassets.platform.judging.interface import messages_sha256, request_seed
from tests.cli_home import cli_environment
from tests.platform.test_deploy_fleet import FakeFleet

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "data" / "sample"
SECRET = "sk-argassets-SECRET-key-4242"
MODEL = "fleet-judge"
SEED = 100

REGISTRY = f"""
[[models]]
name = "{MODEL}"
backend = "openai"
studies = ["argument_quality"]
model_id = "fake/judge-7b"
base_url_env = "FAKE_FLEET_URL"
api_key_env = "FAKE_FLEET_KEY"
max_concurrency = 2
seed = {SEED}
"""

pytestmark = pytest.mark.slow


def _cached(cache: Path) -> set[tuple[str, int]]:
    if not cache.exists():
        return set()
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as con:
            return {
                (sha, int(run))
                for sha, run in con.execute(
                    "SELECT prompt_sha256, run FROM completions WHERE model LIKE ?", (MODEL + "@%",)
                )
            }
    except sqlite3.OperationalError:
        return set()


def _request_keys(fleet: FakeFleet) -> list[tuple[str, int]]:
    with fleet.lock:
        bodies = list(fleet.requests)
    keys = []
    for body in bodies:
        system, user = (m["content"] for m in body["messages"])
        prompt_sha256 = messages_sha256(system, user)
        first_run_seed = request_seed(SEED, prompt_sha256)
        assert first_run_seed is not None
        # The judge draws run r of a prompt with the prompt's own seed + r.
        keys.append((prompt_sha256, int(body["seed"]) - first_run_seed))
    return keys


MATERIALIZE = {
    # Dagster's own command; SIGTERM first, as a job scheduler or Ctrl-C would.
    "dagster": [
        "dagster",
        "asset",
        "materialize",
        "-m",
        "argassets.definitions",
        "--select",
        "aq_judgments",
        "--partition",
        MODEL,
    ],
    # The project's command; killed with SIGKILL straight away (no chance to record anything).
    "argassets": ["argassets", "materialize", MODEL, "--study", "argument_quality"],
}


def _materialize(env: dict[str, str], log: Path, cli: str) -> subprocess.Popen:
    command = MATERIALIZE[cli]
    return subprocess.Popen(
        [str(BIN / command[0]), *command[1:]],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@pytest.mark.parametrize(
    ("cli", "signals"),
    [("dagster", (signal.SIGTERM, signal.SIGKILL)), ("argassets", (signal.SIGKILL,))],
    ids=["dagster-cli-sigterm-then-sigkill", "argassets-cli-sigkill"],
)
def test_killed_judgments_run_resumes_without_loss_duplication_or_resending(
    tmp_path: Path, cli: str, signals: tuple[signal.Signals, ...], study_a_inputs_home: Path
) -> None:
    with FakeFleet(api_key=SECRET, delay_s=0.03) as fleet:
        # The local instance config: the judging step holds a slot of the "gpu" pool (limit 1), so a
        # run killed without a trace would block the next one until it is marked failed. The study's
        # inputs come materialised (a copy of the session's home): only judging is under test.
        env = cli_environment(
            tmp_path, REGISTRY, inputs=study_a_inputs_home, FAKE_FLEET_URL=fleet.base_url, FAKE_FLEET_KEY=SECRET
        )
        home, cache, database = (Path(env[k]) for k in ("DAGSTER_HOME", "ARGASSETS_CACHE", "ARGASSETS_DUCKDB"))
        setup = subprocess.run(
            [str(BIN / "argassets"), "partitions", "sync"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert setup.returncode == 0, setup.stderr

        # 1. Start judging, wait until a few batches are cached and more requests are in flight.
        first_log = tmp_path / "first.log"
        process = _materialize(env, first_log, cli)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            cached = _cached(cache)
            if len(cached) >= 96 and len(fleet.requests) > len(cached):
                break
            assert process.poll() is None, "the run finished before it could be killed:\n" + first_log.read_text()
            time.sleep(0.05)
        else:
            pytest.fail("the run never got going:\n" + first_log.read_text()[-3000:])
        for sig in signals:
            os.killpg(process.pid, sig)
            try:
                process.wait(timeout=20)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            pytest.fail("the run survived SIGKILL")
        time.sleep(1.0)  # let requests the server was still answering finish
        cached_at_kill = _cached(cache)
        sent_before = _request_keys(fleet)
        assert 0 < len(cached_at_kill) < 945, "killed in the middle of the partition"

        # 2. Run it again: it finishes, sending only what the cache lacks.
        second_log = tmp_path / "second.log"
        again = _materialize(env, second_log, cli)
        assert again.wait(timeout=400) == 0, second_log.read_text()[-3000:]
        sent_after = _request_keys(fleet)[len(sent_before) :]

    with duckdb.connect(str(database), read_only=True) as con:
        prompts = con.execute("SELECT count(*) FROM main.aq_prompts").fetchone()[0]
        rows, distinct, valid = con.execute(
            'SELECT count(*), count(DISTINCT (comparison_id, dimension, strategy, "order", run)), '
            "sum(CASE WHEN is_valid THEN 1 ELSE 0 END) FROM main.aq_judgments WHERE judge_model = ?",
            [MODEL],
        ).fetchone()
        table_text = json.dumps(con.execute("SELECT * FROM main.aq_judgments").df().astype(str).values.tolist())
    expected = _cached(cache)
    # Nothing lost, nothing duplicated: every prompt x 3 runs, once, all parsed.
    assert rows == distinct == valid == prompts * 3
    assert len(expected) == len({(sha, run) for sha, run in expected})
    # Nothing cached was sent again; exactly the missing completions were.
    assert not set(sent_after) & cached_at_kill
    assert len(sent_after) == len(set(sent_after)) == len(expected) - len(cached_at_kill)
    # At most the batch in flight at the kill was paid for twice.
    assert len(set(sent_before) - cached_at_kill) <= 2 * 16 * 3

    # The run history tells what happened.
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.get() as instance:
            runs = [r for r in instance.get_runs() if r.tags.get("dagster/partition") == MODEL]
            statuses = sorted(r.status.value for r in runs)
            assert statuses == ["FAILURE", "SUCCESS"], statuses
            failed = next(r for r in runs if r.status == dg.DagsterRunStatus.FAILURE)
            [failure] = instance.all_logs(failed.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
            if cli == "argassets":
                # Killed without a trace: the next `argassets` command found it and marked it.
                assert "is gone (killed or crashed)" in failure.message
                assert "marked failed: run " + failed.run_id in second_log.read_text()
            # No pool slot is left behind by the killed run.
            assert not instance.event_log_storage.get_concurrency_info("gpu").claimed_slots
            # 3. The key never reached events, metadata or logs.
            everything = [serialize_value(entry) for run in runs for entry in instance.all_logs(run.run_id)]
            assert any("completions_sent" in text for text in everything), "metadata was searched"
    finally:
        os.environ.pop("DAGSTER_HOME", None)
    assert not [text for text in everything if SECRET in text]
    assert SECRET not in table_text
    assert SECRET not in first_log.read_text() + second_log.read_text()
    for path in home.rglob("*"):
        if path.is_file() and path.suffix in (".out", ".err", ".log", ".txt", ".json"):
            assert SECRET not in path.read_text(errors="replace"), path


#: Busy processes beside the run (the issue's loaded machine: 3 busy loops made the kills fail there).
BUSY_LOOPS = 3
#: Completions cached before each SIGKILL, the cache kept between runs: early (the first batch) and late.
KILL_AFTER_CACHED = (16, 400)


@contextmanager
def _cpu_contention(processes: int) -> Iterator[None]:
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()


def _processes_of(home: Path) -> list[int]:
    """Live processes (not zombies) whose environment names ``home`` as DAGSTER_HOME: every process of
    a run started there, including any that left the killed process group."""
    marker = f"DAGSTER_HOME={home}".encode()
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if state != "Z" and marker in environ:
            found.append(int(proc.name))
    return found


def test_sigkill_under_cpu_contention_at_several_points_leaves_no_process_and_loses_no_row(
    tmp_path: Path, study_a_inputs_home: Path
) -> None:
    with FakeFleet(api_key=SECRET, delay_s=0.03) as fleet, _cpu_contention(BUSY_LOOPS):
        env = cli_environment(
            tmp_path, REGISTRY, inputs=study_a_inputs_home, FAKE_FLEET_URL=fleet.base_url, FAKE_FLEET_KEY=SECRET
        )
        home, cache, database = (Path(env[k]) for k in ("DAGSTER_HOME", "ARGASSETS_CACHE", "ARGASSETS_DUCKDB"))
        for point, threshold in enumerate(KILL_AFTER_CACHED):
            log = tmp_path / f"killed-{point}.log"
            process = _materialize(env, log, "argassets")
            deadline = time.monotonic() + 400
            while len(_cached(cache)) < threshold:
                assert process.poll() is None, f"finished before kill {point}:\n" + log.read_text()[-3000:]
                assert time.monotonic() < deadline, f"kill {point}: never got going:\n" + log.read_text()[-3000:]
                time.sleep(0.05)
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            deadline = time.monotonic() + 10
            while _processes_of(home) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _processes_of(home) == [], f"kill {point}: processes of the killed run are left"
        assert 0 < len(_cached(cache)) < 945, "every kill came in the middle of the partition"
        final_log = tmp_path / "final.log"
        final = _materialize(env, final_log, "argassets")
        assert final.wait(timeout=600) == 0, final_log.read_text()[-3000:]
    with duckdb.connect(str(database), read_only=True) as con:
        prompts = con.execute("SELECT count(*) FROM main.aq_prompts").fetchone()[0]
        rows, distinct, valid = con.execute(
            'SELECT count(*), count(DISTINCT (comparison_id, dimension, strategy, "order", run)), '
            "sum(CASE WHEN is_valid THEN 1 ELSE 0 END) FROM main.aq_judgments WHERE judge_model = ?",
            [MODEL],
        ).fetchone()
    assert rows == distinct == valid == prompts * 3
