"""The registry sensor: a new model in ``data/models.toml`` is judged without anyone asking.

Each tick reads the registry (``$ARGASSETS_MODELS`` or ``data/models.toml``), compares it with the
last valid state in the cursor, and returns a :class:`dagster.SensorResult`:

- every registry entry without a partition gets one (``judge_models`` add request), and one in
  the partitions of each study it takes part in (``models_<study>``, also for entries that
  predate those definitions: an upgraded instance catches up on the first tick);
- an added or changed entry gets one run per study it takes part in, materialising that
  partition of the study's root asset (its ``StudyDefinition.root_asset``) and of its
  partitioned aggregates, tagged with the entry's GPU count (:mod:`argassets.platform.operations.run_tags`); the
  reports over all models follow through declarative automation (:mod:`argassets.platform.operations.automation`);
- a removed entry is reported (log, skip message, and an observation on its partition); its
  partition and its stored judgments stay;
- an invalid registry is a :class:`dagster.SkipReason` naming the entry and the field; the cursor
  keeps the last valid state, so fixing the file resumes from there;
- an entry the machines running this deployment's runs cannot run (the pre-flight,
  :mod:`argassets.platform.operations.preflight`: GPUs, engines, endpoint variables, import
  files) gets its partition but no run, the skip message says why, and its root partitions carry
  an observation ``runnable_here = false`` with the reason (:mod:`~argassets.platform.operations.preflight_events`).

Runs are only requested for backends listed in ``$ARGASSETS_RUN_BACKENDS`` (comma-separated;
``all``; ``none``), read at each tick. Default: every backend except ``vllm``, which needs GPU
machines: on a GPU deployment set ``ARGASSETS_RUN_BACKENDS=all``. ``llama_cpp`` is left out
while llama-cpp-python is not installed. Other entries still get their partition, ready to be
materialised from the UI or the CLI.

When an unpartitioned input of a study (the corpus or prompt tables) is missing, as on a fresh
instance, the sensor first requests one run for those inputs and keeps the partition runs pending
in its cursor until they exist.

The sensor reads the instance (partitions, materialisations) but never writes to it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

import dagster as dg

from argassets.platform.operations.automation import OperationsLayout, operations_layout
from argassets.platform.operations.machine import machine_for_instance
from argassets.platform.operations.preflight import refusals
from argassets.platform.operations.preflight_events import preflight_observations
from argassets.platform.operations.run_tags import run_tags_for_entry
from argassets.platform.registry.diff import (
    CursorError,
    PlannedRun,
    RegistryDiff,
    RegistryState,
    SensorCursor,
    WorkPlan,
    diff_states,
    merge_pending,
    plan_registry_work,
)
from argassets.platform.registry.entries import ModelRegistry, RegistryError
from argassets.platform.registry.model_entry import engine_names, engine_type, is_valid_partition_key
from argassets.platform.registry.partitions import (
    JUDGE_MODELS,
    judge_models_partitions,
    study_partitions_name,
    study_partitions_requests,
)
from argassets.studies import load_registry
from sensors.settings import IMPLICIT_ASSET_JOB, sensor_status

RUN_BACKENDS_ENV_VAR = "ARGASSETS_RUN_BACKENDS"
UPSTREAM_RUN_TAG = "argassets/purpose"


def default_run_backends() -> frozenset[str]:
    """The engines run automatically when ``$ARGASSETS_RUN_BACKENDS`` is not set: those that say
    they run on any machine (``vllm`` needs GPUs)."""
    return frozenset(name for name in engine_names() if engine_type(name).runs_automatically_by_default)


def run_backends(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The backends this deployment runs automatically (``$ARGASSETS_RUN_BACKENDS``).

    Raises
    ------
    ValueError
        When the variable names an unknown backend.
    """
    env = os.environ if environ is None else environ
    raw = env.get(RUN_BACKENDS_ENV_VAR)
    if raw is None:
        return default_run_backends()
    names = {part.strip() for part in raw.split(",") if part.strip()}
    if not names or names == {"none"}:
        return frozenset()
    every = frozenset(engine_names())
    if names == {"all"}:
        return every
    unknown = names - every
    if unknown:
        raise ValueError(
            f"{RUN_BACKENDS_ENV_VAR}: unknown backend(s) {', '.join(sorted(unknown))} "
            f"(known: {', '.join(sorted(every))}, or 'all' / 'none')"
        )
    return frozenset(names)


def runnable_backends(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """:func:`run_backends` less the engines this machine cannot run (llama.cpp without llama-cpp-python)."""
    return frozenset(name for name in run_backends(environ) if engine_type(name).available_here())


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _is_materialized(instance: dg.DagsterInstance, key: dg.AssetKey) -> bool:
    return instance.get_latest_materialization_event(key) is not None


def _in_progress(instance: dg.DagsterInstance, key: dg.AssetKey) -> bool:
    """Whether a queued or running run plans to materialise ``key``."""
    planned = instance.get_latest_planned_materialization_info(key)
    if planned is None:
        return False
    run = instance.get_run_by_id(planned.run_id)
    return run is not None and not run.is_finished


def build_run_requests(
    plan_runs: tuple[PlannedRun, ...],
    registry: ModelRegistry,
    layout: OperationsLayout,
    instance: dg.DagsterInstance,
    state: RegistryState,
    tick_salt: str,
) -> tuple[list[dg.RunRequest], tuple[PlannedRun, ...], list[str]]:
    """Run requests for the pending runs whose study inputs exist; the rest stays pending.

    Returns the run requests, the runs still pending, and log lines.
    """
    requests: list[dg.RunRequest] = []
    still_pending: list[PlannedRun] = []
    messages: list[str] = []
    missing_by_study = {
        study: [key for key in layout.unpartitioned_ancestors.get(study, ()) if not _is_materialized(instance, key)]
        for study in {run.study for run in plan_runs}
    }
    missing_inputs: list[dg.AssetKey] = []
    if any(missing_by_study.values()):
        # Along with what the judging needs, everything else these studies' reports read; not
        # what a queued or running run is materialising already.
        for study in sorted(missing_by_study):
            missing_inputs += [
                key
                for key in layout.inputs_by_study.get(study, ())
                if key not in missing_inputs and not _is_materialized(instance, key) and not _in_progress(instance, key)
            ]
    if missing_inputs:
        names = ", ".join(key.to_user_string() for key in missing_inputs)
        requests.append(
            dg.RunRequest(
                asset_selection=missing_inputs,
                run_key=f"upstream:{_short_hash(names + state.to_cursor())}",
                tags={UPSTREAM_RUN_TAG: "study-inputs"},
            )
        )
        messages.append(f"study inputs missing, requested first (once per registry state): {names}")
    for run in plan_runs:
        if missing_by_study.get(run.study):
            still_pending.append(run)
            continue
        entry = registry.get(run.partition_key)
        requests.append(
            dg.RunRequest(
                partition_key=run.partition_key,
                asset_selection=layout.study_selection(run.study),
                run_key=f"{run.study}:{run.partition_key}:{state.entries[run.partition_key]}:{tick_salt}",
                tags=run_tags_for_entry(entry, study=run.study),
            )
        )
    if still_pending:
        waiting = ", ".join(f"{run.partition_key} ({run.study})" for run in still_pending)
        messages.append(f"runs waiting for their study inputs: {waiting}")
    return requests, tuple(still_pending), messages


def _registry_and_backends(context: dg.SensorEvaluationContext) -> tuple[ModelRegistry, frozenset[str]] | dg.SkipReason:
    """The registry and the backends run here, or the skip reason (logged) when either is invalid."""
    try:
        registry = load_registry()
    except RegistryError as exc:
        message = f"registry edit not applied; keeping the last valid state. {exc}"
        context.log.error(message)
        return dg.SkipReason(message)
    try:
        backends = runnable_backends()
    except ValueError as exc:
        context.log.error(str(exc))
        return dg.SkipReason(str(exc))
    return registry, backends


def _previous_cursor(context: dg.SensorEvaluationContext) -> SensorCursor:
    """The cursor of the last tick; an unreadable one (logged) starts from an empty state."""
    try:
        return SensorCursor.from_json(context.cursor)
    except CursorError as exc:
        context.log.warning(f"{exc}; starting from an empty state")
        return SensorCursor(state=None)


def _report_lines(diff: RegistryDiff, plan: WorkPlan, messages: list[str], invalid_keys: list[str]) -> list[str]:
    """What this tick did, one line per fact, for the log and the skip message."""
    lines = [f"registry {diff.describe()}"]
    if plan.partitions_to_add:
        lines.append("partitions added: " + ", ".join(plan.partitions_to_add))
    for run in plan.runs:
        lines.append(f"run requested: {run.partition_key} for {run.study} ({run.reason})")
    for skipped in plan.skipped:
        lines.append(f"not run: {skipped.partition_key} for {skipped.study}: {skipped.reason}")
    for name in plan.removed:
        lines.append(
            f"removed from the registry: {name}; its partition and stored judgments are kept "
            "(delete them by hand if you really mean to)"
        )
    lines.extend(messages)
    if invalid_keys:
        lines.append(
            "invalid partition keys (not model names; added by hand?), never run: "
            + ", ".join(repr(key) for key in invalid_keys)
        )
    return lines


def _log_lines(context: dg.SensorEvaluationContext, lines: list[str]) -> None:
    """Log each line; removals and invalid keys as warnings."""
    for line in lines:
        (context.log.warning if line.startswith(("removed", "invalid")) else context.log.info)(line)


def _removed_observations(
    removed: tuple[str, ...], layout: OperationsLayout, materialized: Mapping[str, set[str]]
) -> list[dg.AssetObservation]:
    """An observation on each materialised root partition of a model removed from the registry."""
    return [
        dg.AssetObservation(
            asset_key=layout.roots[study],
            partition=name,
            metadata={"registry_status": "removed from the model registry; stored results kept"},
        )
        for name in removed
        for study in layout.roots
        if name in materialized.get(study, set())
    ]


def _sensor_result(
    requests: list[dg.RunRequest],
    lines: list[str],
    partitions_to_add: tuple[str, ...],
    cursor: str,
    observations: list[dg.AssetObservation],
    study_additions: list[dg.AddDynamicPartitionsRequest],
) -> dg.SensorResult:
    """The tick's result: its runs, or a skip message of its report lines when there are none."""
    dynamic = [judge_models_partitions.build_add_request(list(partitions_to_add))] if partitions_to_add else []
    dynamic += study_additions
    if requests:
        return dg.SensorResult(
            run_requests=requests,
            dynamic_partitions_requests=dynamic,
            cursor=cursor,
            asset_events=observations,
        )
    return dg.SensorResult(
        skip_reason=dg.SkipReason("; ".join(lines)),
        dynamic_partitions_requests=dynamic,
        cursor=cursor,
        asset_events=observations,
    )


def evaluate_registry(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    """The body of :data:`model_registry_sensor` (see the module docstring)."""
    loaded = _registry_and_backends(context)
    if isinstance(loaded, dg.SkipReason):
        return loaded
    registry, backends = loaded
    previous = _previous_cursor(context)

    instance = context.instance
    assert context.repository_def is not None, "the sensor runs inside a code location"
    layout = operations_layout(context.repository_def.asset_graph, registry.studies)
    state = RegistryState.of(registry, previous.state)
    diff = diff_states(previous.state, state)
    materialized = {study: instance.get_materialized_partitions(key) for study, key in layout.roots.items()}
    existing = instance.get_dynamic_partitions(JUDGE_MODELS)
    in_studies = [
        key for study in layout.roots for key in instance.get_dynamic_partitions(study_partitions_name(study))
    ]
    # Keys added by hand in the UI accept any text; one that is not a model name is never run.
    invalid_keys = [key for key in dict.fromkeys([*existing, *in_studies]) if not is_valid_partition_key(key)]
    # What the machines that run this deployment's runs cannot run gets a partition, no run.
    machine = machine_for_instance(instance)
    refused = refusals(registry, registry.names, machine)
    plan: WorkPlan = plan_registry_work(
        registry,
        diff,
        existing_partitions=[key for key in existing if is_valid_partition_key(key)],
        run_backends=backends,
        materialized=materialized,
        studies_available=set(layout.roots),
        first_tick=previous.state is None,
        refused={name: f"{r.reason}: {r.remedy}" for name, r in refused.items()},
    )
    pending = merge_pending(previous.pending, plan.runs, registry)
    requests, still_pending, messages = build_run_requests(
        pending, registry, layout, instance, state, tick_salt=_short_hash(context.cursor or "")
    )
    lines = _report_lines(diff, plan, messages, invalid_keys)
    _log_lines(context, lines)
    observations = _removed_observations(plan.removed, layout, materialized)
    in_study = {study: instance.get_dynamic_partitions(study_partitions_name(study)) for study in layout.roots}
    observations += preflight_observations(instance, layout.roots, in_study, refused, machine)
    cursor = SensorCursor(state=state, pending=still_pending).to_json()
    additions = study_partitions_requests(registry, instance, layout.roots)
    return _sensor_result(requests, lines, plan.partitions_to_add, cursor, observations, additions)


@dg.sensor(
    name="model_registry_sensor",
    description=(
        "Watches the model registry: adds a partition per entry (judge_models and its studies') and requests the "
        "studies' runs for new or changed entries; reports removed entries; skips invalid edits."
    ),
    minimum_interval_seconds=30,
    default_status=sensor_status(),
    # Dagster's implicit asset job: it holds assets of different partitions definitions (one per
    # study), which an anonymous job over AssetSelection.all() cannot; run requests select assets.
    job_name=IMPLICIT_ASSET_JOB,
)
def model_registry_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    """Watches the model registry; see :mod:`sensors.registry_sensor`."""
    return evaluate_registry(context)
