"""Quiet by default: Python warnings and engine logs stay off the terminal unless ``--verbose``.

Dagster warns (``PreviewWarning``) each time a command loads the code location; vLLM logs every
engine step. Without ``--verbose`` the warnings go to ``$DAGSTER_HOME/logs/argassets-cli.log``
(appended, one block per warning) and vLLM's logs are kept to warnings, on stderr; with
``--verbose`` both are shown on stderr as well. A run's own log (its events, its captured output)
is unchanged.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any, TextIO

from argassets.platform.judging.offline import set_engine_log_level
from argassets.platform.paths import PROJECT_ROOT

__all__ = ["configure_output", "hold_warnings", "keep_routing", "warnings_log"]

WARNINGS_LOG = "argassets-cli.log"
#: The handler :func:`configure_output` installed, put back by :func:`keep_routing`.
_routing: list[Any] = []


def warnings_log() -> Path:
    """Where the CLI keeps the warnings it does not show: ``$DAGSTER_HOME/logs/argassets-cli.log``."""
    home = Path(os.environ.get("DAGSTER_HOME") or PROJECT_ROOT / ".dagster_home")
    return home / "logs" / WARNINGS_LOG


def _keeper(log: Path, verbose: bool, stderr: TextIO | None) -> Any:
    """A ``warnings.showwarning`` that appends to ``log`` and, when ``verbose``, writes to ``stderr``."""

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        text = warnings.formatwarning(message, category, filename, lineno, line)
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as handle:
                handle.write(text)
        except OSError:
            verbose_here = True  # nowhere to keep it: show it rather than lose it
        else:
            verbose_here = verbose
        if verbose_here:
            # sys.stderr as it is now: the one of configure_output's time may be closed (a test's capture)
            (stderr or sys.stderr).write(text)

    return show


def hold_warnings() -> list[tuple[Any, ...]]:
    """Keep the warnings raised until :func:`configure_output` knows where they go (building the
    parser loads the studies, and Dagster warns then); the list they are kept in."""
    held: list[tuple[Any, ...]] = []

    def keep(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        held.append((message, category, filename, lineno, file, line))

    warnings.showwarning = keep
    return held


def configure_output(verbose: bool, held: list[tuple[Any, ...]] | None = None, stderr: TextIO | None = None) -> None:
    """Route this process's warnings (and those ``held`` so far) and engine logs (see the module docstring)."""
    set_engine_log_level(verbose)
    show = _keeper(warnings_log(), verbose, stderr)
    _routing[:] = [show]
    warnings.showwarning = show
    for warning in held or ():
        show(*warning)


def keep_routing() -> None:
    """Put the configured warnings handler back: opening a Dagster instance replaces it with
    Dagster's own, which writes to the terminal."""
    if _routing:
        warnings.showwarning = _routing[0]
