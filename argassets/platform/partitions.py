"""The one partitions definition of judge models, imported by every partitioned asset."""

import dagster as dg

#: One partition per registry entry (``data/models.toml``); kept in step by the registry sensor.
judge_models_partitions = dg.DynamicPartitionsDefinition(name="judge_models")

#: Column that holds the partition key in every partitioned DuckDB table.
PARTITION_COLUMN = "judge_model"
PARTITION_METADATA = {"partition_expr": PARTITION_COLUMN}
