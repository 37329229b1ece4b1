"""The run-tag policy: every run of a model partition carries its registry tags, however launched.

The registry sensor, the per-study jobs and the ``argassets`` CLI tag their runs with
:func:`argassets.platform.operations.run_tags.run_tags_for_entry`. A run launched from the UI's asset graph (the implicit
asset job) or a UI backfill of assets carries only ``dagster/partition``. :class:`TaggingRunCoordinator`
is the instance's run queue (``deploy/local/dagster.yaml``): before a run is queued it adds the
tags that the same function gives for the run's partition and study, and keeps every tag the run
already has, so the ``gpu`` run limit holds for UI runs too. A run that judges a partition this
machine cannot run (the pre-flight, :mod:`argassets.platform.operations.preflight`) is cancelled
before it is queued, its log saying why in one line.

The webserver and the daemon create the instance, and so import this module, without loading the
code location: it imports the studies and the asset layout only when a run is submitted. It needs
the code location's studies and layout, so it sits above the sensors in the layers (pyproject's
import contracts), with ``argassets/definitions.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import dagster as dg
from dagster._core.run_coordinator import QueuedRunCoordinator, SubmitRunContext

from argassets.platform.operations.machine import machine_for_instance
from argassets.platform.operations.preflight import Refusal, refusals
from argassets.platform.registry.entries import RegistryError
from argassets.platform.registry.model_entry import ModelEntry

PARTITION_TAG = "dagster/partition"


def registry_entry(name: str) -> ModelEntry | None:
    """The registry's entry ``name``; None when the registry has none (or cannot be read)."""
    from argassets.studies import load_registry

    try:
        return load_registry().get(name)
    except (RegistryError, KeyError, ValueError):
        return None


def study_of(selection: Collection[dg.AssetKey] | None) -> str | None:
    """The one study whose judging selection the run's assets belong to; None if none or several."""
    if not selection:
        return None
    from sensors.layout import code_location_layout

    layout = code_location_layout()
    chosen = [study for study in layout.roots if set(selection) & set(layout.study_selection(study))]
    return chosen[0] if len(chosen) == 1 else None


def policy_tags(
    tags: Mapping[str, str],
    selection: Collection[dg.AssetKey] | None,
    entry_for: Callable[[str], ModelEntry | None] = registry_entry,
) -> dict[str, str]:
    """The registry tags a run of a model partition lacks (empty for other runs, and for runs that
    were tagged when launched: a tag the run has is never replaced)."""
    from argassets.platform.operations.run_tags import MODEL_TAG, run_tags_for_entry

    partition = tags.get(PARTITION_TAG)
    if partition is None or MODEL_TAG in tags:
        return {}
    entry = entry_for(partition)
    if entry is None:
        return {}
    wanted = run_tags_for_entry(entry, study=study_of(selection))
    return {key: value for key, value in wanted.items() if key not in tags}


def judges(run: dg.DagsterRun) -> bool:
    """Whether ``run`` judges: its assets (or its study job's) include a study's root asset."""
    from argassets.platform.operations.jobs import study_job_name
    from sensors.layout import code_location_layout

    layout = code_location_layout()
    if run.asset_selection is None:
        return run.job_name in {study_job_name(root) for root in layout.roots.values()}
    return bool(set(run.asset_selection) & set(layout.roots.values()))


def launch_refusal(instance: dg.DagsterInstance, run: dg.DagsterRun) -> Refusal | None:
    """The pre-flight's refusal of a run that judges a partition its machine cannot run, else ``None``."""
    partition = run.tags.get(PARTITION_TAG)
    if partition is None or registry_entry(partition) is None or not judges(run):
        return None
    from argassets.studies import load_registry

    return refusals(load_registry(), [partition], machine_for_instance(instance)).get(partition)


class TaggingRunCoordinator(QueuedRunCoordinator):
    """Dagster's run queue, adding the registry tags of a model partition before a run is queued,
    and refusing (cancelling, with the pre-flight's one line) a run its machine cannot run."""

    def submit_run(self, context: SubmitRunContext) -> dg.DagsterRun:
        run = context.dagster_run
        refusal = launch_refusal(self._instance, run)
        if refusal is not None:
            # Cancelled, not failed: nothing ran, and the partition does not turn red.
            self._instance.report_run_canceled(run, message=f"Not launched: {refusal.line}")
            return self._instance.get_run_by_id(run.run_id) or run
        missing = policy_tags(run.tags, run.asset_selection)
        if missing:
            self._instance.add_run_tags(run.run_id, missing)
            tagged = self._instance.get_run_by_id(run.run_id)
            if tagged is not None:
                context = context._replace(dagster_run=tagged)
        queued = super().submit_run(context)
        # Nothing waits in silence: a run queued behind a full limit says so in its log.
        from argassets.platform.operations.waiting import queue_wait

        reason = queue_wait(self._instance, queued, self.get_run_queue_config().tag_concurrency_limits)
        if reason is not None:
            self._instance.report_engine_event(reason, queued)
        return queued
