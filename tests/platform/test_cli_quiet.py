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


def _argassets(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}
    env.update(DAGSTER_HOME=str(tmp_path / "home"), ARGASSETS_TABLES=str(tmp_path / "tables"), PYTHONPATH=str(ROOT))
    return subprocess.run(
        [ARGASSETS, *extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_warnings_are_kept_in_the_log_and_shown_only_with_verbose(tmp_path: Path) -> None:
    (tmp_path / "tables").mkdir()
    # `estimate` loads the studies' assets, whose partitioned checks make Dagster warn; in an empty
    # home it then stops at the first missing input.
    quiet = _argassets(tmp_path, "estimate", "random", "--study", "argument_quality")
    assert quiet.returncode == 2 and "input aq_prompts is not materialised yet" in quiet.stderr, quiet.stderr
    assert "Warning" not in quiet.stderr, quiet.stderr
    log = tmp_path / "home" / "logs" / "argassets-cli.log"
    assert "PreviewWarning" in log.read_text(encoding="utf-8"), "the control: loading the assets does warn"
    verbose = _argassets(tmp_path, "estimate", "random", "--study", "argument_quality", "--verbose")
    assert verbose.returncode == 2 and "PreviewWarning" in verbose.stderr, verbose.stderr[-500:]


def test_a_command_that_reads_no_asset_has_nothing_to_warn_about(tmp_path: Path) -> None:
    (tmp_path / "tables").mkdir()
    done = _argassets(tmp_path, "sql", "SELECT 42 AS answer", "--verbose")
    assert done.returncode == 0 and "42" in done.stdout
    assert "Warning" not in done.stderr, done.stderr


def test_verbose_is_taken_before_or_after_the_command_and_is_off_by_default() -> None:
    parser = build_parser()
    assert parser.parse_args(["--verbose", "sql", "SELECT 1"]).verbose is True
    assert parser.parse_args(["sql", "SELECT 1", "-v"]).verbose is True
    assert parser.parse_args(["partitions", "list", "--verbose"]).verbose is True
    assert parser.parse_args(["sql", "SELECT 1"]).verbose is False
