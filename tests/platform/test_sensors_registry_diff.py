"""Pure registry diffing, planning, run tags and staleness (no Dagster instance)."""

from __future__ import annotations

import json

import pytest

from argassets.platform.operations.automation import stale_keys
from argassets.platform.operations.run_tags import gpu_node_selector, run_tags_for_entry
from argassets.platform.registry.diff import (
    CursorError,
    PlannedRun,
    RegistryState,
    SensorCursor,
    diff_states,
    entry_fingerprint,
    merge_pending,
    plan_registry_work,
)
from argassets.platform.registry.entries import parse_registry
from sensors.registry_sensor import default_run_backends, run_backends


def registry(*entries: dict):
    return parse_registry({"models": list(entries)})


A = {"name": "a", "backend": "random", "studies": ["argument_quality"]}
B = {"name": "b", "backend": "random", "studies": ["argument_quality", "political"], "seed": 3}
GPU = {"name": "big", "backend": "vllm", "model_id": "x/y", "gpus": 4, "studies": ["argument_quality"]}


def test_fingerprint_ignores_description_and_spelled_out_defaults_but_not_sampling() -> None:
    base = registry(A).get("a")
    assert entry_fingerprint(base) == entry_fingerprint(registry({**A, "description": "x"}).get("a"))
    assert entry_fingerprint(base) == entry_fingerprint(registry({**A, "reasoning": False}).get("a"))
    big = registry(GPU).get("big")
    assert entry_fingerprint(big) == entry_fingerprint(registry({**GPU, "device": "gpu", "dtype": "auto"}).get("big"))
    assert entry_fingerprint(base) != entry_fingerprint(registry({**A, "sampling": {"temperature": 0.5}}).get("a"))
    assert entry_fingerprint(base) != entry_fingerprint(registry({**A, "scope": {"topics": [1]}}).get("a"))


def test_diff_names_added_changed_removed_in_order() -> None:
    before = RegistryState.of(registry(A, B))
    after = RegistryState.of(registry({**B, "seed": 4}, GPU), before)
    diff = diff_states(before, after)
    assert diff.added == ("big",)
    assert diff.changed == ("b",)
    assert diff.removed == ("a",)
    assert diff.unchanged == ()
    assert after.retired == {"a": before.entries["a"]}
    assert diff.describe() == "added: big; changed: b; removed: a; unchanged: 0"
    assert diff_states(None, before).added == ("a", "b")


def test_readding_a_removed_entry_unchanged_is_recognised() -> None:
    first = RegistryState.of(registry(A, B))
    without = RegistryState.of(registry(B), first)
    back = RegistryState.of(registry(A, B), without)
    assert diff_states(without, back).readded_unchanged == ("a",)
    changed_back = RegistryState.of(registry({**A, "seed": 9}, B), without)
    assert diff_states(without, changed_back).readded_unchanged == ()
    assert "a" not in back.retired


def test_cursor_round_trip_and_errors() -> None:
    state = RegistryState.of(registry(A, GPU))
    cursor = SensorCursor(state=state, pending=(PlannedRun("big", "argument_quality", "added"),))
    again = SensorCursor.from_json(cursor.to_json())
    assert again == cursor
    assert list(again.state.entries) == ["a", "big"]
    assert SensorCursor.from_json(None) == SensorCursor(state=None)
    for bad in ("{", json.dumps({"version": 99, "state": None, "pending": []}), json.dumps([1])):
        with pytest.raises(CursorError):
            SensorCursor.from_json(bad)


def test_plan_runs_each_study_of_new_entries_and_only_runnable_backends() -> None:
    reg = registry(A, B, GPU)
    diff = diff_states(None, RegistryState.of(reg))
    plan = plan_registry_work(
        reg,
        diff,
        existing_partitions=["a"],
        run_backends=default_run_backends(),
        materialized={"argument_quality": {"a"}},
        studies_available={"argument_quality", "political"},
        first_tick=True,
    )
    assert plan.partitions_to_add == ("b", "big")
    assert [(r.partition_key, r.study) for r in plan.runs] == [
        ("b", "argument_quality"),
        ("b", "political"),
    ]
    reasons = {(s.partition_key, s.study): s.reason for s in plan.skipped}
    assert "already materialised" in reasons[("a", "argument_quality")]
    assert "backend 'vllm' is not run automatically" in reasons[("big", "argument_quality")]


def test_plan_skips_studies_without_assets_and_reports_removals() -> None:
    before = RegistryState.of(registry(A, B))
    reg = registry(B)
    diff = diff_states(before, RegistryState.of(reg, before))
    diff_changed = diff_states(RegistryState.of(registry({**B, "seed": 1})), RegistryState.of(reg))
    plan = plan_registry_work(reg, diff_changed, ["b"], default_run_backends(), {}, {"argument_quality"}, False)
    assert [(r.partition_key, r.study, r.reason) for r in plan.runs] == [("b", "argument_quality", "changed")]
    assert [s.study for s in plan.skipped] == ["political"]
    removal = plan_registry_work(reg, diff, ["a", "b"], default_run_backends(), {}, {"argument_quality"}, False)
    assert removal.removed == ("a",) and removal.runs == () and removal.partitions_to_add == ()


def test_merge_pending_drops_removed_entries_and_left_studies() -> None:
    reg = registry({**B, "studies": ["argument_quality"]})
    pending = (PlannedRun("a", "argument_quality", "added"), PlannedRun("b", "political", "added"))
    new = (PlannedRun("b", "argument_quality", "added"), PlannedRun("b", "argument_quality", "changed"))
    assert merge_pending(pending, new, reg) == (PlannedRun("b", "argument_quality", "changed"),)


def test_run_backends_from_the_environment() -> None:
    assert run_backends({}) == default_run_backends()
    assert "vllm" not in default_run_backends() and "random" in default_run_backends()
    assert "vllm" in run_backends({"ARGASSETS_RUN_BACKENDS": "all"})
    assert run_backends({"ARGASSETS_RUN_BACKENDS": "none"}) == frozenset()
    assert run_backends({"ARGASSETS_RUN_BACKENDS": ""}) == frozenset()
    assert run_backends({"ARGASSETS_RUN_BACKENDS": "random, import"}) == {"random", "import"}
    with pytest.raises(ValueError, match="unknown backend"):
        run_backends({"ARGASSETS_RUN_BACKENDS": "random,gpt"})


def test_run_tags_carry_gpus_pool_and_kubernetes_requests() -> None:
    cpu = run_tags_for_entry(registry(A).get("a"), study="argument_quality")
    assert cpu == {
        "argassets/model": "a",
        "argassets/backend": "random",
        "argassets/gpus": "0",
        "argassets/study": "argument_quality",
    }
    gpu = run_tags_for_entry(registry(GPU).get("big"), environ={"ARGASSETS_K8S_GPU_NODE_SELECTOR": '{"gpu": "h100"}'})
    assert gpu["argassets/gpus"] == "4" and gpu["argassets/pool"] == "gpu"
    k8s = json.loads(gpu["dagster-k8s/config"])
    assert k8s["container_config"]["resources"]["requests"] == {"nvidia.com/gpu": "4"}
    assert k8s["pod_spec_config"]["node_selector"] == {"gpu": "h100"}
    assert all(isinstance(v, str) for v in gpu.values()), "run tags must be strings"
    with pytest.raises(ValueError, match="JSON object"):
        gpu_node_selector({"ARGASSETS_K8S_GPU_NODE_SELECTOR": '["x"]'})


def test_stale_keys_follow_inputs_and_skip_what_cannot_run() -> None:
    parents = {"prompts": [], "judgments": ["prompts"], "votes": ["judgments"], "report": ["votes", "corpus"]}
    latest = {"prompts": 5, "judgments": 7, "votes": 8, "report": 9, "corpus": 1}
    assert stale_keys(parents, latest, ["judgments", "votes", "report"]) == []
    latest["prompts"] = 10  # prompts re-materialised: everything below is stale
    assert stale_keys(parents, latest, ["judgments", "votes", "report"]) == ["judgments", "votes", "report"]
    latest = {"prompts": 5, "judgments": 7, "votes": None, "report": None, "corpus": None}
    # votes is missing -> refreshed; report has a missing required input (corpus) -> left out
    assert stale_keys(parents, latest, ["votes", "report"]) == ["votes"]
    # an optional missing input (a model partition that never ran) does not block
    assert stale_keys({"r": ["p1", "p2"]}, {"p1": 3, "p2": None, "r": 2}, ["r"], optional_parents={"p2"}) == ["r"]
    assert stale_keys({"r": ["p1"]}, {"p1": None, "r": None}, ["r"], optional_parents={"p1"}) == []


def test_fingerprints_did_not_change_when_scopes_became_per_study() -> None:
    """Hashes computed before scopes were per study: an upgrade must not make every entry look edited."""
    both = ["argument_quality", "political"]
    pilot = {"topics": [1, 2], "dimensions": ["logic"], "strategies": ["zero"], "max_comparisons": 40}
    entries = registry(
        {"name": "plain", "backend": "random", "studies": both},
        {"name": "pilot", "backend": "random", "studies": both, "scope": {**pilot, "max_arguments": 20}},
        {"name": "aq", "backend": "random", "studies": ["argument_quality"], "scope": {"dimensions": ["rhetoric"]}},
    )
    tables = registry(
        {
            "name": "pilot",
            "backend": "random",
            "studies": both,
            "scope": {"argument_quality": pilot, "political": {"max_arguments": 20}},
        }
    )
    before = {"plain": "eba6313f7945ca95", "pilot": "94a83406ad8c48c9", "aq": "37bf71ab4b54160a"}
    assert {name: entry_fingerprint(entries.get(name)) for name in before} == before
    assert entry_fingerprint(tables.get("pilot")) == before["pilot"]
