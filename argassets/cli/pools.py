"""``argassets pools``: show or set the limits of the instance's concurrency pools."""

from __future__ import annotations

import argparse
from typing import Any

from argassets.cli.common import CliError, get_instance, say


def cmd_pools(args: argparse.Namespace) -> int:
    storage = get_instance().event_log_storage
    if args.gpu is not None:
        from argassets.platform.operations.waiting import pool_limit_problem

        if problem := pool_limit_problem("gpu", args.gpu):
            raise CliError(f"--gpu {args.gpu}: {problem}")
        storage.set_concurrency_slots("gpu", args.gpu)
        say(f"pool 'gpu': limit {args.gpu}")
    for key in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(key)
        say(f"pool {key!r}: limit {info.slot_count}, in use {len(info.claimed_slots)}")
    return 0


def add_command(sub: Any) -> None:
    """Register ``argassets pools``."""
    pools = sub.add_parser("pools", help="show or set concurrency pool limits")
    pools.add_argument("--gpu", type=int, help="limit of the 'gpu' pool (concurrent judging steps), 1 or more")
    pools.set_defaults(func=cmd_pools)
