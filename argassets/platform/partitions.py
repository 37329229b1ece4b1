"""The one partitions definition of judge models, imported by every partitioned asset."""

import dagster as dg

#: One partition per registry entry (``data/models.toml``); kept in step by the registry sensor.
JUDGE_MODELS = "judge_models"
judge_models_partitions = dg.DynamicPartitionsDefinition(name=JUDGE_MODELS)

#: Column that holds the partition key in every partitioned DuckDB table.
PARTITION_COLUMN = "judge_model"
PARTITION_METADATA = {"partition_expr": PARTITION_COLUMN}
