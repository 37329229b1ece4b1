"""What a report read against what Dagster says is materialised (docs/operations.md)."""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg
import pandas as pd

from argassets.platform.registry.partitions import PARTITION_COLUMN

ROW_COUNT_KEYS = ("dagster/row_count", "dagster/partition_row_count")


def coverage_problems(recorded: Mapping[str, int | None], read: Mapping[str, int]) -> list[str]:
    """One line per materialised partition whose rows were not read as recorded.

    ``recorded`` maps each partition Dagster lists as materialised to the row count of its latest
    materialisation (``None``: not recorded, only presence is checked); ``read`` maps partition
    keys to the rows read. Rows of partitions not listed are not a problem here (a run killed after
    its table committed and before Dagster recorded it leaves whole rows); see :func:`unlisted`.
    """
    problems = []
    for key in sorted(recorded):
        expected, found = recorded[key], read.get(key, 0)
        if found == 0 and expected != 0:
            problems.append(f"{key}: materialised, but no row of it was read")
        elif expected is not None and found != expected:
            problems.append(f"{key}: {found} rows read, its materialisation recorded {expected}")
    return problems


def unlisted(recorded: Mapping[str, int | None], read: Mapping[str, int]) -> list[str]:
    """Partitions with rows that Dagster does not list as materialised."""
    return sorted(key for key in read if key not in recorded)


def _recorded_row_count(instance: dg.DagsterInstance, asset: dg.AssetKey, partition: str) -> int | None:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset, asset_partitions=[partition]), limit=1
    ).records
    materialization = records[0].asset_materialization if records else None
    metadata = materialization.metadata if materialization else {}
    for name in ROW_COUNT_KEYS:
        if name in metadata:
            return int(metadata[name].value)  # type: ignore[arg-type]
    return None


def check_partition_coverage(
    context: dg.AssetExecutionContext, upstream: str, frame: pd.DataFrame, column: str = PARTITION_COLUMN
) -> dict[str, dg.MetadataValue]:
    """Fail (naming the partitions) when ``frame``, read from every partition of ``upstream``,
    lacks rows Dagster lists as materialised; returns metadata saying what was covered."""
    asset = dg.AssetKey(upstream)
    listed = sorted(context.instance.get_materialized_partitions(asset))
    recorded = {key: _recorded_row_count(context.instance, asset, key) for key in listed}
    read = frame[column].value_counts().to_dict() if column in frame.columns and len(frame) else {}
    read = {str(key): int(count) for key, count in read.items()}
    problems = coverage_problems(recorded, read)
    if problems:
        raise dg.Failure(
            description=f"{upstream}: the rows read do not cover what Dagster lists as materialised "
            f"(materialise these partitions again): {'; '.join(problems)}",
            metadata={"partitions_not_covered": dg.MetadataValue.json(problems)},
        )
    extra = unlisted(recorded, read)
    if extra:
        context.log.warning(f"{upstream}: rows of partitions Dagster does not list as materialised: {', '.join(extra)}")
    return {
        f"{upstream}_partitions_read": dg.MetadataValue.json(sorted(read)),
        f"{upstream}_partitions_not_listed": dg.MetadataValue.json(extra),
    }
