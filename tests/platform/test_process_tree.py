"""ProcessTree keeps finding the processes its tree starts, also after their parent was reparented."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

from argassets.platform.operations.process_tree import ProcessTree

# The middle process outlives the root (reparented to init), then starts a grandchild: as a
# run worker left by a stopped `dagster dev` starts its step process.
MIDDLE = """
import pathlib, subprocess, sys, time
time.sleep(1.0)
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
pathlib.Path(sys.argv[1]).write_text(str(grandchild.pid))
time.sleep(60)
"""
ROOT = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]], start_new_session=True)
time.sleep(0.3)
"""


def test_a_grandchild_started_after_its_parent_was_reparented_is_remembered_and_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    root = subprocess.Popen([sys.executable, "-c", ROOT, MIDDLE, str(pid_file)])
    tree = ProcessTree(root.pid)
    while root.poll() is None:
        tree.remember()
        time.sleep(0.02)
    assert tree.seen, "the middle process was seen while the root ran"
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the grandchild was never started"
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    tree.remember()
    try:
        assert grandchild in tree.pids()
    finally:
        tree.stop(grace_s=0.5, terminate_s=2.0)
    assert not psutil.pid_exists(grandchild) or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
