"""The nightly refresh schedule requests what is stale, and nothing else."""

from __future__ import annotations

import dagster as dg
import pytest

from sensors import schedules
from sensors.schedules import nightly_refresh_schedule
from tests.platform.test_sensors_registry import BASELINES, CPU_MACHINE, GPU_MACHINE, GPU_MODEL, Harness

K = dg.AssetKey


def _tick(h: Harness):
    context = dg.build_schedule_context(instance=h.instance, repository_def=h.defs.get_repository_def())
    return nightly_refresh_schedule.evaluate_tick(context)


def _requests(data) -> list[tuple[str | None, list[str]]]:
    return [(r.partition_key, [k.to_user_string() for k in r.asset_selection]) for r in data.run_requests or []]


def test_nothing_stale_is_a_skip(reported: Harness) -> None:
    data = _tick(reported)
    assert not data.run_requests
    assert data.skip_message == "nothing is stale"


def test_a_refreshed_input_makes_partitions_stale_first_and_reports_after(reported: Harness) -> None:
    h = reported
    h.write(BASELINES + GPU_MODEL)  # a GPU model whose partition exists but never ran here
    h.tick()
    assert "llama-3.3-70b-instruct" in h.partitions()
    h.execute(dg.RunRequest(asset_selection=[K("stub_corpus")]))  # e.g. a corrected corpus

    first = _tick(h)
    assert sorted(_requests(first)) == [
        ("longer-wins", ["aq_judgments", "aq_majority_votes"]),
        ("random", ["aq_judgments", "aq_majority_votes"]),
    ], "judging re-runs where it runs here; the GPU model and the reports are not requested"
    assert all(r.tags["argassets/purpose"] == "nightly-refresh" for r in first.run_requests)
    assert all(r.tags["argassets/study"] == "argument_quality" for r in first.run_requests)
    for request in first.run_requests:
        h.execute(request)

    second = _tick(h)
    assert _requests(second) == [(None, ["aq_agreement_report"])]
    h.execute(second.run_requests[0])
    assert _tick(h).skip_message == "nothing is stale"


def test_reports_that_never_ran_are_materialised_in_one_run_per_study(judged: Harness) -> None:
    h = judged  # partitions judged, automation never ran the reports
    data = _tick(h)
    assert _requests(data) == [(None, ["aq_agreement_report"]), (None, ["political_model_stats"])]
    # Tagged as the automation's report runs: the queue runs one per study at a time with those.
    assert [r.tags["argassets/reports"] for r in data.run_requests] == ["argument_quality", "political"]
    for request in data.run_requests:
        h.execute(request)
    assert sorted(h.stored("political_model_stats")["judge_model"]) == ["random"]


def test_an_entry_the_machine_cannot_run_is_not_judged_at_night(
    reported: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = reported
    monkeypatch.setenv("ARGASSETS_RUN_BACKENDS", "all")  # vLLM would be judged here, were there GPUs
    h.write(BASELINES + GPU_MODEL)
    h.tick()
    h.execute(dg.RunRequest(asset_selection=[K("stub_corpus")]))
    monkeypatch.setattr(schedules, "machine_for_instance", lambda _instance: CPU_MACHINE)
    on_cpu = sorted(partition for partition, _ in _requests(_tick(h)))
    assert on_cpu == ["longer-wins", "random"], "the GPU model is left out on a machine without GPUs"
    monkeypatch.setattr(schedules, "machine_for_instance", lambda _instance: GPU_MACHINE)
    on_gpus = sorted(partition for partition, _ in _requests(_tick(h)))
    assert on_gpus == ["llama-3.3-70b-instruct", "longer-wins", "random"]
