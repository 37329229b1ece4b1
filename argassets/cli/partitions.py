"""``argassets partitions sync | list``: the model partitions of the instance."""

from __future__ import annotations

import argparse
from typing import Any

from argassets.cli.common import get_instance, registry, say, studies, sync_partitions
from argassets.platform.operations.machine import local_machine
from argassets.platform.operations.preflight import Refusal, refusals
from argassets.platform.registry.model_entry import is_valid_partition_key
from argassets.platform.registry.partitions import JUDGE_MODELS


def cmd_partitions_sync(args: argparse.Namespace) -> int:
    result = sync_partitions(get_instance(), registry(), dry_run=args.dry_run)
    verb = "would add" if args.dry_run else "added"
    say(f"{verb}: {', '.join(result['added']) or 'none'}")
    say(f"already present: {len(result['present'])}")
    if result["not_in_registry"]:
        say("kept although no longer in the registry (stored judgments stay): " + ", ".join(result["not_in_registry"]))
    return 0


def _materialised(instance: Any, names: list[str]) -> dict[str, set[str]]:
    """Per study, the partitions of its root asset that are materialised."""
    import dagster as dg

    known = studies()
    return {name: instance.get_materialized_partitions(dg.AssetKey(known.get(name).root_asset)) for name in names}


def partition_status(name: str, studies: list[str], materialised: dict[str, set[str]], refusal: Refusal | None) -> str:
    """One partition's state: refused here (and why), else where it is materialised."""
    if refusal is not None:
        return f"cannot run here: {refusal.reason}"
    done = [study for study in studies if name in materialised.get(study, set())]
    if len(done) == len(studies):
        return "materialised"
    if done:
        return f"materialised in {', '.join(done)}; missing in " + ", ".join(s for s in studies if s not in done)
    return "missing"


def cmd_partitions_list(args: argparse.Namespace) -> int:
    instance = get_instance()
    models = registry()
    names = list(instance.get_dynamic_partitions(JUDGE_MODELS))
    known = [name for name in names if is_valid_partition_key(name) and name in models.names]
    refused = refusals(models, known, local_machine())
    materialised = _materialised(
        instance, [s for s in studies().names if any(s in models.get(n).studies for n in known)]
    )
    for name in names:
        if not is_valid_partition_key(name):
            say(f"{name!r}\t(not a valid model name: added by hand? never run; delete it in the UI)")
        elif name in models.names:
            entry = models.get(name)
            status = partition_status(name, list(entry.studies), materialised, refused.get(name))
            say(f"{name}\t{entry.backend}\tgpus={entry.gpus_needed}\t{','.join(entry.studies)}\t{status}")
        else:
            say(f"{name}\t(not in the registry)")
    return 0


def add_command(sub: Any) -> None:
    """Register ``argassets partitions sync | list``."""
    partitions = sub.add_parser("partitions", help="model partitions of the instance (judge_models and models_<study>)")
    psub = partitions.add_subparsers(dest="partitions_command", required=True)
    sync = psub.add_parser("sync", help="add a partition per registry entry (never deletes)")
    sync.add_argument("--dry-run", action="store_true", help="print the partitions it would add; add none")
    sync.set_defaults(func=cmd_partitions_sync)
    plist = psub.add_parser(
        "list",
        help="list partitions with their backend, GPUs, studies and state (materialised, missing, cannot run here)",
    )
    plist.set_defaults(func=cmd_partitions_list)
