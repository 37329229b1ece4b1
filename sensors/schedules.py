"""The nightly refresh: materialise what is stale, and nothing else.

A node (an asset, or one model partition of a partitioned asset) is stale when it was never
materialised, or when one of its inputs was materialised after it (:func:`argassets.platform.operations.automation.stale_keys`).
Each night the schedule requests:

- one run per model partition and study for its stale partitioned assets (the root, i.e. the
  judging itself, only for backends this deployment runs: ``$ARGASSETS_RUN_BACKENDS``, and only
  for entries the pre-flight lets run where runs execute, the others logged with its reason),
  with the partition's registry tags;
- one run for the stale reports over all models, when no partition run is requested on the same
  night; otherwise the reports follow those runs through declarative automation (or the next night).

Declarative automation normally keeps everything fresh within a minute; this is the safety net
for failed runs, runs launched while the automation sensor was off, and re-materialised inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import dagster as dg

from argassets.platform.operations.automation import OperationsLayout, operations_layout, report_groups, stale_keys
from argassets.platform.operations.machine import machine_for_instance
from argassets.platform.operations.preflight import refusals
from argassets.platform.operations.run_tags import MODEL_TAG, REPORTS_TAG, STUDY_TAG, run_tags_for_entry
from argassets.platform.registry.entries import RegistryError
from argassets.platform.registry.partitions import JUDGE_MODELS
from argassets.studies import load_registry
from sensors.registry_sensor import runnable_backends
from sensors.settings import IMPLICIT_ASSET_JOB, schedule_status

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


@dataclass
class _StaleGraph:
    """The nodes the nightly refresh considers: their parents, latest materialisations, order."""

    instance: dg.DagsterInstance
    parents: dict[Node, list[Node]] = field(default_factory=dict)
    latest: dict[Node, int | None] = field(default_factory=dict)
    targets: list[Node] = field(default_factory=list)
    optional: set[Node] = field(default_factory=set)

    def read_latest(self, node: Node) -> None:
        """Read a node's latest materialisation once (of any partition for ``ALL_PARTITIONS``)."""
        if node not in self.latest:
            key, partition = node
            self.latest[node] = _latest_storage_id(
                self.instance, key, None if partition in (None, ALL_PARTITIONS) else partition
            )

    def add_target(self, node: Node, node_parents: list[Node]) -> None:
        """A candidate for refreshing, after its parents (whose latest are read too)."""
        for parent in node_parents:
            self.read_latest(parent)
        self.parents[node] = node_parents
        self.read_latest(node)
        self.targets.append(node)


def _add_partition_targets(
    graph: _StaleGraph,
    layout: OperationsLayout,
    partitions: list[str],
    studies_of: Mapping[str, Sequence[str]],
    runnable: dict[str, bool],
) -> None:
    """Each study's partitioned assets of each partition taking part (the root only if runnable)."""
    for study in layout.roots:
        for partition in partitions:
            if study not in studies_of.get(partition, []):
                continue
            chain = list(layout.study_selection(study))
            if not runnable.get(partition, False):
                chain = chain[1:]
            for key in chain:
                node_parents: list[Node] = [
                    (parent, partition if parent in layout.judge_partitioned else None)
                    for parent in layout.parents.get(key, ())
                ]
                graph.add_target((key, partition), node_parents)


def _add_report_targets(graph: _StaleGraph, layout: OperationsLayout) -> None:
    """The reports over all models; a partitioned parent is every partition of it, and optional."""
    for key in layout.reports:
        node_parents: list[Node] = []
        for parent in layout.parents.get(key, ()):
            if parent in layout.judge_partitioned:
                parent_node: Node = (parent, ALL_PARTITIONS)
                graph.optional.add(parent_node)
            else:
                parent_node = (parent, None)
            node_parents.append(parent_node)
        graph.add_target((key, None), node_parents)


def _link_reports_to_partitions(graph: _StaleGraph) -> None:
    """Partition nodes come first; a stale partition makes every report above it stale too."""
    for report in [t for t in graph.targets if t[1] is None]:
        for report_parent in list(graph.parents[report]):
            if report_parent[1] == ALL_PARTITIONS:
                partition_nodes = [
                    t for t in graph.targets if t[1] not in (None, ALL_PARTITIONS) and t[0] == report_parent[0]
                ]
                graph.parents[report].extend(partition_nodes)
                graph.optional.update(partition_nodes)


def _partition_runs(layout: OperationsLayout, chosen: list[Node]) -> list[tuple[str, str, list[dg.AssetKey]]]:
    """The chosen partition nodes as one run per (partition, study), keys in order."""
    partition_runs: dict[tuple[str, str], list[dg.AssetKey]] = {}
    for study in layout.roots:
        study_keys = set(layout.study_selection(study))
        for chosen_key, chosen_partition in chosen:
            if chosen_partition is not None and chosen_key in study_keys:
                partition_runs.setdefault((chosen_partition, study), []).append(chosen_key)
    return [(p, s, keys) for (p, s), keys in partition_runs.items()]


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
    graph = _StaleGraph(instance)
    _add_partition_targets(graph, layout, partitions, studies_of, runnable)
    _add_report_targets(graph, layout)
    _link_reports_to_partitions(graph)
    chosen = stale_keys(graph.parents, graph.latest, graph.targets, optional_parents=graph.optional)
    reports = [chosen_key for chosen_key, chosen_partition in chosen if chosen_partition is None]
    return _partition_runs(layout, chosen), reports


def report_requests(layout: OperationsLayout, reports: Sequence[dg.AssetKey], stamp: str) -> list[dg.RunRequest]:
    """The stale reports, one run per study, tagged as the automation's report runs are (so the
    queue runs them one at a time with those); reports of no study in one more run."""
    purpose = {"argassets/purpose": "nightly-refresh"}
    requests: list[dg.RunRequest] = []
    placed: set[dg.AssetKey] = set()
    for study, keys in report_groups(layout).items():
        own = [key for key in reports if key in keys]
        if own:
            tags = {**purpose, REPORTS_TAG: study}
            requests.append(dg.RunRequest(run_key=f"nightly:{stamp}:reports:{study}", asset_selection=own, tags=tags))
            placed.update(own)
    rest = [key for key in reports if key not in placed]
    if rest:
        requests.append(dg.RunRequest(run_key=f"nightly:{stamp}:reports", asset_selection=rest, tags=purpose))
    return requests


def evaluate_nightly(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest] | dg.SkipReason:
    """The body of :data:`nightly_refresh_schedule`."""
    try:
        registry = load_registry()
        backends = runnable_backends()
    except (RegistryError, ValueError) as exc:
        return dg.SkipReason(f"nightly refresh skipped: {exc}")
    layout = operations_layout(context.repository_def.asset_graph, registry.studies)
    instance = context.instance
    existing = set(instance.get_dynamic_partitions(JUDGE_MODELS))
    partitions = [name for name in registry.names if name in existing]
    studies_of = {name: list(registry.get(name).studies) for name in partitions}
    refused = refusals(registry, partitions, machine_for_instance(instance))
    for refusal in refused.values():
        context.log.info(f"not judged tonight: {refusal.line}")
    runnable = {name: registry.get(name).backend in backends and name not in refused for name in partitions}
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
        requests = report_requests(layout, reports, stamp)
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
    # Dagster's implicit asset job: it holds assets of different partitions definitions (one per
    # study), which an anonymous job over AssetSelection.all() cannot; run requests select assets.
    job_name=IMPLICIT_ASSET_JOB,
    default_status=schedule_status(),
    description="Each night, materialise what is stale: model partitions behind their inputs, then reports.",
)
def nightly_refresh_schedule(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest] | dg.SkipReason:
    """Each night, materialise what is stale; see :mod:`sensors.schedules`."""
    return evaluate_nightly(context)
