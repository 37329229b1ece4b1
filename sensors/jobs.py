"""Per-study partitioned jobs: one run per model partition, tagged from the registry.

Each study's job, ``<root asset>_job``, materialises one partition of the study's root and of
its partitioned aggregates. Their partitioned config gives every run (a launch from
the UI's job page, a UI backfill of the job, ``dagster job backfill``) the partition's registry
tags: GPU count, the ``gpu`` pool tag and the Kubernetes GPU requests (:mod:`argassets.platform.operations.run_tags`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import dagster as dg

from argassets.platform.operations.run_tags import MODEL_TAG, STUDY_TAG, run_tags_for_entry
from argassets.platform.registry.entries import RegistryError, load_registry
from argassets.platform.registry.partitions import study_partitions
from sensors.layout import code_location_layout


def partition_tags(study: str) -> Callable[[str], Mapping[str, str]]:
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


def study_job_name(study: str) -> str:
    """The job of ``study``: its root asset's name and ``_job``."""
    return f"{code_location_layout().roots[study].to_user_string()}_job"


def build_study_jobs() -> list[dg.UnresolvedAssetJobDefinition]:
    """One partitioned job per study whose root asset exists in the code location."""
    layout = code_location_layout()
    jobs = []
    for study in layout.roots:
        jobs.append(
            dg.define_asset_job(
                name=study_job_name(study),
                selection=dg.AssetSelection.assets(*layout.study_selection(study)),
                partitions_def=study_partitions(study),
                config=dg.PartitionedConfig(
                    partitions_def=study_partitions(study),
                    run_config_for_partition_key_fn=lambda _key: {},
                    tags_for_partition_key_fn=partition_tags(study),
                ),
                description=(
                    f"One model partition of the {study} study: its root asset and partitioned "
                    "aggregates, with the partition's GPU tags from the registry."
                ),
            )
        )
    return jobs
