"""The CLI is quiet by default (issue 34 item 5): Dagster's warnings go to the CLI's log file,
``--verbose`` (before or after the command) shows them on stderr too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from argassets.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
ARGASSETS = str(Path(sys.executable).parent / "argassets")


def _sql(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}
    env.update(DAGSTER_HOME=str(tmp_path / "home"), ARGASSETS_TABLES=str(tmp_path / "tables"), PYTHONPATH=str(ROOT))
    return subprocess.run(
        [ARGASSETS, *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_warnings_are_kept_in_the_log_and_shown_only_with_verbose(tmp_path: Path) -> None:
    (tmp_path / "tables").mkdir()
    quiet = _sql(tmp_path, "sql", "SELECT 42 AS answer")
    assert quiet.returncode == 0, quiet.stderr
    assert "42" in quiet.stdout
    assert "Warning" not in quiet.stderr, quiet.stderr
    log = tmp_path / "home" / "logs" / "argassets-cli.log"
    assert "PreviewWarning" in log.read_text(encoding="utf-8"), "the control: loading the studies does warn"
    verbose = _sql(tmp_path, "sql", "SELECT 1", "--verbose")
    assert verbose.returncode == 0 and "PreviewWarning" in verbose.stderr, verbose.stderr[-500:]


def test_verbose_is_taken_before_or_after_the_command_and_is_off_by_default() -> None:
    parser = build_parser()
    assert parser.parse_args(["--verbose", "sql", "SELECT 1"]).verbose is True
    assert parser.parse_args(["sql", "SELECT 1", "-v"]).verbose is True
    assert parser.parse_args(["partitions", "list", "--verbose"]).verbose is True
    assert parser.parse_args(["sql", "SELECT 1"]).verbose is False
