"""``argassets materialize MODEL``: one model partition of every study it takes part in."""

from __future__ import annotations

import argparse
from typing import Any

from argassets.cli.common import (
    STUDY_HELP,
    CliError,
    check_key,
    chosen_studies,
    executor,
    get_instance,
    registry,
    studies_taken_part_in,
    study_choices,
    sync_partitions,
)
from argassets.platform.operations.machine import local_machine
from argassets.platform.operations.preflight import refusals


def cmd_materialize(args: argparse.Namespace) -> int:
    check_key(args.partition, "materialize")
    models = registry()
    if args.partition not in models.names:
        raise CliError(f"{args.partition}: not in the registry (known: {', '.join(models.names)})")
    # Before the instance is even opened: an entry this machine cannot run is refused in one line.
    refused = refusals(models, [args.partition], local_machine())
    if refused:
        raise CliError(refused[args.partition].line)
    instance = get_instance()
    sync_partitions(instance, models)
    engine = executor(instance)
    studies = chosen_studies(args.study)
    ok = engine.run_partition(models, args.partition, studies)
    if ok and args.with_reports:
        ok = engine.run_reports(studies_taken_part_in(models, [args.partition], studies, engine.layout.roots))
    return 0 if ok else 1


def add_command(sub: Any) -> None:
    """Register ``argassets materialize``."""
    mat = sub.add_parser("materialize", help="materialise one model partition of its studies")
    mat.add_argument("partition", help="registry entry (a judge_models partition key), e.g. random")
    mat.add_argument("--study", choices=study_choices(), default="all", help=STUDY_HELP)
    mat.add_argument("--with-reports", action="store_true", help="then refresh every report")
    mat.set_defaults(func=cmd_materialize)
