"""``argassets``: operate the platform from a terminal, on the persistent Dagster instance.

Everything runs against ``$DAGSTER_HOME`` (default: ``.dagster_home/`` in the project), the same
instance ``dagster dev`` shows, so results appear in the UI. Runs execute in this process, in
order (``run-default`` forks a process for the later studies' inputs and for a study's reports
while the next study is judged), and are recorded like any other run (re-execute them from the UI).

Commands::

    argassets partitions sync      # a partition per registry entry, in judge_models and its studies (never deletes)
    argassets partitions list
    argassets pools --gpu 1        # limit of the "gpu" concurrency pool (judging steps)
    argassets materialize random   # one model partition of every study it takes part in
    argassets backfill --from longer-wins --to random    # a range of partitions (registry order)
    argassets run-default          # study inputs, every baseline and published import, then every report
    argassets runs mark-orphans    # runs whose process died (kill -9) are marked failed (every command does it first)
    argassets ui                   # dagster dev on 127.0.0.1 (the UI refuses what this machine cannot run)
    argassets sql "SHOW TABLES"    # query the results (Parquet copies), also while runs write
    argassets slurm backfill --partitions a,b   # one Slurm job per partition (docs/operations.md)
    argassets batch export MODEL --study S --out DIR   # OpenAI-Batch files (and batch import; docs/judgments.md)
    argassets retrieve "..." --system E1 --position 60-90 --method typical   # docs/retrieval.md
    argassets debate "..." --model smollm2-135m-vllm                         # (and persona)

Quiet by default: warnings and engine logs are kept in ``$DAGSTER_HOME/logs/argassets-cli.log``;
``--verbose`` (before or after the command) shows them. A partition this machine cannot run (GPUs,
an engine, an endpoint variable, an import file) is refused before anything starts, in one line.

The equivalent Dagster commands (``dagster asset materialize --partition``, ``dagster job
backfill``) are documented in docs/operations.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from argassets.cli import backfill, batch, estimate, materialize, partitions, pools, run_default, runs, slurm, sql, ui
from argassets.cli.common import studies
from argassets.cli.environment import environment_epilog
from argassets.cli.quiet import configure_output, hold_warnings
from argassets.platform.operations.run_engine import OperationError
from argassets.platform.operations.run_recovery import Stopped

#: The commands in the order ``argassets --help`` lists them.
COMMANDS = (partitions, pools, materialize, backfill, run_default, runs, ui, sql, slurm, estimate, batch)


def build_parser() -> argparse.ArgumentParser:
    """The ``argassets`` parser: the platform's commands, then each study's."""
    parser = argparse.ArgumentParser(
        prog="argassets",
        description=__doc__.split("\n\n")[0],
        epilog=environment_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_command(sub)
    known = studies()
    for study in known:
        if study.commands is not None:
            study.commands(sub, known)  # e.g. Study B's retrieve, debate, persona (docs/retrieval.md)
    from argassets.cli.export import add_commands as add_export_commands

    add_export_commands(sub, known)  # export eee | hf, open (docs/exports.md)
    parser.add_argument("-v", "--verbose", action="store_true", help=VERBOSE_HELP)
    _add_verbose_to_commands(parser)
    return parser


VERBOSE_HELP = "show warnings and engine logs (kept in $DAGSTER_HOME/logs/argassets-cli.log otherwise)"


def _add_verbose_to_commands(parser: argparse.ArgumentParser) -> None:
    """``--verbose`` after any (sub)command too; it never resets a ``--verbose`` given before it."""
    for action in parser._actions:
        commands = getattr(action, "choices", None)
        if isinstance(commands, dict):
            for command in commands.values():
                command.add_argument(
                    "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP
                )
                _add_verbose_to_commands(command)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status (2 for an error shown as one line)."""
    held = hold_warnings()
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_output(args.verbose, held)
    try:
        return int(args.func(args))
    except OperationError as exc:
        print(f"argassets: error: {exc}", file=sys.stderr)
        return 2
    except Stopped as stop:
        # Its runs are marked failed; the worker thread may still be inside a step, so leave now.
        print(f"argassets: {stop}; its runs are marked failed", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(128 + stop.signum)


if __name__ == "__main__":
    sys.exit(main())
