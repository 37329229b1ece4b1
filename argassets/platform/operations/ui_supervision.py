"""``dagster dev`` supervised: on SIGTERM or SIGINT it and every process it started stop together.

``argassets ui`` starts the command in its own session and watches it; on a signal the whole
process tree stops in order (about 8 s at most) and the runs those processes were running are
marked failed, so no run stays STARTED after the UI is gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from argassets.platform.operations.process_tree import ProcessTree
from argassets.platform.operations.run_recovery import fail_runs_of_stopped_processes, signals_recorded

#: Seconds dagster dev gets to stop by itself, then its children to terminate.
UI_GRACE_S = 5.0
UI_TERMINATE_S = 2.0


def supervise(command: Sequence[str], cwd: Path, instance: Any, say: Callable[[str], None]) -> int:
    """Run ``command`` until it exits (its status) or a signal stops it and its tree (exits the process)."""
    with signals_recorded() as received:
        # Its own session: Ctrl-C reaches this process only, which stops the whole tree in order.
        server = subprocess.Popen(list(command), cwd=cwd, start_new_session=True)
        tree = ProcessTree(server.pid)
        while server.poll() is None and not received:
            tree.remember()  # children outliving dagster dev are reparented: know them beforehand
            time.sleep(0.5)
        if not received:
            tree.stop(grace_s=UI_GRACE_S, terminate_s=UI_TERMINATE_S)  # dagster dev died: its children too
            return server.returncode
        stop_tree(tree, received[0], instance, say)


def stop_tree(tree: ProcessTree, signum: int, instance: Any, say: Callable[[str], None]) -> NoReturn:
    """Stop every process of ``tree``, fail the runs they ran, and leave with ``128 + signum``."""
    started = time.monotonic()
    left = tree.stop(signal.SIGTERM, grace_s=UI_GRACE_S, terminate_s=UI_TERMINATE_S)
    if left:
        say(f"argassets ui: terminated what dagster dev left running: {'; '.join(left)}")
    reason = f"argassets ui stopped by {signal.Signals(signum).name} while the run was in flight"
    for run_id in fail_runs_of_stopped_processes(instance, tree.pids(), reason):
        say(f"marked failed: run {run_id} (its processes were stopped with dagster dev)")
    say(f"argassets ui: stopped in {time.monotonic() - started:.1f} s")
    # Nothing is left to clean up; the interpreter's own teardown (modules, atexit) took 5 s here.
    sys.stderr.flush()
    os._exit(128 + signum)
