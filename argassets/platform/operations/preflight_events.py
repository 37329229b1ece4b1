"""The pre-flight in the UI: a partition that cannot run here carries an ``AssetObservation`` saying why
(``runnable_here = false``), recorded when its state changes (docs/operations.md, "Pre-flight")."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import dagster as dg

from argassets.platform.operations.machine import Machine
from argassets.platform.operations.preflight import Refusal

__all__ = ["PREFLIGHT_KEY", "RUNNABLE_KEY", "latest_preflight", "preflight_observations"]

RUNNABLE_KEY = "runnable_here"
PREFLIGHT_KEY = "preflight"
#: Observations read back per asset to find each partition's last pre-flight state.
_READ_LIMIT = 2000


def latest_preflight(instance: dg.DagsterInstance, key: dg.AssetKey) -> dict[str, tuple[bool, str]]:
    """Per partition of ``key``, the last recorded pre-flight state: (runnable, what it said)."""
    records = instance.fetch_observations(dg.AssetRecordsFilter(asset_key=key), limit=_READ_LIMIT).records
    latest: dict[str, tuple[bool, str]] = {}
    for record in records:  # newest first
        observation = record.asset_observation
        if observation is None or observation.partition is None or observation.partition in latest:
            continue
        metadata = observation.metadata
        if RUNNABLE_KEY in metadata:
            said = metadata.get(PREFLIGHT_KEY)
            latest[observation.partition] = (bool(metadata[RUNNABLE_KEY].value), str(said.value if said else ""))
    return latest


def preflight_observations(
    instance: dg.DagsterInstance,
    roots: Mapping[str, dg.AssetKey],
    partitions: Mapping[str, Collection[str]],
    refused: Mapping[str, Refusal],
    machine: Machine,
) -> list[dg.AssetObservation]:
    """Observations for the partitions (per study, those that exist) whose pre-flight state changed.

    A refused partition gets ``runnable_here = false`` and the reason; a partition refused before
    that now passes gets ``runnable_here = true``; others get nothing.
    """
    observations = []
    for study, key in roots.items():
        seen = latest_preflight(instance, key)
        for name in partitions.get(study, ()):
            refusal = refused.get(name)
            if refusal is None:
                if seen.get(name, (True, ""))[0]:
                    continue
                said = f"runs on {machine.name}"
            else:
                said = f"cannot run on {machine.name}: {refusal.reason}"
                if seen.get(name) == (False, said):
                    continue
            metadata: dict[str, dg.MetadataValue] = {
                RUNNABLE_KEY: dg.MetadataValue.bool(refusal is None),
                PREFLIGHT_KEY: dg.MetadataValue.text(said),
            }
            if refusal is not None:
                metadata["what_to_do"] = dg.MetadataValue.text(refusal.remedy)
            observations.append(dg.AssetObservation(asset_key=key, partition=name, metadata=metadata))
    return observations
