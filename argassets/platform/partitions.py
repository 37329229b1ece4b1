"""The one partitions definition of judge models, imported by every partitioned asset."""

import dagster as dg

from argassets.platform.registry import PartitionKeyError, validate_partition_key

#: One partition per registry entry (``data/models.toml``); kept in step by the registry sensor.
JUDGE_MODELS = "judge_models"
judge_models_partitions = dg.DynamicPartitionsDefinition(name=JUDGE_MODELS)

#: Column that holds the partition key in every partitioned DuckDB table.
PARTITION_COLUMN = "judge_model"
PARTITION_METADATA = {"partition_expr": PARTITION_COLUMN}


def model_partition_key(context: dg.AssetExecutionContext) -> str:
    """The run's ``judge_models`` key, checked before anything uses it.

    The registry sensor and the CLI only use registry names, but the UI's "add partition" dialog
    takes any text; a run of such a key fails here, saying why, and never reaches a table.
    """
    try:
        return validate_partition_key(context.partition_key)
    except PartitionKeyError as exc:
        raise dg.Failure(description=f"{exc} (added by hand in the UI? delete that partition there)") from None
