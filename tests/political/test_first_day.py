"""A newcomer's first day on the full published data: run-default from nothing, then the README's
retrieval and debate examples on the embedded store, and every check of run-default's assets evaluated."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from argassets import cli
from argassets.cli.common import executor
from argassets.platform.operations.check_coverage import study_of_assets, unevaluated_checks
from tests.political.retrieval_graph import embedding_model_fixture  # noqa: F401 - the session fixture

UTTERANCE = "Rich people should pay higher taxes"
RANGE = ["--system", "E1", "--position", "60-90"]


@pytest.mark.slow
@pytest.mark.llm
def test_after_run_default_retrieval_and_debate_work_and_every_check_ran(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    shared_data_dir: Path,
    embedding_model,
) -> None:
    monkeypatch.setenv("ARGASSETS_DATA_DIR", str(shared_data_dir))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(tmp_path / "var" / "argassets.duckdb"))
    monkeypatch.setenv("ARGASSETS_CACHE", str(tmp_path / "var" / "cache.sqlite"))
    # the machine's embedding cache, as a newcomer has it after scripts/install (which fills it)
    monkeypatch.delenv("ARGASSETS_EMBEDDING_CACHE")
    assert cli.main(["run-default"]) == 0

    instance = dg.DagsterInstance.get()
    engine = executor(instance)
    graph, layout = engine.repo_def.asset_graph, engine.layout
    owners = study_of_assets(layout)
    checks = [key for key in graph.asset_check_keys if graph.get(key.asset_key).kinds.isdisjoint({"neo4j"})]
    assert {"retrieval_results_inside_filter", "retrieval_opposite_filters_separate"} <= {k.name for k in checks}
    assert all(owners.get(key.asset_key) for key in checks), "a check whose asset run-default never runs"
    assert unevaluated_checks(instance, graph, layout) == {}
    assert unrounded_metadata(instance) == []

    capsys.readouterr()
    assert cli.main(["retrieve", UTTERANCE, *RANGE, "--method", "typical", "--json"]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert results and {r["relation"] for r in results} >= {"SUPPORTS", "ATTACKS"}
    assert all(60 <= r["position"] <= 90 for r in results)
    assert any("tax" in r["locution"].lower() for r in results)

    assert cli.main(["debate", UTTERANCE, "--model", "smollm2-135m", *RANGE, "--k", "1", "--json"]) == 0
    [answer] = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert answer["text"] and answer["retrieved_argument_ids"]
    assert "between 60 and 90" in answer["system_prompt"]


def unrounded_metadata(instance: dg.DagsterInstance) -> list[str]:
    """Every float of a materialisation's or a check's metadata shown with more than 4 decimals."""
    entries: list[tuple[str, dict]] = []
    for key in instance.get_asset_keys():
        for record in instance.fetch_materializations(key, limit=100).records:
            entries.append((key.to_user_string(), record.asset_materialization.metadata))
    evaluations = dg.EventRecordsFilter(event_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    for record in instance.get_event_records(evaluations, limit=5000):
        evaluation = record.event_log_entry.dagster_event.event_specific_data
        entries.append((f"check {evaluation.check_name}", evaluation.metadata))
    return sorted(
        f"{where}: {name} = {value.value}"
        for where, metadata in entries
        for name, value in metadata.items()
        if isinstance(value, dg.FloatMetadataValue) and value.value is not None and value.value != round(value.value, 4)
    )
