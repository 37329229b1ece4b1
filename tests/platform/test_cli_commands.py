"""The ``argassets`` console script's pieces, in-process (the subprocess paths: test_cli_backfill.py)."""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from argassets import cli
from argassets.cli import common, materialize
from argassets.cli.common import CliError
from argassets.platform.operations.automation import operations_layout
from argassets.platform.operations.check_coverage import unevaluated_checks
from argassets.platform.operations.run_recovery import HOST_TAG, PID_TAG
from argassets.studies import code_location_studies, parse_registry
from tests.instances import new_instance

REG = parse_registry(
    {
        "models": [
            {"name": "a", "backend": "random", "studies": ["argument_quality"]},
            {"name": "b", "backend": "longer-wins", "studies": ["argument_quality"]},
            {"name": "c", "backend": "random", "studies": ["political"]},
        ]
    }
)


def test_ui_binds_loopback_by_default() -> None:
    args = cli.build_parser().parse_args(["ui"])
    assert (args.host, args.port) == ("127.0.0.1", 3000)


def test_sync_adds_missing_partitions_and_never_deletes(dagster_instance: dg.DagsterInstance) -> None:
    dagster_instance.add_dynamic_partitions("judge_models", ["old-model", "b"])
    result = common.sync_partitions(dagster_instance, REG)
    assert result == {"added": ["a", "c"], "present": ["b"], "not_in_registry": ["old-model"]}
    assert dagster_instance.get_dynamic_partitions("judge_models") == ["old-model", "b", "a", "c"]
    # Each study's own partitions: its entries only (b was there before the study definitions).
    assert dagster_instance.get_dynamic_partitions("models_argument_quality") == ["a", "b"]
    assert dagster_instance.get_dynamic_partitions("models_political") == ["c"]
    assert common.sync_partitions(dagster_instance, REG)["added"] == []
    dry = common.sync_partitions(
        dagster_instance,
        parse_registry({"models": [{"name": "d", "backend": "random", "studies": ["political"]}]}),
        dry_run=True,
    )
    assert dry["added"] == ["d"] and "d" not in dagster_instance.get_dynamic_partitions("judge_models")
    assert "d" not in dagster_instance.get_dynamic_partitions("models_political")


def _args(**kwargs) -> argparse.Namespace:
    base = {"partitions": None, "all": False, "start": None, "end": None}
    return argparse.Namespace(**{**base, **kwargs})


def test_partition_ranges_follow_instance_order_and_refuse_unknown_names(dagster_instance: dg.DagsterInstance) -> None:
    common.sync_partitions(dagster_instance, REG)
    assert common.select_partitions(REG, dagster_instance, _args(start="a", end="b")) == ["a", "b"]
    assert common.select_partitions(REG, dagster_instance, _args(start="b")) == ["b", "c"]
    assert common.select_partitions(REG, dagster_instance, _args(all=True)) == ["a", "b", "c"]
    assert common.select_partitions(REG, dagster_instance, _args(partitions="c, a")) == ["c", "a"]
    with pytest.raises(CliError, match="--to zz: no such partition"):
        common.select_partitions(REG, dagster_instance, _args(start="a", end="zz"))
    with pytest.raises(CliError, match="empty range"):
        common.select_partitions(REG, dagster_instance, _args(start="c", end="a"))
    with pytest.raises(CliError, match="not in the registry: zz"):
        common.select_partitions(REG, dagster_instance, _args(partitions="a,zz"))
    with pytest.raises(CliError, match="choose partitions"):
        common.select_partitions(REG, dagster_instance, _args())


def test_partition_keys_on_the_command_line_are_checked_first(dagster_instance: dg.DagsterInstance) -> None:
    common.sync_partitions(dagster_instance, REG)
    for bad in ("it's", "a b", "../x", "A"):
        with pytest.raises(CliError, match=r"--partitions: partition key .* is not a valid model name"):
            common.select_partitions(REG, dagster_instance, _args(partitions=f"a,{bad}"))
    with pytest.raises(CliError, match=r"--from: partition key \"a'\" is not a valid model name"):
        common.select_partitions(REG, dagster_instance, _args(start="a'"))
    with pytest.raises(CliError, match="materialize: partition key 'x;y' is not a valid model name"):
        materialize.cmd_materialize(argparse.Namespace(partition="x;y", study=None, with_reports=False))
    # A key added by hand (the UI takes any text) is listed as such, never as a model.
    dagster_instance.add_dynamic_partitions("judge_models", ["it's mine"])
    assert "it's mine" in dagster_instance.get_dynamic_partitions("judge_models")


def test_fresh_dagster_home_gets_the_local_config_and_an_existing_one_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    home = common.dagster_home()
    assert (home / "dagster.yaml").read_text() == common.LOCAL_INSTANCE_CONFIG.read_text()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    common.dagster_home()
    assert (home / "dagster.yaml").read_text() == "telemetry:\n  enabled: false\n"


def test_invalid_registry_is_one_clear_line_and_exit_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "models.toml"
    bad.write_text('[[models]]\nname = "x"\nbackend = "vlm"\nstudies = ["argument_quality"]\n')
    monkeypatch.setenv("ARGASSETS_MODELS", str(bad))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert cli.main(["partitions", "sync"]) == 2
    err = capsys.readouterr().err
    assert "argassets: error: invalid model registry" in err
    assert "entry #1 ('x'): field 'backend'" in err


def test_orphaned_cli_runs_are_marked_failed_and_live_ones_kept() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()

    @dg.asset
    def thing() -> int:
        return 1

    job = dg.Definitions(assets=[thing]).resolve_implicit_global_asset_job_def()
    with new_instance() as instance:
        runs = {}
        for name, pid in (("dead", dead.pid), ("alive", __import__("os").getpid())):
            run = instance.create_run_for_job(job, tags={PID_TAG: str(pid), HOST_TAG: host})
            instance.handle_new_event(
                dg.EventLogEntry(
                    error_info=None,
                    level="debug",
                    user_message="",
                    run_id=run.run_id,
                    timestamp=0.0,
                    dagster_event=dg.DagsterEvent(
                        event_type_value=dg.DagsterEventType.RUN_START.value, job_name=run.job_name
                    ),
                )
            )
            runs[name] = run.run_id
        lines = common.mark_orphans(instance)
        assert lines == [f"marked failed: run {runs['dead']} (__ASSET_JOB); its process (pid {dead.pid}) is gone"]
        assert instance.get_run_by_id(runs["dead"]).status == dg.DagsterRunStatus.FAILURE
        assert instance.get_run_by_id(runs["alive"]).status == dg.DagsterRunStatus.STARTED


def test_run_default_without_published_data_runs_study_a_on_the_embedded_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's main command on a machine with no corpus: Study A over data/sample, every
    report written, Study B left out with a message."""
    import duckdb

    import argassets.platform.paths as paths

    monkeypatch.delenv("ARGASSETS_DATA_DIR", raising=False)
    monkeypatch.delenv("ARGASSETS_WEBIS_URL", raising=False)
    monkeypatch.setattr(paths, "SIBLING_SHARED_DATA_DIR", tmp_path / "no-shared-data")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(tmp_path / "db" / "argassets.duckdb"))
    monkeypatch.setenv("ARGASSETS_CACHE", str(tmp_path / "db" / "cache.sqlite"))
    assert cli.main(["run-default"]) == 0
    with duckdb.connect(str(tmp_path / "db" / "argassets.duckdb"), read_only=True) as db:
        tables = {row[0] for row in db.execute("select table_name from information_schema.tables").fetchall()}
        assert "political_kb_arguments" not in tables
        judged = dict(db.execute("select judge_model, count(*) from aq_judgments group by 1").fetchall())
        assert set(judged) == {"longer-wins", "random"}
        # the sample: 35 comparisons in each of 3 dimensions, 3 strategies, 3 runs
        assert judged["random"] == 3 * 35 * 3 * 3
        report = db.execute("select model, count(*) from aq_agreement_report group by 1 order by 1").fetchall()
        assert report == [("longer-wins", 12), ("random", 12)]
    instance = dg.DagsterInstance.get()
    graph = common.executor(instance).repo_def.asset_graph
    unevaluated = unevaluated_checks(
        instance, graph, operations_layout(graph, code_location_studies()), left_out={"political"}
    )
    assert unevaluated == {}, unevaluated


def test_with_reports_refreshes_only_the_studies_the_models_take_part_in() -> None:
    both = ["argument_quality", "political"]
    assert common.studies_taken_part_in(REG, ["a"], None, both) == ["argument_quality"]
    assert common.studies_taken_part_in(REG, ["a", "c"], None, both) == ["argument_quality", "political"]
    assert common.studies_taken_part_in(REG, ["a", "c"], ["political"], both) == ["political"]
    assert common.studies_taken_part_in(REG, ["c"], None, ["argument_quality"]) == []  # no Study B assets here
