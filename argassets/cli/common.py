"""What the ``argassets`` commands share: the instance, the registry, partition choices, errors, output."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from argassets.platform.operations.machine import Machine, local_machine
from argassets.platform.operations.preflight import Refusal, refusals
from argassets.platform.operations.run_engine import Executor, OperationError, say
from argassets.platform.operations.run_recovery import fail_orphaned_runs
from argassets.platform.paths import PROJECT_ROOT
from argassets.platform.registry.entries import ModelRegistry, RegistryError
from argassets.platform.registry.model_entry import PartitionKeyError, validate_partition_key
from argassets.platform.registry.partitions import JUDGE_MODELS, add_model_partitions
from argassets.platform.study import Studies

__all__ = [
    "DEFINITIONS_MODULE",
    "LOCAL_INSTANCE_CONFIG",
    "STUDY_HELP",
    "CliError",
    "add_partition_options",
    "check_key",
    "chosen_studies",
    "dagster_home",
    "executor",
    "get_instance",
    "mark_orphans",
    "preflight_partitions",
    "registry",
    "say",
    "refused_summary",
    "select_partitions",
    "studies",
    "studies_taken_part_in",
    "study_choices",
    "sync_partitions",
]

DEFAULT_DAGSTER_HOME = PROJECT_ROOT / ".dagster_home"
LOCAL_INSTANCE_CONFIG = PROJECT_ROOT / "deploy" / "local" / "dagster.yaml"
#: The module whose ``defs`` is the code location the commands run.
DEFINITIONS_MODULE = "argassets.definitions"
STUDY_HELP = "run only this study (default: every study the model takes part in)"


class CliError(OperationError):
    """An error shown to the user as one line, with exit status 2."""


def dagster_home() -> Path:
    """``$DAGSTER_HOME``, else ``.dagster_home/`` in the project (created, and exported).

    A home without ``dagster.yaml`` gets a copy of ``deploy/local/dagster.yaml`` (run queue,
    concurrency pools, run monitoring); an existing one is never touched.
    """
    home = Path(os.environ.get("DAGSTER_HOME") or DEFAULT_DAGSTER_HOME).resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists() and LOCAL_INSTANCE_CONFIG.exists():
        shutil.copyfile(LOCAL_INSTANCE_CONFIG, config)
        print(f"argassets: wrote {config} (from deploy/local/dagster.yaml)", file=sys.stderr)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def get_instance(recover: bool = True) -> Any:
    """The instance of ``$DAGSTER_HOME``; first, runs whose process is gone are failed and their
    pool slots freed (``recover``), so that no killed run blocks this command."""
    import dagster as dg

    from argassets.cli.quiet import keep_routing

    dagster_home()
    instance = dg.DagsterInstance.get()
    keep_routing()
    if recover:
        for line in mark_orphans(instance):
            say(line)
    return instance


def mark_orphans(instance: Any) -> list[str]:
    """Mark runs whose process is gone as failed and free their pool slots
    (:func:`argassets.platform.operations.run_recovery.fail_orphaned_runs`); one line per run."""
    lines = []
    for run, reason in fail_orphaned_runs(instance):
        gone = reason.removeprefix("the process running it ").removesuffix(" (killed or crashed)")
        lines.append(f"marked failed: run {run.run_id} ({run.job_name}); its process {gone}")
    return lines


def executor(instance: Any) -> Executor:
    """The run engine on ``instance``, over the code location of :data:`DEFINITIONS_MODULE`."""
    from argassets.cli.quiet import keep_routing

    engine = Executor(instance, DEFINITIONS_MODULE, studies())
    keep_routing()
    return engine


def studies() -> Studies:
    """The code location's studies (``argassets/studies.py``); a bad ``$ARGASSETS_EXTRA_STUDIES`` is a :class:`CliError`."""
    # Imported here: loading the studies makes Dagster warn, after main() decided where warnings go.
    from argassets.studies import code_location_studies

    try:
        return code_location_studies()
    except ValueError as exc:
        raise CliError(str(exc)) from None


def registry() -> ModelRegistry:
    """The model registry; an unreadable one is a :class:`CliError` naming the file, entry and field."""
    from argassets.studies import load_registry

    try:
        return load_registry()
    except (RegistryError, ValueError) as exc:
        raise CliError(str(exc)) from None


def sync_partitions(instance: Any, registry: ModelRegistry, dry_run: bool = False) -> dict[str, list[str]]:
    """Add a partition for every registry entry that has none (``judge_models`` and its studies'); never delete one.

    Returns the names ``added``, ``present`` and ``not_in_registry`` (partitions kept although
    their entry was removed).
    """
    existing = list(instance.get_dynamic_partitions(JUDGE_MODELS))
    added = [name for name in registry.names if name not in existing]
    if not dry_run:
        # judge_models lists every entry; each study's definition its own (also catching up an upgrade).
        add_model_partitions(instance, registry, registry.studies.names)
    return {
        "added": added,
        "present": [name for name in registry.names if name in existing],
        "not_in_registry": [name for name in existing if name not in registry.names],
    }


def check_key(key: str, where: str) -> str:
    """A partition key given on the command line, checked before anything looks it up."""
    try:
        return validate_partition_key(key, f"{where}: partition key")
    except PartitionKeyError as exc:
        raise CliError(str(exc)) from None


def add_partition_options(parser: argparse.ArgumentParser) -> None:
    """``--partitions``, ``--from``, ``--to`` and ``--all`` (read by :func:`select_partitions`)."""
    parser.add_argument("--partitions", help="comma-separated partition keys")
    parser.add_argument("--from", dest="start", help="first partition of a range (registry order)")
    parser.add_argument("--to", dest="end", help="last partition of a range (inclusive)")
    parser.add_argument("--all", action="store_true", help="every partition of the instance (registry order)")


def select_partitions(registry: ModelRegistry, instance: Any, args: argparse.Namespace) -> list[str]:
    """The partitions that ``--partitions``, ``--from``/``--to`` or ``--all`` name, in instance order."""
    ordered = [n for n in instance.get_dynamic_partitions(JUDGE_MODELS) if n in registry.names]
    for option, value in (("--from", args.start), ("--to", args.end)):
        if value:
            check_key(value, option)
    if args.partitions:
        names = [check_key(p.strip(), "--partitions") for p in args.partitions.split(",") if p.strip()]
    elif args.all:
        names = ordered
    else:
        names = _partition_range(ordered, args.start, args.end)
    unknown = [n for n in names if n not in registry.names]
    if unknown:
        raise CliError(f"not in the registry: {', '.join(unknown)}")
    return names


def _partition_range(ordered: list[str], start: str | None, end: str | None) -> list[str]:
    if not (start or end):
        raise CliError("choose partitions: --partitions a,b or --from A --to B or --all")
    first = ordered.index(start) if start in ordered else None
    last = ordered.index(end) if end in ordered else None
    if start and first is None:
        raise CliError(f"--from {start}: no such partition (have: {', '.join(ordered)})")
    if end and last is None:
        raise CliError(f"--to {end}: no such partition (have: {', '.join(ordered)})")
    names = ordered[(first or 0) : (len(ordered) if last is None else last + 1)]
    if not names:
        raise CliError(f"--from {start} --to {end}: empty range (order: {', '.join(ordered)})")
    return names


def preflight_partitions(
    registry: ModelRegistry, names: Sequence[str], machine: Machine | None = None
) -> tuple[list[str], list[Refusal]]:
    """The partitions of ``names`` that can run on ``machine`` (default: this one), and the refusals
    of the others, each said at once in one line on stderr, before anything starts."""
    refused = refusals(registry, names, local_machine() if machine is None else machine)
    for refusal in refused.values():
        print(f"argassets: not run: {refusal.line}", file=sys.stderr, flush=True)  # noqa: T201
    return [name for name in names if name not in refused], list(refused.values())


def refused_summary(refused: Sequence[Refusal], where: str = "this machine") -> str:
    """The closing line of a command that left out refused partitions."""
    return f"not run on {where} (see above): {', '.join(r.name for r in refused)}"


def study_choices() -> list[str]:
    """What ``--study`` accepts: every study of the code location, and ``all``."""
    return [*studies().names, "all"]


def chosen_studies(value: str | None) -> list[str] | None:
    """The studies ``--study`` selects; ``None`` for every study."""
    return None if value in (None, "all") else [value]


def studies_taken_part_in(
    registry: ModelRegistry, names: Sequence[str], studies: Sequence[str] | None, available: Iterable[str]
) -> list[str]:
    """The studies (of ``available``, within ``studies`` unless ``None``) that the entries take part in.

    ``--with-reports`` refreshes these studies' reports only: a Study A-only model leaves Study B's alone.
    """
    present = set(available)
    chosen: list[str] = []
    for name in names:
        for study in registry.get(name).studies:
            if study in present and (studies is None or study in studies) and study not in chosen:
                chosen.append(study)
    return chosen
