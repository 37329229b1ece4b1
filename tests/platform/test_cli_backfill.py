"""Backfilling model partitions from a terminal, the way a researcher does it.

Every command runs in a subprocess against a temporary ``DAGSTER_HOME`` and DuckDB file, on the
embedded sample corpus (``data/sample``) with a registry of the two baselines:

- ``argassets partitions sync`` creates the dynamic partitions;
- ``dagster asset materialize --select aq_judgments --partition random`` materialises one;
- ``dagster job backfill -j aq_judgments_job --from longer-wins --to random`` backfills a range
  (runs launched through the instance, tagged from the registry);
- ``argassets backfill --from ... --to ...`` does the same in-process, then the reports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "data" / "sample"

REGISTRY = """
[[models]]
name = "longer-wins"
backend = "longer-wins"
studies = ["argument_quality"]

[[models]]
name = "random"
backend = "random"
studies = ["argument_quality"]
seed = 1
"""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    if not (SAMPLE / "webis-argquality20").is_dir():
        pytest.fail(f"{SAMPLE}: the embedded sample corpus is missing")
    tmp = tmp_path_factory.mktemp("cli")
    home = tmp / "dagster_home"
    home.mkdir()
    # Runs of `dagster job backfill` launch at once (no daemon in this test); with `dagster dev`
    # running, the default queued coordinator would launch them instead.
    (home / "dagster.yaml").write_text(
        "run_coordinator:\n  module: dagster._core.run_coordinator\n  class: DefaultRunCoordinator\n"
        "telemetry:\n  enabled: false\n",
        encoding="utf-8",
    )
    (tmp / "models.toml").write_text(REGISTRY, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ARGASSETS_", "DAGSTER_"))}
    env.update(
        {
            "DAGSTER_HOME": str(home),
            "ARGASSETS_DUCKDB": str(tmp / "argassets.duckdb"),
            "ARGASSETS_CACHE": str(tmp / "cache.sqlite"),
            "ARGASSETS_DATA_DIR": str(SAMPLE),
            "ARGASSETS_MODELS": str(tmp / "models.toml"),
            "ARGASSETS_AUTOMATION": "off",
            # Each run's steps in the run's process (as `argassets` runs them): the commands, their
            # partitions, runs and tags are under test, not the import of the code location per step.
            "ARGASSETS_EXECUTOR": "in_process",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def run(env: dict[str, str], *args: str, ok: bool = True, timeout: int = 300) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(BIN / args[0]), *args[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    if ok and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result


def judgments(env: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Rows and distinct (comparison, dimension, strategy, order, run) keys per model."""
    with duckdb.connect(env["ARGASSETS_DUCKDB"], read_only=True) as con:
        rows = con.execute(
            'SELECT judge_model, count(*), count(DISTINCT (comparison_id, dimension, strategy, "order", run)) '
            "FROM main.aq_judgments GROUP BY 1"
        ).fetchall()
        prompts = con.execute("SELECT count(*) FROM main.aq_prompts").fetchone()[0]
    return {model: (n, distinct) for model, n, distinct in rows} | {"_prompts": (prompts, prompts)}


def instance_runs(env: dict[str, str]) -> list[dg.DagsterRun]:
    previous = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = env["DAGSTER_HOME"]
    try:
        with dg.DagsterInstance.get() as instance:
            return list(instance.get_runs())
    finally:
        if previous is None:
            os.environ.pop("DAGSTER_HOME")
        else:
            os.environ["DAGSTER_HOME"] = previous


def test_partitions_then_one_partition_then_a_range_from_the_cli(workspace: dict[str, str]) -> None:
    env = workspace
    synced = run(env, "argassets", "partitions", "sync")
    assert "added: longer-wins, random" in synced.stdout

    from argassets.definitions import defs
    from argassets.platform.operations.automation import operations_layout
    from argassets.studies import code_location_studies

    inputs = operations_layout(defs.resolve_asset_graph(), code_location_studies()).unpartitioned_ancestors[
        "argument_quality"
    ]
    run(
        env,
        "dagster",
        "asset",
        "materialize",
        "-m",
        "argassets.definitions",
        "--select",
        ",".join(k.to_user_string() for k in inputs),
    )

    # One model partition, with Dagster's own command.
    run(
        env,
        "dagster",
        "asset",
        "materialize",
        "-m",
        "argassets.definitions",
        "--select",
        "aq_judgments",
        "--partition",
        "random",
    )
    after_one = judgments(env)
    prompts = after_one["_prompts"][0]
    assert after_one["random"] == (prompts * 3, prompts * 3)
    assert "longer-wins" not in after_one

    # A range of partitions (registry order), one run per partition, tagged from the registry.
    backfill = run(
        env,
        "dagster",
        "job",
        "backfill",
        "-m",
        "argassets.definitions",
        "-j",
        "aq_judgments_job",
        "--from",
        "longer-wins",
        "--to",
        "random",
        "--noprompt",
    )
    assert "Launched backfill job" in backfill.stdout
    after_range = judgments(env)
    assert after_range["longer-wins"] == (prompts * 3, prompts * 3)
    assert after_range["random"] == (prompts * 3, prompts * 3), "re-materialising never duplicates rows"
    backfill_runs = [r for r in instance_runs(env) if r.job_name == "aq_judgments_job"]
    assert sorted(r.tags["dagster/partition"] for r in backfill_runs) == ["longer-wins", "random"]
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in backfill_runs)
    assert all(r.tags["argassets/gpus"] == "0" and "dagster/backfill" in r.tags for r in backfill_runs)


def test_argassets_backfill_runs_the_range_in_process_and_refuses_unknown_partitions(workspace: dict[str, str]) -> None:
    env = workspace
    result = run(env, "argassets", "backfill", "--from", "longer-wins", "--to", "random", "--study", "argument_quality")
    assert "backfill of 2 partition(s): longer-wins, random" in result.stdout
    assert result.stdout.count("succeeded") >= 2
    cli_runs = [r for r in instance_runs(env) if r.tags.get("argassets/launched-by") == "argassets-cli"]
    assert {r.tags.get("dagster/partition") for r in cli_runs} >= {"longer-wins", "random"}
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in cli_runs)

    bad = run(env, "argassets", "backfill", "--from", "random", "--to", "gpt-5", ok=False)
    assert bad.returncode == 2
    assert "--to gpt-5: no such partition" in bad.stderr
    unknown = run(
        env,
        "dagster",
        "asset",
        "materialize",
        "-m",
        "argassets.definitions",
        "--select",
        "aq_judgments",
        "--partition",
        "gpt-5",
        ok=False,
    )
    assert unknown.returncode != 0
    assert "gpt-5" in unknown.stdout + unknown.stderr
