"""``argassets runs mark-orphans``: runs whose process died are marked failed."""

from __future__ import annotations

import argparse
from typing import Any

from argassets.cli.common import get_instance, mark_orphans, say


def cmd_runs_mark_orphans(args: argparse.Namespace) -> int:
    """Mark runs started from a terminal whose process no longer exists as failed."""
    lines = mark_orphans(get_instance(recover=False))
    for line in lines:
        say(line)
    say(f"{len(lines)} orphaned run(s) marked failed")
    return 0


def add_command(sub: Any) -> None:
    """Register ``argassets runs mark-orphans``."""
    runs = sub.add_parser("runs", help="run housekeeping")
    rsub = runs.add_subparsers(dest="runs_command", required=True)
    orphans = rsub.add_parser("mark-orphans", help="mark runs whose process died as failed")
    orphans.set_defaults(func=cmd_runs_mark_orphans)
