"""A new model is registered -> it is judged -> the reports refresh, on the real code location.

Ephemeral instance, the real definitions (argassets.definitions.defs), the embedded sample
corpus: tick the registry sensor, run what it requested exactly as requested, let declarative
automation decide the report refresh, run that, and read the refreshed report rows from DuckDB.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"

ONE_BASELINE = """
[[models]]
name = "longer-wins"
backend = "longer-wins"
studies = ["argument_quality"]
"""

NEW_BASELINE = """
[[models]]
name = "random"
backend = "random"
studies = ["argument_quality"]
seed = 7
"""

#: Reports executed here; the full requested set is asserted, but Bradley-Terry reports need more
#: comparisons than the small sample offers for a random judge.
EXECUTED_REPORTS = ["aq_majority_votes", "aq_variability_report"]

pytestmark = pytest.mark.slow


@pytest.fixture()
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ARGASSETS_DATA_DIR", str(SAMPLE))
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(tmp_path / "argassets.duckdb"))
    monkeypatch.setenv("ARGASSETS_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("ARGASSETS_MODELS", str(tmp_path / "models.toml"))
    monkeypatch.delenv("ARGASSETS_RUN_BACKENDS", raising=False)
    import argassets.definitions as definitions
    from argassets.platform.resources.storage import duckdb_io_manager

    # The IO manager resolves its DuckDB path when the code location loads: point it here.
    defs = dg.Definitions.merge(
        dg.Definitions(
            assets=definitions.defs.assets,
            asset_checks=definitions.defs.asset_checks,
            sensors=definitions.defs.sensors,
            jobs=definitions.defs.jobs,
        ),
        dg.Definitions(resources={**definitions.defs.resources, "io_manager": duckdb_io_manager()}),
    )
    # In memory: evaluating the automation conditions looks up the dynamic partitions thousands of
    # times, and on a SQLite file each lookup opens a connection and checks the table first.
    with dg.DagsterInstance.ephemeral() as instance:
        yield defs, instance, tmp_path


def _tick(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None):
    from sensors.registry_sensor import model_registry_sensor

    result = model_registry_sensor(dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs))
    assert isinstance(result, dg.SensorResult)
    for request in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(request.partitions_def_name, request.partition_keys)
    return result


def _execute(defs: dg.Definitions, instance: dg.DagsterInstance, request: dg.RunRequest) -> None:
    job = defs.resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(
        instance=instance,
        asset_selection=list(request.asset_selection),
        partition_key=request.partition_key,
        tags=dict(request.tags),
        raise_on_error=False,
    )
    assert result.success, [e.message for e in result.all_events if e.is_failure]


def test_registering_a_baseline_judges_it_and_refreshes_the_reports_once(setup) -> None:
    defs, instance, tmp = setup
    registry = tmp / "models.toml"
    registry.write_text(ONE_BASELINE, encoding="utf-8")
    automation = dg.evaluate_automation_conditions(defs=defs, instance=instance)

    first = _tick(defs, instance, None)
    [inputs] = first.run_requests
    assert {k.to_user_string() for k in inputs.asset_selection} >= {"webis_arguments", "aq_prompts"}
    _execute(defs, instance, inputs)
    second = _tick(defs, instance, first.cursor)
    [judging] = second.run_requests
    assert (judging.partition_key, [k.to_user_string() for k in judging.asset_selection]) == (
        "longer-wins",
        ["aq_judgments"],
    )
    _execute(defs, instance, judging)
    automation = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=automation.cursor)
    _execute(defs, instance, dg.RunRequest(asset_selection=[dg.AssetKey(k) for k in EXECUTED_REPORTS]))
    automation = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=automation.cursor)

    # The researcher registers a second judge.
    registry.write_text(ONE_BASELINE + NEW_BASELINE, encoding="utf-8")
    added = _tick(defs, instance, second.cursor)
    assert [(r.partitions_def_name, r.partition_keys) for r in added.dynamic_partitions_requests] == [
        ("judge_models", ["random"]),
        ("models_argument_quality", ["random"]),
    ]
    assert instance.get_dynamic_partitions("judge_models") == ["longer-wins", "random"]
    [request] = added.run_requests
    assert request.partition_key == "random"
    assert [k.to_user_string() for k in request.asset_selection] == ["aq_judgments"]
    assert request.tags["argassets/gpus"] == "0" and request.tags["argassets/backend"] == "random"
    _execute(defs, instance, request)

    refreshed = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=automation.cursor)
    requested = {
        key.to_user_string()
        for key in defs.resolve_asset_graph().get_all_asset_keys()
        if refreshed.get_requested_partitions(key)
    }
    # Every report over the study's partitions refreshes, and only those.
    assert {"aq_majority_votes", "aq_variability_report", "aq_agreement_report", "aq_bt_scores"} <= requested
    assert all(not k.startswith(("political", "webis", "aq_judgments", "aq_prompts")) for k in requested)
    _execute(defs, instance, dg.RunRequest(asset_selection=[dg.AssetKey(k) for k in EXECUTED_REPORTS]))

    with duckdb.connect(str(tmp / "argassets.duckdb"), read_only=True) as con:
        models = {row[0] for row in con.execute("SELECT DISTINCT model FROM main.aq_variability_report").fetchall()}
        votes = dict(con.execute("SELECT model, count(*) FROM main.aq_majority_votes GROUP BY 1").fetchall())
        prompts = con.execute("SELECT count(*) FROM main.aq_prompts").fetchone()[0]
    assert models == {"longer-wins", "random"}
    assert votes == {"longer-wins": prompts, "random": prompts}
