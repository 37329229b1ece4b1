"""Judging through a real one-node Slurm cluster (tests/slurm_cluster.py), the way a login node does.

The instance is ``deploy/slurm/dagster.yaml`` as shipped: runs and event logs in PostgreSQL, every
run launched by ``SlurmRunLauncher`` as one batch job. The judgment cache is on PostgreSQL, the
tables on the Parquet store; the studies read the embedded sample corpus. Judges are the two
baselines and OpenAI-compatible entries answered by a scripted server on 127.0.0.1 whose delay
keeps a partition running long enough to be cancelled or to reach its time limit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import httpx
import pandas as pd
import pytest

from argassets.platform.judging.identity import cache_model_key
from argassets.platform.storage.judgment_cache import open_judgment_cache
from argassets.platform.storage.table_store import ParquetTableStore
from argassets.studies import load_registry
from tests.judgments_http import Reply, ScriptedServer, Seen, chat_reply
from tests.postgres_server import TemporaryPostgres, free_port
from tests.slurm_cluster import TemporarySlurmCluster

pytestmark = [pytest.mark.slurm, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "data" / "sample"
BASELINES = ["longer-wins", "random", "random-b"]
REMOTE = 'backend = "openai"\nstudies = ["argument_quality"]\nbase_url_env = "ARGASSETS_TEST_OPENAI_URL"\napi_key_env = "ARGASSETS_TEST_OPENAI_KEY"\nbatch_size = 2\nmax_concurrency = 1\nscope = { dimensions = ["logic"], strategies = ["zero"], max_comparisons = 16 }\n'
REGISTRY = f"""
[slurm]
partition = "debug"
cpus = 1
mem = "700"

[[models]]
name = "longer-wins"
backend = "longer-wins"
studies = ["argument_quality"]

[[models]]
name = "random"
backend = "random"
studies = ["argument_quality"]
seed = 1

[[models]]
name = "random-b"
backend = "random"
studies = ["argument_quality"]
seed = 2

[[models]]
name = "remote"
model_id = "remote-model"
{REMOTE}
[[models]]
name = "remote-short"
model_id = "short-model"
slurm = {{ time = "1" }}
{REMOTE}
[[models]]
name = "priced"
model_id = "priced-model"
price = {{ input_per_mtok = 1000.0, output_per_mtok = 1000.0 }}
{REMOTE}
[[models]]
name = "huge"
backend = "vllm"
model_id = "x/huge"
gpus = 8
throughput = 0.05
studies = ["argument_quality"]
"""


@pytest.fixture(scope="module")
def login_env(
    slurm_cluster: TemporarySlurmCluster, postgres_server: TemporaryPostgres, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """The login node's environment: a DAGSTER_HOME with the shipped Slurm instance config."""
    tmp = tmp_path_factory.mktemp("slurm")
    home = tmp / "dagster_home"
    home.mkdir()
    shutil.copyfile(ROOT / "deploy" / "slurm" / "dagster.yaml", home / "dagster.yaml")
    (tmp / "models.toml").write_text(REGISTRY, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ARGASSETS_", "DAGSTER_"))}
    env.update(
        {
            "DAGSTER_HOME": str(home),
            # dagster-postgres speaks psycopg2; SQLAlchemy 2.1 defaults postgresql:// to psycopg 3.
            "ARGASSETS_DAGSTER_PG_URL": postgres_server.new_database().replace(
                "postgresql://", "postgresql+psycopg2://"
            ),
            "ARGASSETS_CACHE": postgres_server.new_database(),
            "ARGASSETS_TABLES": str(tmp / "tables"),
            "ARGASSETS_DUCKDB": str(tmp / "unused.duckdb"),
            "ARGASSETS_SLURM_WORK_DIR": str(tmp / "jobs"),
            "ARGASSETS_DATA_DIR": str(SAMPLE),
            "ARGASSETS_MODELS": str(tmp / "models.toml"),
            "ARGASSETS_AUTOMATION": "off",
            "ARGASSETS_TEST_OPENAI_KEY": "test-key",
            "SLURM_CONF": str(slurm_cluster.conf),
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def argassets(env: dict[str, str], *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "argassets"), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def _ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result


@contextlib.contextmanager
def instance_of(env: dict[str, str]) -> Iterator[Any]:
    """The login node's instance, opened in this process (its environment set while it is open)."""
    keys = ("DAGSTER_HOME", "ARGASSETS_DAGSTER_PG_URL", "ARGASSETS_SLURM_WORK_DIR", "ARGASSETS_MODELS")
    saved = {key: os.environ.get(key) for key in keys}
    os.environ.update({key: env[key] for key in keys})
    try:
        with dg.DagsterInstance.get() as instance:
            yield instance
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)


#: When and how fast each completion was made: the only columns two judgings of a partition may differ in.
TIMING_COLUMNS = ["latency_s", "requested_at", "completed_at"]


def judgments(tables: str, models: list[str]) -> dict[str, pd.DataFrame]:
    frame = ParquetTableStore(tables).read_partitions("aq_judgments", "judge_model", models)
    assert frame is not None, f"{tables}: no aq_judgments partition"
    frame = frame.drop(columns=[c for c in TIMING_COLUMNS if c in frame.columns])
    order = [c for c in ("comparison_id", "dimension", "strategy", "order", "run") if c in frame.columns]
    return {m: part.sort_values(order).reset_index(drop=True) for m, part in frame.groupby("judge_model")}


def job_times(job_id: str) -> tuple[str, str]:
    out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, check=True).stdout
    fields = dict(part.split("=", 1) for part in out.split() if "=" in part)
    return fields["StartTime"], fields["EndTime"]


@pytest.fixture(scope="module")
def slurm_backfill(login_env: dict[str, str]) -> dict[str, Any]:
    """The three baselines backfilled through Slurm (one job each), and the run ids."""
    result = _ok(
        argassets(login_env, "slurm", "backfill", "--partitions", ",".join(BASELINES), "--study", "argument_quality")
    )
    with instance_of(login_env) as instance:
        runs = [r for r in instance.get_runs() if r.tags.get("argassets/slurm-job-id")]
        return {"output": result.stdout, "runs": {r.tags["dagster/partition"]: r for r in runs}}


def test_a_backfill_of_three_partitions_runs_as_three_concurrent_jobs_and_lands_the_local_tables(
    login_env: dict[str, str], slurm_backfill: dict[str, Any], tmp_path: Path
) -> None:
    runs = slurm_backfill["runs"]
    assert sorted(runs) == sorted(BASELINES)
    assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs.values())
    spans = [job_times(run.tags["argassets/slurm-job-id"]) for run in runs.values()]
    assert max(start for start, _ in spans) < min(end for _, end in spans), f"the jobs did not overlap: {spans}"
    for run in runs.values():
        assert Path(run.tags["argassets/slurm-log"]).is_file()

    for run in runs.values():  # the estimate, made before submission, is on the run
        assert int(run.tags["argassets/estimate-completions"]) > 0
        assert run.tags["argassets/estimate-cached"] == "0"
    estimate = _ok(argassets(login_env, "estimate", "random", "--study", "argument_quality")).stdout
    completions = runs["random"].tags["argassets/estimate-completions"]
    assert f"= {completions} completions, {completions} in the cache, 0 to send" in estimate
    assert "measured on 1 earlier run(s)" in estimate

    local = {**login_env, "DAGSTER_HOME": str(tmp_path / "home"), "ARGASSETS_TABLES": str(tmp_path / "tables")}
    local["ARGASSETS_CACHE"] = str(tmp_path / "cache.sqlite")
    local.pop("ARGASSETS_DAGSTER_PG_URL")
    _ok(argassets(local, "backfill", "--partitions", ",".join(BASELINES), "--study", "argument_quality"))
    through_slurm = judgments(login_env["ARGASSETS_TABLES"], BASELINES)
    here = judgments(local["ARGASSETS_TABLES"], BASELINES)
    assert sorted(through_slurm) == sorted(here) == sorted(BASELINES)
    for model in BASELINES:
        assert len(here[model]) > 0
        pd.testing.assert_frame_equal(through_slurm[model], here[model], check_like=True)


def test_the_instance_is_postgres_and_the_ui_on_the_login_side_sees_the_jobs_runs(
    login_env: dict[str, str], slurm_backfill: dict[str, Any]
) -> None:
    with instance_of(login_env) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert type(instance.run_launcher).__name__ == "SlurmRunLauncher"
    port = free_port()
    ui = subprocess.Popen(
        [str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"],
        cwd=ROOT, env=login_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    query = "{ runsOrError { ... on Runs { results { runId status tags { key value } } } } }"
    try:
        deadline, answer = time.monotonic() + 240, None
        while answer is None and time.monotonic() < deadline and ui.poll() is None:
            try:
                answer = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query}, timeout=30).json()
            except httpx.TransportError:
                time.sleep(1.0)
    finally:
        ui.terminate()
        ui.wait(timeout=60)
    assert answer is not None, "the webserver did not answer"
    seen = {r["runId"]: r for r in answer["data"]["runsOrError"]["results"]}
    for run in slurm_backfill["runs"].values():
        assert seen[run.run_id]["status"] == "SUCCESS"
        tags = {t["key"]: t["value"] for t in seen[run.run_id]["tags"]}
        assert tags["argassets/slurm-job-id"] == run.tags["argassets/slurm-job-id"]


def test_more_gpus_than_the_cluster_has_are_refused_before_submission(login_env: dict[str, str]) -> None:
    """The pre-flight reads the cluster's nodes (sinfo): nothing is submitted, in one line, at once."""
    started = time.monotonic()
    result = argassets(login_env, "slurm", "backfill", "--partitions", "huge", "--study", "argument_quality")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "huge needs 8 GPUs (vLLM on CUDA); the Slurm cluster has only 4" in result.stderr
    assert "Submitted" not in result.stdout and "Slurm job" not in result.stdout
    assert time.monotonic() - started < 120
    with instance_of(login_env) as instance:
        assert not [r for r in instance.get_runs() if r.tags.get("dagster/partition") == "huge"]


def test_a_partition_over_the_budget_is_refused_before_submission(login_env: dict[str, str]) -> None:
    budget = {**login_env, "ARGASSETS_BUDGET_USD": "0.01", "ARGASSETS_TEST_OPENAI_URL": "http://127.0.0.1:9/v1"}
    result = argassets(budget, "slurm", "backfill", "--partitions", "priced", "--study", "argument_quality")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "priced / argument_quality: estimated" in result.stderr
    assert "US dollars exceeds the budget of 0.01 (ARGASSETS_BUDGET_USD)" in result.stderr
    assert "Submitted" not in result.stdout and "Slurm job" not in result.stdout


def _slow_answers(seen: Seen) -> Reply:
    model = seen.json()["model"]
    return Reply(**{**chat_reply("A").__dict__, "delay_s": 1.0 if model == "remote-model" else 8.0})


def _wait_for(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def _log_messages(instance: Any, run: Any) -> str:
    return "\n".join(str(e.message) for e in instance.all_logs(run.run_id))


@pytest.fixture()
def slow_server() -> Iterator[ScriptedServer]:
    with ScriptedServer(_slow_answers) as server:
        yield server


def test_cancelled_and_timed_out_jobs_fail_their_runs_with_slurms_reason_and_the_rerun_judges_nothing_twice(
    login_env: dict[str, str], slow_server: ScriptedServer
) -> None:
    env = {**login_env, "ARGASSETS_TEST_OPENAI_URL": f"{slow_server.url}/v1"}
    backfill = subprocess.Popen(
        [str(BIN / "argassets"), "slurm", "backfill", "--partitions", "remote,remote-short", "--study", "argument_quality"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    cache = open_judgment_cache(login_env["ARGASSETS_CACHE"])
    key = cache_model_key(load_registry(login_env["ARGASSETS_MODELS"]).get("remote"))
    # Cancel mid-partition once a batch is stored (requests seen by the server may not be stored yet).
    _wait_for(lambda: cache.count(key) >= 2 or backfill.poll() is not None, 300, "the remote judge's first batch")
    with instance_of(login_env) as instance:
        (run,) = [r for r in instance.get_runs() if r.tags.get("dagster/partition") == "remote"]
        assert instance.run_launcher.terminate(run.run_id)  # what "Terminate" in the UI calls
    output, _ = backfill.communicate(timeout=400)
    assert backfill.returncode == 1, output
    with instance_of(login_env) as instance:
        runs = {
            r.tags["dagster/partition"]: r
            for r in instance.get_runs()
            if r.tags.get("argassets/model", "").startswith("remote")
        }
        statuses = {p: r.status for p, r in runs.items()}
        assert statuses == {"remote": dg.DagsterRunStatus.CANCELED, "remote-short": dg.DagsterRunStatus.FAILURE}
        cancelled_log = _log_messages(instance, runs["remote"])
        timed_out_log = _log_messages(instance, runs["remote-short"])
    assert "Slurm job ended: Slurm job" in cancelled_log and "was cancelled (CANCELLED" in cancelled_log
    assert "reached its time limit" in timed_out_log and "time limit 00:01:00" in timed_out_log

    cached_before = cache.count(key)
    assert cached_before >= 2, "the cancelled run stored no batch"
    with ScriptedServer(lambda seen: chat_reply("B")) as fast:
        _ok(
            argassets(
                {**env, "ARGASSETS_TEST_OPENAI_URL": f"{fast.url}/v1"},
                "slurm",
                "backfill",
                "--partitions",
                "remote",
                "--study",
                "argument_quality",
            )
        )
        resent = len(fast.seen)
    total = cache.count(key)
    rows = judgments(login_env["ARGASSETS_TABLES"], ["remote"])["remote"]
    assert resent > 0
    assert total == len(rows) == cached_before + resent
