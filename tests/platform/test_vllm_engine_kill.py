"""Kill a real vLLM judgments run mid-partition, run it again: nothing lost, nothing sent twice.

A real ``argassets materialize`` process judges the sample corpus with the registry's vLLM CPU
entry (batches of 4 requests, each stored before the next is sent). Once some batches are in the
judgment cache, the run's process group (the Dagster process, vLLM's engine core and its worker)
gets SIGKILL. Then: no engine process survives; the second run starts its own engine, sends exactly
the completions the cache lacked, and the partition holds every (comparison, order, run) once.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from argassets.studies import load_registry
from tests.cli_home import cli_environment

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "data" / "sample"
MODEL = "vllm-kill"
BATCH = 4
#: 8 comparisons x 2 orders = 4 batches: killed after the first is stored, three are left to resume.
COMPARISONS = 8

pytestmark = [pytest.mark.vllm_engine, pytest.mark.slow]


def _registry() -> str:
    entry = load_registry().get("smollm2-135m-vllm")
    fields = entry.model_dump(mode="json", exclude_defaults=True, exclude={"name", "scope", "studies"})
    lines = ["[[models]]", f'name = "{MODEL}"', 'studies = ["argument_quality"]', f"batch_size = {BATCH}"]
    for key, value in fields.items():
        rendered = str(value).lower() if isinstance(value, bool) else repr(value).replace("'", '"')
        lines.append(f"{key} = {rendered}")
    lines.append(
        f'scope = {{ topics = [1], dimensions = ["logic"], strategies = ["zero"], max_comparisons = {COMPARISONS} }}'
    )
    return "\n".join(lines) + "\n"


def _cached(cache: Path) -> int:
    if not cache.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as con:
            return int(
                con.execute("SELECT count(*) FROM completions WHERE model LIKE ?", (MODEL + "@%",)).fetchone()[0]
            )
    except sqlite3.OperationalError:
        return 0


def _group_alive(pgid: int) -> list[str]:
    alive = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(proc.name)
    return alive


def _materialize(env: dict[str, str], log: Path) -> subprocess.Popen:
    # The project's command: it marks a run killed without a trace as failed and frees its pool slot.
    command = [str(BIN / "argassets"), "materialize", MODEL, "--study", "argument_quality"]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True
    )


def test_killed_vllm_run_resumes_without_loss_or_resending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, study_a_inputs_home: Path
) -> None:
    # The study's inputs come materialised (a copy of the session's home): only judging is under test.
    env = cli_environment(tmp_path, _registry(), inputs=study_a_inputs_home)
    home, cache, database = (Path(env[k]) for k in ("DAGSTER_HOME", "ARGASSETS_CACHE", "ARGASSETS_DUCKDB"))
    setup = subprocess.run(
        [str(BIN / "argassets"), "partitions", "sync"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert setup.returncode == 0, setup.stderr
    with duckdb.connect(str(database), read_only=True) as con:
        in_scope = con.execute(
            "SELECT count(*) FROM main.aq_prompts WHERE topic_id = 1 AND dimension = 'logic' AND strategy = 'zero'"
        ).fetchone()[0]
    expected = min(int(in_scope), COMPARISONS) * 2 * 3  # both orders, 3 runs
    assert expected >= 3 * BATCH * 3, "the partition must outlast the first batch by several batches"

    # 1. Judge until a batch is stored, then SIGKILL the whole process group.
    first_log = tmp_path / "first.log"
    process = _materialize(env, first_log)
    deadline = time.monotonic() + 1500
    while _cached(cache) < BATCH * 3:
        assert process.poll() is None, "the run ended before it could be killed:\n" + first_log.read_text()[-3000:]
        assert time.monotonic() < deadline, "the run never got going:\n" + first_log.read_text()[-3000:]
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    deadline = time.monotonic() + 60
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _group_alive(process.pid), "vLLM engine processes outlived the killed run"
    cached_at_kill = _cached(cache)
    assert 0 < cached_at_kill < expected, "killed in the middle of the partition"

    # 2. Run again: it finishes, sending only what the cache lacks.
    second_log = tmp_path / "second.log"
    again = _materialize(env, second_log)
    assert again.wait(timeout=1500) == 0, second_log.read_text()[-3000:]
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("aq_judgments"))
        assert event is not None and event.asset_materialization is not None
        metadata = {k: v.value for k, v in event.asset_materialization.metadata.items()}
    assert metadata["completions_sent"] == expected - cached_at_kill
    assert metadata["completions_from_cache"] == cached_at_kill

    with duckdb.connect(str(database), read_only=True) as con:
        rows, distinct, valid = con.execute(
            'SELECT count(*), count(DISTINCT (comparison_id, "order", run)), sum(CASE WHEN is_valid THEN 1 ELSE 0 END) '
            "FROM main.aq_judgments WHERE judge_model = ?",
            [MODEL],
        ).fetchone()
    assert rows == distinct == expected and valid == expected
    assert _cached(cache) == expected
