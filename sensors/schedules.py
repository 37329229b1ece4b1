"""The nightly refresh: materialise what is stale, and nothing else.

A node (an asset, or one model partition of a partitioned asset) is stale when it was never
materialised, or when one of its inputs was materialised after it (:func:`argassets.platform.automation.stale_keys`).
Each night the schedule requests:

- one run per model partition and study for its stale partitioned assets (the root, i.e. the
  judging itself, only for backends this deployment runs: ``$ARGASSETS_RUN_BACKENDS``), with the
  partition's registry tags;
- one run for the stale reports over all models, when no partition run is requested on the same
  night; otherwise the reports follow those runs through declarative automation (or the next night).

Declarative automation normally keeps everything fresh within a minute; this is the safety net
for failed runs, runs launched while the automation sensor was off, and re-materialised inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg

from argassets.platform.automation import OperationsLayout, operations_layout, stale_keys
from argassets.platform.partitions import JUDGE_MODELS
from argassets.platform.registry import RegistryError, load_registry
from sensors.registry_sensor import runnable_backends
from sensors.run_tags import MODEL_TAG, STUDY_TAG, run_tags_for_entry
from sensors.settings import schedule_status

NIGHTLY_CRON = "0 3 * * *"
ALL_PARTITIONS = "*"
#: An asset, or one partition of it (``None``: unpartitioned; ``ALL_PARTITIONS``: every one).
Node = tuple[dg.AssetKey, str | None]


def _latest_storage_id(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None) -> int | None:
    records_filter = dg.AssetRecordsFilter(
        asset_key=key, asset_partitions=[partition] if partition is not None else None
    )
    records = instance.fetch_materializations(records_filter, limit=1).records
    return records[0].storage_id if records else None


def plan_stale_runs(
    layout: OperationsLayout,
    instance: dg.DagsterInstance,
    partitions: list[str],
    studies_of: Mapping[str, Sequence[str]],
    runnable: dict[str, bool],
) -> tuple[list[tuple[str, str, list[dg.AssetKey]]], list[dg.AssetKey]]:
    """Stale partition work and stale reports.

    Parameters
    ----------
    layout
        The operations layout.
    instance
        Where materialisations are read.
    partitions
        Model partitions present in both the instance and the registry.
    studies_of
        Partition key to the studies its registry entry takes part in.
    runnable
        Partition key to whether its backend is judged automatically here.

    Returns
    -------
    tuple
        ``[(partition, study, stale keys in order)]`` and the stale reports in order.
    """
    parents: dict[Node, list[Node]] = {}
    latest: dict[Node, int | None] = {}
    targets: list[Node] = []
    optional: set[Node] = set()

    def node_latest(node: Node) -> None:
        if node not in latest:
            key, partition = node
            latest[node] = _latest_storage_id(instance, key, None if partition in (None, ALL_PARTITIONS) else partition)

    for study, _root in layout.roots.items():
        for partition in partitions:
            if study not in studies_of.get(partition, []):
                continue
            chain = list(layout.study_selection(study))
            if not runnable.get(partition, False):
                chain = chain[1:]
            for key in chain:
                node: Node = (key, partition)
                node_parents: list[Node] = []
                for parent in layout.parents.get(key, ()):
                    upstream: Node = (parent, partition if parent in layout.judge_partitioned else None)
                    node_parents.append(upstream)
                    node_latest(upstream)
                parents[node] = node_parents
                node_latest(node)
                targets.append(node)
    for key in layout.reports:
        node = (key, None)
        node_parents = []
        for parent in layout.parents.get(key, ()):
            if parent in layout.judge_partitioned:
                parent_node: Node = (parent, ALL_PARTITIONS)
                optional.add(parent_node)
            else:
                parent_node = (parent, None)
            node_parents.append(parent_node)
            node_latest(parent_node)
        parents[node] = node_parents
        node_latest(node)
        targets.append(node)
    # Partition nodes come first; a stale partition makes every report above it stale too.
    for report in [t for t in targets if t[1] is None]:
        for report_parent in list(parents[report]):
            if report_parent[1] == ALL_PARTITIONS:
                partition_nodes = [
                    t for t in targets if t[1] not in (None, ALL_PARTITIONS) and t[0] == report_parent[0]
                ]
                parents[report].extend(partition_nodes)
                optional.update(partition_nodes)
    chosen = stale_keys(parents, latest, targets, optional_parents=optional)
    partition_runs: dict[tuple[str, str], list[dg.AssetKey]] = {}
    for study, _root in layout.roots.items():
        study_keys = set(layout.study_selection(study))
        for chosen_key, chosen_partition in chosen:
            if chosen_partition is not None and chosen_key in study_keys:
                partition_runs.setdefault((chosen_partition, study), []).append(chosen_key)
    reports = [chosen_key for chosen_key, chosen_partition in chosen if chosen_partition is None]
    return [(p, s, keys) for (p, s), keys in partition_runs.items()], reports


def evaluate_nightly(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest] | dg.SkipReason:
    """The body of :data:`nightly_refresh_schedule`."""
    try:
        registry = load_registry()
        backends = runnable_backends()
    except (RegistryError, ValueError) as exc:
        return dg.SkipReason(f"nightly refresh skipped: {exc}")
    layout = operations_layout(context.repository_def.asset_graph)
    instance = context.instance
    existing = set(instance.get_dynamic_partitions(JUDGE_MODELS))
    partitions = [name for name in registry.names if name in existing]
    studies_of = {name: list(registry.get(name).studies) for name in partitions}
    runnable = {name: registry.get(name).backend in backends for name in partitions}
    partition_work, reports = plan_stale_runs(layout, instance, partitions, studies_of, runnable)
    try:
        stamp = context.scheduled_execution_time.strftime("%Y%m%dT%H%M")
    except Exception:  # evaluated outside a scheduled tick (tests, "Test schedule" in the UI)
        stamp = "manual"
    requests = []
    for partition, study, keys in partition_work:
        root = layout.roots[study]
        tags = (
            run_tags_for_entry(registry.get(partition), study=study)
            if root in keys
            else {MODEL_TAG: partition, STUDY_TAG: study}
        )
        requests.append(
            dg.RunRequest(
                run_key=f"nightly:{stamp}:{study}:{partition}",
                partition_key=partition,
                asset_selection=keys,
                tags={**tags, "argassets/purpose": "nightly-refresh"},
            )
        )
    if reports and not requests:
        requests.append(
            dg.RunRequest(
                run_key=f"nightly:{stamp}:reports",
                asset_selection=reports,
                tags={"argassets/purpose": "nightly-refresh"},
            )
        )
    elif reports:
        context.log.info(
            "stale reports left to declarative automation after tonight's partition runs: "
            + ", ".join(key.to_user_string() for key in reports)
        )
    if not requests:
        return dg.SkipReason("nothing is stale")
    return requests


@dg.schedule(
    name="nightly_refresh_schedule",
    cron_schedule=NIGHTLY_CRON,
    execution_timezone="UTC",
    target=dg.AssetSelection.all(),
    default_status=schedule_status(),
    description="Each night, materialise what is stale: model partitions behind their inputs, then reports.",
)
def nightly_refresh_schedule(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest] | dg.SkipReason:
    """Each night, materialise what is stale; see :mod:`sensors.schedules`."""
    return evaluate_nightly(context)
