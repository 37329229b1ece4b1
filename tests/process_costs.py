"""Costs every test process paid again and again, paid once or not at all (the tests behave the same).

- Temporary files. The tests' instances, DuckDB files, caches and homes are written under
  ``$TMPDIR``; on this machine's disk every SQLite and DuckDB commit waits for its sync. Unless
  ``TMPDIR`` is set, the tests and the commands they start write them to ``/dev/shm/argassets-tests``
  when that memory file system has room (the fast loop took 3 min 07 s there against 3 min 35 s
  on disk, same code, same machine, one run after the other). A process kill, which is what the tests
  simulate, loses the same there as on disk. Only failed tests' folders are kept (pyproject.toml),
  so the memory holds no more than the run wrote.
- Bytecode. An environment with ``PYTHONDONTWRITEBYTECODE`` (this machine's) made every test worker
  and every command a test starts compile the project again, and pytest rewrite every test module
  again: about 5 s of CPU a worker. The tests write ``__pycache__`` (ignored by git), and the
  workers and commands started after this module is loaded inherit that.
- Dagster's migration scripts. Every new SQLite file of an instance (three a new home, one a run)
  reads alembic's ~90 revision files twice, to check and to stamp the schema (about 20 s of CPU in
  the fast loop). They are shipped with Dagster and never change, so each process reads them once.
- Garbage collection. A worker holds about 350,000 objects once the tests are collected (modules,
  the code location's definitions), and every full collection walked them all again (a third less
  collection time on three Dagster-heavy files). They live as long as the worker, so they are
  frozen out of the collector once collected.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory

MEMORY_TMP = Path("/dev/shm/argassets-tests")
#: The room the memory file system must have left (a fast loop writes about 0.8 GB).
MEMORY_TMP_ROOM = 4 * 2**30


def _temporary_files_in_memory() -> None:
    if "TMPDIR" in os.environ or not MEMORY_TMP.parent.is_dir():
        return
    if shutil.disk_usage(MEMORY_TMP.parent).free < MEMORY_TMP_ROOM:
        return
    try:
        MEMORY_TMP.mkdir(exist_ok=True)
    except OSError:
        return
    if not os.access(MEMORY_TMP, os.W_OK | os.X_OK):  # another user's folder
        return
    os.environ["TMPDIR"] = str(MEMORY_TMP)
    tempfile.tempdir = None  # computed again from $TMPDIR at its next use


_temporary_files_in_memory()
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

_read_scripts = ScriptDirectory.from_config.__func__  # type: ignore[attr-defined]
_scripts: dict[tuple[Any, ...], ScriptDirectory] = {}


def _scripts_read_once(cls: type[ScriptDirectory], config: Config) -> ScriptDirectory:
    key = (config.get_alembic_option("script_location"), config.config_file_name)
    if key not in _scripts:
        _scripts[key] = _read_scripts(cls, config)
    return _scripts[key]


ScriptDirectory.from_config = classmethod(_scripts_read_once)  # type: ignore[method-assign,assignment]


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()
