"""``argassets backfill``: several model partitions, one run each, in registry order."""

from __future__ import annotations

import argparse
from typing import Any

from argassets.cli.common import (
    STUDY_HELP,
    add_partition_options,
    chosen_studies,
    executor,
    get_instance,
    preflight_partitions,
    refused_summary,
    registry,
    say,
    select_partitions,
    studies_taken_part_in,
    study_choices,
    sync_partitions,
)


def cmd_backfill(args: argparse.Namespace) -> int:
    instance = get_instance()
    models = registry()
    sync_partitions(instance, models)
    names, refused = preflight_partitions(models, select_partitions(models, instance, args))
    if not names:
        return 2
    say(f"backfill of {len(names)} partition(s): {', '.join(names)}")
    engine = executor(instance)
    studies = chosen_studies(args.study)
    failed = [name for name in names if not engine.run_partition(models, name, studies)]
    ok = not failed
    if args.with_reports and ok:
        ok = engine.run_reports(studies_taken_part_in(models, names, studies, engine.layout.roots))
    if failed:
        say(f"failed partitions: {', '.join(failed)} (run them again: cached work is not redone)")
    if refused:
        say(refused_summary(refused))
    return 0 if ok and not refused else 1


def add_command(sub: Any) -> None:
    """Register ``argassets backfill``."""
    back = sub.add_parser("backfill", help="materialise several model partitions, one run each")
    add_partition_options(back)
    back.add_argument("--study", choices=study_choices(), default="all", help=STUDY_HELP)
    back.add_argument("--with-reports", action="store_true", help="then refresh every report")
    back.set_defaults(func=cmd_backfill)
