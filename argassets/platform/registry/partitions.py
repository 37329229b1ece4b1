"""The model partitions: one definition per study (``models_<study>``), and ``judge_models``, every entry."""

from collections.abc import Iterable, Mapping
from functools import cache

import dagster as dg

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.registry.model_entry import PartitionKeyError, validate_partition_key

#: One partition per registry entry (``data/models.toml``); kept in step by the registry sensor.
JUDGE_MODELS = "judge_models"
judge_models_partitions = dg.DynamicPartitionsDefinition(name=JUDGE_MODELS)
#: Prefix of the per-study definitions' names.
STUDY_PARTITIONS_PREFIX = "models_"


def study_partitions_name(study: str) -> str:
    """The name of ``study``'s model partitions, ``models_<study>``."""
    return f"{STUDY_PARTITIONS_PREFIX}{study}"


@cache
def study_partitions(study: str) -> dg.DynamicPartitionsDefinition:
    """The partitions of ``study``'s judged assets: the registry entries taking part in it."""
    return dg.DynamicPartitionsDefinition(name=study_partitions_name(study))


def is_model_partitions(partitions_def: dg.PartitionsDefinition | None) -> bool:
    """True for a study's model partitions or ``judge_models`` (by name, so copies compare equal)."""
    name = getattr(partitions_def, "name", None) if isinstance(partitions_def, dg.DynamicPartitionsDefinition) else None
    return name is not None and (name == JUDGE_MODELS or name.startswith(STUDY_PARTITIONS_PREFIX))


def missing_study_partitions(
    registry: ModelRegistry, existing: Mapping[str, Iterable[str]], studies: Iterable[str]
) -> dict[str, list[str]]:
    """Per study of ``studies``: its registry entries that its definition lacks, in registry order.

    ``existing`` maps a study to the keys its definition holds. Never a key to delete: an entry
    removed from the registry keeps its partitions and stored results.
    """
    missing = {}
    for study in studies:
        held = set(existing.get(study, ()))
        names = [e.name for e in registry.models if study in e.studies and e.name not in held]
        if names:
            missing[study] = names
    return missing


def study_partitions_requests(
    registry: ModelRegistry, instance: dg.DagsterInstance, studies: Iterable[str]
) -> list[dg.AddDynamicPartitionsRequest]:
    """Add requests that bring each study's definition in step with the registry."""
    existing = {s: instance.get_dynamic_partitions(study_partitions_name(s)) for s in studies}
    missing = missing_study_partitions(registry, existing, existing)
    return [study_partitions(s).build_add_request(names) for s, names in missing.items()]


def add_model_partitions(instance: dg.DagsterInstance, registry: ModelRegistry, studies: Iterable[str]) -> None:
    """Add every entry of ``registry`` to ``judge_models`` and to its studies' definitions."""
    held = set(instance.get_dynamic_partitions(JUDGE_MODELS))
    new = [name for name in registry.names if name not in held]
    if new:
        instance.add_dynamic_partitions(JUDGE_MODELS, new)
    for request in study_partitions_requests(registry, instance, studies):
        instance.add_dynamic_partitions(str(request.partitions_def_name), list(request.partition_keys))


#: Column that holds the partition key in every partitioned DuckDB table.
PARTITION_COLUMN = "judge_model"
PARTITION_METADATA = {"partition_expr": PARTITION_COLUMN}


def model_partition_key(context: dg.AssetExecutionContext) -> str:
    """The run's model partition key, checked before anything uses it.

    The registry sensor and the CLI only use registry names, but the UI's "add partition" dialog
    takes any text; a run of such a key fails here, saying why, and never reaches a table.
    """
    try:
        return validate_partition_key(context.partition_key)
    except PartitionKeyError as exc:
        raise dg.Failure(description=f"{exc} (added by hand in the UI? delete that partition there)") from None
