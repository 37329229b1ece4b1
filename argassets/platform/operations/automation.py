"""Declarative automation: what refreshes by itself once a model partition lands (docs/operations.md)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import dagster as dg

from argassets.platform.registry.partitions import is_model_partitions
from argassets.platform.study import Studies

#: How many levels above an unpartitioned report an in-progress run still holds it back.
UPSTREAM_DEPTH = 6
#: Assets of these kinds are never materialised automatically (run them from the UI or the CLI):
#: the Neo4j export writes to an external system that may not be configured, and a study design is
#: drawn once and fielded (a redraw would replace a study in the field). (Sentence embeddings were
#: here too; they are read from the embedding cache shared by every home, so only texts no home
#: embedded before cost CPU time, and run-default and the automation build them.)
MANUAL_KINDS: frozenset[str] = frozenset({"neo4j", "study_design"})

K = TypeVar("K", bound=Hashable)


def study_roots(studies: Studies) -> dict[str, str]:
    """The partitioned root asset of each study (the one that calls the judges), by study name."""
    return {study.name: study.root_asset for study in studies}


def is_judge_partitioned(partitions_def: dg.PartitionsDefinition | None) -> bool:
    """True for the model partitions (a study's ``models_<study>`` or ``judge_models``)."""
    return is_model_partitions(partitions_def)


def partition_condition() -> dg.AutomationCondition:
    """Per model partition: refresh when that partition's inputs update (``eager``)."""
    return dg.AutomationCondition.eager()


def _upstream_in_progress(depth: int = UPSTREAM_DEPTH) -> dg.AutomationCondition:
    condition: dg.AutomationCondition = dg.AutomationCondition.in_progress()
    for _ in range(depth - 1):
        condition = dg.AutomationCondition.in_progress() | dg.AutomationCondition.any_deps_match(condition)
    return dg.AutomationCondition.any_deps_match(condition).with_label("any_upstream_in_progress")


def study_reports_busy(study: str, report_keys: Iterable[dg.AssetKey]) -> dg.AutomationCondition:
    """True while any of ``report_keys`` (a study's reports) is in a queued or running run."""
    keys = sorted(set(report_keys), key=str)
    if not keys:
        raise ValueError(f"study {study!r}: no report keys to watch")
    matches = [dg.AutomationCondition.asset_matches(key, dg.AutomationCondition.in_progress()) for key in keys]
    return functools.reduce(operator.or_, matches).with_label(f"report_run_of_{study}_in_progress")


def upstream_updated_since_requested() -> dg.AutomationCondition:
    """An upstream update not yet answered by a request of this asset.

    Unlike ``since_last_handled()``, the asset's own materialisation does not clear it: a report
    run that read an input before another run replaced it lands later than that replacement, and
    would otherwise hide it for good (the report stays stale, "Upstream data"). Nor does the tick
    after the request clear an update seen on that same tick (Dagster's ``since`` lets the reset
    win when both are new on one tick): the run requested may have read the copy it replaced.
    """
    updated = dg.AutomationCondition.any_deps_updated()
    answered = (dg.AutomationCondition.newly_requested() & ~updated) | dg.AutomationCondition.initial_evaluation()
    return updated.since(answered).with_label("upstream_updated_since_requested")


def all_partitions_condition(
    judge_partitioned: Iterable[dg.AssetKey] | dg.AssetSelection,
    depth: int = UPSTREAM_DEPTH,
    study_reports: tuple[str, Iterable[dg.AssetKey]] | None = None,
) -> dg.AutomationCondition:
    """For assets over all model partitions: refresh once, after every upstream run finished.

    Parameters
    ----------
    judge_partitioned
        The assets partitioned by model; their missing partitions do not hold a
        refresh back.
    depth
        Levels of ancestors whose queued or running runs hold the refresh back.
    study_reports
        The study's name and its reports: while any of them is queued or running, none is requested
        (one report run per study at a time; the next one reads what the last one wrote).
    """
    selection = (
        judge_partitioned
        if isinstance(judge_partitioned, dg.AssetSelection)
        else dg.AssetSelection.assets(*judge_partitioned)
    )
    condition = (
        upstream_updated_since_requested()
        & ~dg.AutomationCondition.any_deps_missing().ignore(selection)
        & ~_upstream_in_progress(depth)
        & ~dg.AutomationCondition.in_progress()
    )
    if study_reports is not None:
        condition = condition & ~study_reports_busy(*study_reports)
    return condition.with_label("after_all_model_partitions")


@dataclass(frozen=True)
class OperationsLayout:
    """Where each study's work sits in the asset graph (computed from the assets, not hard-coded).

    Attributes
    ----------
    roots
        Study name to the key of its partitioned root asset (only studies present).
    partitioned_downstream
        Study name to the model-partitioned assets downstream of its root (root
        excluded), in topological order; a run of one partition materialises root and these.
    unpartitioned_ancestors
        Study name to the materialisable unpartitioned assets upstream of its root.
    judge_partitioned
        Every asset partitioned by model.
    reports
        Every unpartitioned asset downstream of a study root, in topological order, except those
        of :data:`MANUAL_KINDS`.
    inputs
        The unpartitioned assets the studies and their reports read that no study produces
        (corpora, prompts, expert scores, the knowledge base), in topological order.
    standalone
        The other unpartitioned assets built from a study's inputs but not from its judgments
        (e.g. human-only analyses), or defined by a study and reading no asset (e.g. the
        comparison graph of Study B's human pairwise study, read from the published data), in
        topological order, except those of :data:`MANUAL_KINDS`.
    reports_by_study, inputs_by_study, standalone_by_study
        The same, per study.
    parents
        Asset key to its parent keys, for every asset of the graph.
    """

    roots: Mapping[str, dg.AssetKey]
    partitioned_downstream: Mapping[str, tuple[dg.AssetKey, ...]]
    unpartitioned_ancestors: Mapping[str, tuple[dg.AssetKey, ...]]
    judge_partitioned: frozenset[dg.AssetKey]
    reports: tuple[dg.AssetKey, ...]
    inputs: tuple[dg.AssetKey, ...]
    standalone: tuple[dg.AssetKey, ...]
    reports_by_study: Mapping[str, tuple[dg.AssetKey, ...]]
    inputs_by_study: Mapping[str, tuple[dg.AssetKey, ...]]
    standalone_by_study: Mapping[str, tuple[dg.AssetKey, ...]]
    parents: Mapping[dg.AssetKey, frozenset[dg.AssetKey]]

    def study_selection(self, study: str) -> list[dg.AssetKey]:
        """The assets one run of a study's partition materialises: root, then its partitioned children."""
        return [self.roots[study], *self.partitioned_downstream.get(study, ())]


def _as_asset_graph(assets: Any) -> Any:
    from dagster._core.definitions.assets.graph.asset_graph import AssetGraph

    if isinstance(assets, AssetGraph):
        return assets
    items = [dg.AssetsDefinition(specs=[item]) if isinstance(item, dg.AssetSpec) else item for item in assets]
    defined = {key for item in items for key in (item.keys if isinstance(item, dg.AssetsDefinition) else {item.key})}
    undefined = {
        dep
        for item in items
        if isinstance(item, dg.AssetsDefinition)
        for deps in item.asset_deps.values()
        for dep in deps
        if dep not in defined
    }
    # Deps on keys nobody defines (yet) become external assets, as Definitions would make them.
    externals = [dg.AssetsDefinition(specs=[dg.AssetSpec(key)]) for key in sorted(undefined, key=str)]
    return AssetGraph.from_assets([*items, *externals])


def keys_defined_by_study(studies: Studies) -> dict[str, frozenset[dg.AssetKey]]:
    """The asset keys each study's asset modules define (for assets the graph places in no study)."""
    defined: dict[str, frozenset[dg.AssetKey]] = {}
    for study in studies:
        keys: set[dg.AssetKey] = set()
        for module in study.asset_modules():
            for value in vars(module).values():
                if isinstance(value, dg.AssetsDefinition):
                    keys |= set(value.keys)
        defined[study.name] = frozenset(keys)
    return defined


def closure(start: dg.AssetKey, edges: Mapping[dg.AssetKey, Collection[dg.AssetKey]]) -> set[dg.AssetKey]:
    """Every key reachable from ``start`` along ``edges`` (parents or children), ``start`` excluded."""
    seen: set[dg.AssetKey] = set()
    stack = list(edges.get(start, ()))
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        stack.extend(edges.get(key, ()))
    return seen


@dataclass(frozen=True)
class _GraphView:
    """An asset graph in topological order, with the edges both ways."""

    graph: Any
    position: dict[dg.AssetKey, int]
    parents: dict[dg.AssetKey, frozenset[dg.AssetKey]]
    children: dict[dg.AssetKey, set[dg.AssetKey]]
    judge_partitioned: frozenset[dg.AssetKey]

    @classmethod
    def of(cls, graph: Any) -> _GraphView:
        order = list(graph.toposorted_asset_keys)
        parents = {key: frozenset(graph.get(key).parent_keys) for key in order}
        children: dict[dg.AssetKey, set[dg.AssetKey]] = {key: set() for key in order}
        for key, ps in parents.items():
            for parent in ps:
                children.setdefault(parent, set()).add(key)
        partitioned = frozenset(key for key in order if is_judge_partitioned(graph.get(key).partitions_def))
        return cls(graph, {key: i for i, key in enumerate(order)}, parents, children, partitioned)

    def automatable(self, key: dg.AssetKey) -> bool:
        node = self.graph.get(key)
        return node.is_materializable and not (set(node.kinds) & MANUAL_KINDS)

    def ordered(self, keys: Iterable[dg.AssetKey]) -> tuple[dg.AssetKey, ...]:
        return tuple(sorted((k for k in keys if k in self.position), key=self.position.__getitem__))


def _study_closures(view: _GraphView, studies: Studies) -> tuple[dict, dict, dict, dict[str, set[dg.AssetKey]]]:
    """Per study: its root, the partitioned assets below it, the unpartitioned ones above it, all below it."""
    roots: dict[str, dg.AssetKey] = {}
    partitioned_downstream: dict[str, tuple[dg.AssetKey, ...]] = {}
    unpartitioned_ancestors: dict[str, tuple[dg.AssetKey, ...]] = {}
    downstream_by_study: dict[str, set[dg.AssetKey]] = {}
    for study, name in study_roots(studies).items():
        key = dg.AssetKey(name)
        if key not in view.position:
            continue
        roots[study] = key
        downstream_by_study[study] = downstream = closure(key, view.children)
        partitioned_downstream[study] = view.ordered(k for k in downstream if k in view.judge_partitioned)
        unpartitioned_ancestors[study] = view.ordered(
            k
            for k in closure(key, view.parents)
            if k not in view.judge_partitioned and view.graph.get(k).is_materializable
        )
    return roots, partitioned_downstream, unpartitioned_ancestors, downstream_by_study


def _reports_and_inputs(
    view: _GraphView, roots: dict[str, dg.AssetKey], downstream_by_study: dict[str, set[dg.AssetKey]]
) -> tuple[dict[str, tuple[dg.AssetKey, ...]], dict[str, tuple[dg.AssetKey, ...]]]:
    """Per study, its reports (automatable, below its root) and the inputs they and the root read."""
    all_downstream = set().union(*downstream_by_study.values()) if downstream_by_study else set()
    reports_by_study: dict[str, tuple[dg.AssetKey, ...]] = {}
    inputs_by_study: dict[str, tuple[dg.AssetKey, ...]] = {}
    for study, downstream in downstream_by_study.items():
        reports_by_study[study] = view.ordered(
            k for k in downstream if k not in view.judge_partitioned and view.automatable(k)
        )
        needed = closure(roots[study], view.parents)
        for report in reports_by_study[study]:
            needed |= closure(report, view.parents)
        inputs_by_study[study] = view.ordered(
            k for k in needed if k not in all_downstream and k not in view.judge_partitioned and view.automatable(k)
        )
    return reports_by_study, inputs_by_study


def _standalone(
    view: _GraphView, studies: Studies, inputs_by_study: dict[str, tuple[dg.AssetKey, ...]], placed: set[dg.AssetKey]
) -> dict[str, tuple[dg.AssetKey, ...]]:
    """Per study, the assets built from its inputs, or defined by it and reading none (a resource only)."""
    defined = keys_defined_by_study(studies)
    return {
        study: view.ordered(
            k
            for k in view.position
            if k not in placed
            and view.automatable(k)
            and (closure(k, view.parents) & set(inputs) or (k in defined.get(study, ()) and not view.parents[k]))
        )
        for study, inputs in inputs_by_study.items()
    }


def operations_layout(assets: Any, studies: Studies) -> OperationsLayout:
    """Compute the :class:`OperationsLayout` of ``studies`` from assets definitions or an asset graph."""
    view = _GraphView.of(_as_asset_graph(assets))
    roots, partitioned_downstream, unpartitioned_ancestors, downstream_by_study = _study_closures(view, studies)
    reports_by_study, inputs_by_study = _reports_and_inputs(view, roots, downstream_by_study)
    all_downstream = set().union(*downstream_by_study.values()) if downstream_by_study else set()
    placed = all_downstream | view.judge_partitioned | {k for keys in inputs_by_study.values() for k in keys}
    standalone_by_study = _standalone(view, studies, inputs_by_study, placed)
    union = lambda groups: view.ordered({k for keys in groups.values() for k in keys})  # noqa: E731
    return OperationsLayout(
        roots=roots,
        partitioned_downstream=partitioned_downstream,
        unpartitioned_ancestors=unpartitioned_ancestors,
        judge_partitioned=view.judge_partitioned,
        reports=union(reports_by_study),
        inputs=union(inputs_by_study),
        standalone=union(standalone_by_study),
        reports_by_study=reports_by_study,
        inputs_by_study=inputs_by_study,
        standalone_by_study=standalone_by_study,
        parents=view.parents,
    )


def report_groups(layout: OperationsLayout) -> dict[str, tuple[dg.AssetKey, ...]]:
    """Each study's reports, refreshed together: one automation sensor and one run at a time each.

    A report downstream of two studies belongs to the first (the groups do not overlap, as one
    asset may be targeted by one automation sensor only); studies without reports are left out.
    """
    groups: dict[str, tuple[dg.AssetKey, ...]] = {}
    taken: set[dg.AssetKey] = set()
    for study, reports in layout.reports_by_study.items():
        own = tuple(key for key in reports if key not in taken)
        taken.update(own)
        if own:
            groups[study] = own
    return groups


def automation_conditions_for(layout: OperationsLayout) -> dict[dg.AssetKey, dg.AutomationCondition]:
    """The condition each downstream asset gets (roots themselves are run by the registry sensor)."""
    conditions: dict[dg.AssetKey, dg.AutomationCondition] = {}
    judge_partitioned = sorted(layout.judge_partitioned, key=str)
    for keys in layout.partitioned_downstream.values():
        for key in keys:
            conditions[key] = partition_condition()
    for study, reports in report_groups(layout).items():
        reports_condition = all_partitions_condition(judge_partitioned, study_reports=(study, reports))
        for key in reports:
            conditions[key] = reports_condition
    for key in layout.standalone:
        # Built once, and again when an input changes, so that their checks are evaluated too.
        conditions[key] = dg.AutomationCondition.eager()
    return conditions


def with_automation(assets: Sequence[Any], studies: Studies) -> list[Any]:
    """``assets`` with the automation conditions of this module attached where none is set.

    Conditions the asset's owner set are kept. Applied to every study's assets when the platform
    builds the study's definitions (:mod:`argassets.platform.operations.study_definitions`).
    """
    layout = operations_layout(
        [a for a in assets if isinstance(a, (dg.AssetsDefinition, dg.SourceAsset, dg.AssetSpec))], studies
    )
    wanted = automation_conditions_for(layout)
    result: list[Any] = []
    for item in assets:
        if not isinstance(item, dg.AssetsDefinition):
            result.append(item)
            continue
        existing = item.automation_conditions_by_key
        updates = {key: wanted[key] for key in item.keys if key in wanted and existing.get(key) is None}
        result.append(item.with_attributes(automation_condition=updates) if updates else item)
    return result


def stale_keys(
    parents: Mapping[K, Collection[K]],
    latest: Mapping[K, int | None],
    targets: Sequence[K],
    optional_parents: Collection[K] = (),
) -> list[K]:
    """Targets to refresh: missing, older than a parent, or downstream of a target to refresh.

    Parameters
    ----------
    parents
        Each node's parents (nodes may be assets or (asset, partition) pairs).
    latest
        Each node's latest materialisation as a monotonic number (event storage id), ``None``
        when never materialised. Nodes absent from the mapping count as never materialised.
    targets
        Candidate nodes, in topological order.
    optional_parents
        Parents whose absence does not prevent a refresh (model partitions that never ran).

    Returns
    -------
    list
        The targets to refresh, in the order of ``targets``. A target with a missing parent that
        is neither optional nor refreshed itself is left out (it could not run), and so is a
        target none of whose parents exists.
    """
    chosen: list[K] = []
    chosen_set: set[K] = set()
    optional = set(optional_parents)
    for node in targets:
        own = latest.get(node)
        blocked = False
        newer = False
        for parent in parents.get(node, ()):
            parent_latest = latest.get(parent)
            if parent in chosen_set:
                newer = True
            elif parent_latest is None:
                if parent not in optional:
                    blocked = True
            elif own is None or parent_latest > own:
                newer = True
        if blocked:
            continue
        has_input = any(latest.get(parent) is not None or parent in chosen_set for parent in parents.get(node, ()))
        if parents.get(node) and not has_input:
            continue
        if own is None or newer:
            chosen.append(node)
            chosen_set.add(node)
    return chosen
