"""``argassets ui``: dagster dev on 127.0.0.1, stopped together with everything it started."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from argassets.cli.common import get_instance, say
from argassets.platform.paths import PROJECT_ROOT

DEFAULT_HOST = "127.0.0.1"


def cmd_ui(args: argparse.Namespace) -> int:
    """dagster dev in its own session; on SIGTERM or SIGINT it and every process it started stop
    (within about 8 s), and the runs those processes were running are marked failed."""
    from argassets.platform.operations.ui_supervision import supervise

    # Opened now: importing dagster takes seconds that the stop must not spend.
    instance = get_instance(recover=False)
    command = [
        str(Path(sys.executable).parent / "dagster"),
        "dev",
        "-h",
        args.host,
        "-p",
        str(args.port),
        "-w",
        str(PROJECT_ROOT / "workspace.yaml"),
    ]
    say("$ " + " ".join(command))
    from argassets.platform.reporting.pages import serve_pages_in_background

    serve_pages_in_background(args.host, args.port + 1)  # the results pages, linked from their assets
    return supervise(command, PROJECT_ROOT, instance, say)


def add_command(sub: Any) -> None:
    """Register ``argassets ui``."""
    ui = sub.add_parser("ui", help="start dagster dev (webserver + daemon), bound to 127.0.0.1")
    ui.add_argument("--host", default=DEFAULT_HOST, help="interface to bind (default 127.0.0.1)")
    ui.add_argument("--port", type=int, default=3000, help="port of the web UI (default 3000)")
    ui.set_defaults(func=cmd_ui)
