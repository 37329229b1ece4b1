"""Stop a process and every process it started, including those already reparented to init."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil

__all__ = ["ProcessTree"]


def _describe(process: psutil.Process) -> str:
    """``pid (program arguments)``, programs by their file name."""
    try:
        words = process.cmdline()[1:4]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        words = []
    return f"{process.pid} ({' '.join(Path(w).name if '/' in w else w for w in words)})"


class ProcessTree:
    """A root process and the descendants seen so far (``psutil.Process`` objects, safe against pid reuse)."""

    def __init__(self, pid: int):
        self.root = psutil.Process(pid)
        self.seen: dict[int, psutil.Process] = {}
        self.remember()

    def remember(self) -> None:
        """Add the current descendants of the root and of every process remembered: a run worker
        reparented to init while the root stopped can still start a step process."""
        for parent in [self.root, *self.seen.values()]:
            try:
                children = parent.children(recursive=True)
            except psutil.NoSuchProcess:
                continue
            for child in children:
                self.seen.setdefault(child.pid, child)

    def pids(self) -> set[int]:
        """The pids of the root and of every descendant remembered."""
        return {self.root.pid, *self.seen}

    def alive(self) -> list[psutil.Process]:
        """The root and remembered descendants still running (zombies count as gone)."""
        running = []
        for process in [self.root, *self.seen.values()]:
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    running.append(process)
            except psutil.NoSuchProcess:
                continue
        return running

    def command_lines(self) -> list[list[str]]:
        """The command lines of the processes still running (to learn which run workers there were)."""
        lines = []
        for process in self.alive():
            try:
                lines.append(process.cmdline())
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return lines

    def _signal_all(self, signum: int) -> None:
        for process in self.alive():
            try:
                process.send_signal(signum)
            except psutil.NoSuchProcess:
                continue

    def _wait(self, timeout_s: float, poll_s: float = 0.1) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.remember()
            if not self.alive():
                return True
            time.sleep(poll_s)
        return not self.alive()

    def stop(self, signum: int = signal.SIGTERM, grace_s: float = 8.0, terminate_s: float = 3.0) -> list[str]:
        """Send ``signum`` to the root; after ``grace_s`` SIGTERM to every remembered process left,
        after ``terminate_s`` more SIGKILL. Returns those that had to be signalled directly
        (``pid (program arguments)``)."""
        self.remember()
        try:
            self.root.send_signal(signum)
        except psutil.NoSuchProcess:
            pass
        if self._wait(grace_s):
            return []
        left = [_describe(process) for process in self.alive()]
        self._signal_all(signal.SIGTERM)
        if not self._wait(terminate_s):
            self._signal_all(signal.SIGKILL)
            self._wait(1.0)
        return left
