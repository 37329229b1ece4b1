"""Which asset checks of a code location have not been evaluated, or did not pass, on an instance."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import dagster as dg

from argassets.platform.operations.automation import MANUAL_KINDS, OperationsLayout

__all__ = ["study_of_assets", "unevaluated_checks"]


def study_of_assets(layout: OperationsLayout) -> dict[dg.AssetKey, set[str]]:
    """The studies each asset of the layout serves (root, partitioned, inputs, reports, standalone)."""
    owners: dict[dg.AssetKey, set[str]] = {}
    groups = [
        {study: (key,) for study, key in layout.roots.items()},
        layout.partitioned_downstream,
        layout.unpartitioned_ancestors,
        layout.inputs_by_study,
        layout.reports_by_study,
        layout.standalone_by_study,
    ]
    for group in groups:
        for study, keys in group.items():
            for key in keys:
                owners.setdefault(key, set()).add(study)
    return owners


def unevaluated_checks(
    instance: dg.DagsterInstance, asset_graph: Any, layout: OperationsLayout, left_out: Collection[str] = ()
) -> dict[str, str]:
    """Every check not evaluated or not passed, with why, except the excused ones.

    Excused: checks of assets that only serve studies in ``left_out`` (e.g. those that need the
    published data when there is none), and checks of assets of
    :data:`~argassets.platform.operations.automation.MANUAL_KINDS` (they need an optional service,
    Neo4j, and run by hand).
    """
    from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

    owners = study_of_assets(layout)
    wanted = []
    for check_key in asset_graph.asset_check_keys:
        studies = owners.get(check_key.asset_key, set())
        if studies and studies <= set(left_out):
            continue
        if set(asset_graph.get(check_key.asset_key).kinds) & MANUAL_KINDS:
            continue
        wanted.append(check_key)
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(wanted)
    problems: dict[str, str] = {}
    for check_key in wanted:
        record = latest.get(check_key)
        name = check_key.to_user_string()
        if record is None:
            problems[name] = "never evaluated"
        elif record.status != AssetCheckExecutionRecordStatus.SUCCEEDED:
            problems[name] = record.status.value.lower()
    return problems
