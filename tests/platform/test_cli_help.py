"""Every ``argassets`` command, option and argument has help; ``--help`` names every variable read."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from argassets import cli
from argassets.cli.environment import ENVIRONMENT_VARIABLES

ROOT = Path(__file__).resolve().parents[2]
CODE_FOLDERS = ("argassets", "resources", "sensors", "asset_checks", "deploy")


def walk(parser: argparse.ArgumentParser, path: str = "argassets") -> Iterator[tuple[str, argparse.Action]]:
    """(command path, action) for every action of the parser and its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helped = {choice.dest: choice.help for choice in action._choices_actions}
            for name, child in action.choices.items():
                yield f"{path} {name}", argparse.Action([], name, help=helped.get(name))
                yield from walk(child, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_command_option_and_argument_has_help() -> None:
    actions = list(walk(cli.build_parser()))
    assert len(actions) > 60  # the whole tree was walked, subcommands of subcommands included
    missing = [f"{path}: {'/'.join(a.option_strings) or a.dest}" for path, a in actions if not (a.help or "").strip()]
    assert missing == []


def test_the_walk_finds_an_option_without_help() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    child = sub.add_parser("child", help="a command")
    child.add_argument("--bare")
    assert [(p, a.dest) for p, a in walk(parser) if not a.help] == [("argassets child", "bare")]


def variables_in_code() -> set[str]:
    """Every ``ARGASSETS_*`` name in the code and the instance configs; the fleet URLs by their pattern."""
    found: set[str] = set()
    for folder in CODE_FOLDERS:
        for path in [*(ROOT / folder).rglob("*.py"), *(ROOT / folder).rglob("*.yaml")]:
            found |= set(re.findall(r"ARGASSETS_[A-Z0-9_]+", path.read_text()))
    found.discard("ARGASSETS_")  # the prefix the Slurm launcher exports
    return {re.sub(r"^ARGASSETS_VLLM_URL_\w*", "ARGASSETS_VLLM_URL_<MODEL>", name) for name in found}


def test_help_lists_every_environment_variable_the_code_reads(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    page = capsys.readouterr().out
    listed = {name for name, _ in ENVIRONMENT_VARIABLES}
    in_code = variables_in_code()
    assert len(in_code) > 15
    assert in_code - listed == set()
    for name in [*listed, "DAGSTER_HOME", "NEO4J_URI"]:
        assert re.search(rf"^  {re.escape(name)} ", page, re.MULTILINE), name


def test_the_parser_and_the_registry_load_no_asset_module() -> None:
    # Every command builds the parser (the studies' names) and most read the registry; neither needs
    # the studies' assets, whose science imports cost each command about 1.2 s.
    code = (
        "import sys\n"
        "from argassets import cli\n"
        "from argassets.studies import load_registry\n"
        "cli.build_parser(); load_registry('data/models.toml')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('argassets.argument_quality.assets', "
        "'argassets.political.assets', 'asset_checks', 'scipy.stats'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"
