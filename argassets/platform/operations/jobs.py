"""A study's partitioned job: one run per model partition, tagged from the registry.

Each study's job, ``<root asset>_job``, materialises one partition of the study's root and of
its partitioned aggregates. Their partitioned config gives every run (a launch from
the UI's job page, a UI backfill of the job, ``dagster job backfill``) the partition's registry
tags: GPU count, the ``gpu`` pool tag and the Kubernetes GPU requests (:mod:`argassets.platform.operations.run_tags`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import dagster as dg

from argassets.platform.operations.automation import OperationsLayout
from argassets.platform.operations.run_tags import MODEL_TAG, STUDY_TAG, run_tags_for_entry
from argassets.platform.registry.entries import ModelRegistry, RegistryError
from argassets.platform.registry.partitions import study_partitions

RegistryLoader = Callable[[], ModelRegistry]


def partition_tags(study: str, load_registry: RegistryLoader) -> Callable[[str], Mapping[str, str]]:
    """A ``tags_for_partition_key_fn``: the registry tags of the partition's entry.

    An entry no longer in the registry (or an unreadable registry) gets only the model and study
    tags, so listing partitions in the UI never fails because of a registry edit.
    """

    def tags_for(partition_key: str) -> Mapping[str, str]:
        try:
            entry = load_registry().get(partition_key)
        except (RegistryError, KeyError):
            return {MODEL_TAG: partition_key, STUDY_TAG: study}
        return run_tags_for_entry(entry, study=study)

    return tags_for


def study_job_name(root: dg.AssetKey) -> str:
    """The job of a study: its root asset's name and ``_job``."""
    return f"{root.to_user_string()}_job"


def study_job(study: str, layout: OperationsLayout, load_registry: RegistryLoader) -> dg.UnresolvedAssetJobDefinition:
    """The partitioned job of ``study``, whose root asset is in ``layout``."""
    partitions = study_partitions(study)
    return dg.define_asset_job(
        name=study_job_name(layout.roots[study]),
        selection=dg.AssetSelection.assets(*layout.study_selection(study)),
        partitions_def=partitions,
        config=dg.PartitionedConfig(
            partitions_def=partitions,
            run_config_for_partition_key_fn=lambda _key: {},
            tags_for_partition_key_fn=partition_tags(study, load_registry),
        ),
        description=(
            f"One model partition of the {study} study: its root asset and partitioned "
            "aggregates, with the partition's GPU tags from the registry."
        ),
    )
