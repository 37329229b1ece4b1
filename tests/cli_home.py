"""An isolated home for the ``argassets`` and ``dagster`` commands that tests run as subprocesses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "data" / "sample"
#: The shipped local instance: queued runs, the ``gpu`` pool of limit 1, the run-tag policy.
LOCAL_INSTANCE = ROOT / "deploy" / "local" / "dagster.yaml"
#: The registry the inputs are materialised under (they read none of it).
INPUTS_REGISTRY = '[[models]]\nname = "random"\nbackend = "random"\nstudies = ["argument_quality"]\n'


def cli_environment(
    folder: Path,
    registry: str,
    *,
    without: tuple[str, ...] = ("ARGASSETS_", "DAGSTER_"),
    inputs: Path | None = None,
    **extra: str,
) -> dict[str, str]:
    """The environment of a subprocess whose instance, tables, cache and registry all live in ``folder``.

    The instance is the shipped local one (``folder/dagster_home``), empty, or a copy of the home
    ``inputs`` (:func:`study_a_inputs_home`: its instance and DuckDB file hold Study A's inputs);
    ``registry`` is written to ``folder/models.toml``; automation is off; variables starting with
    ``without`` are dropped from this process's environment and ``extra`` is added last.
    """
    home = folder / "dagster_home"
    if inputs is None:
        home.mkdir(parents=True)
        shutil.copyfile(LOCAL_INSTANCE, home / "dagster.yaml")
    else:
        shutil.copytree(inputs / "dagster_home", home)
        from argassets.platform.storage.reader_file import copy_warehouse

        copy_warehouse(inputs / "argassets.duckdb", folder / "argassets.duckdb")
    (folder / "models.toml").write_text(registry, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(without)}
    env.update(
        DAGSTER_HOME=str(home),
        ARGASSETS_DUCKDB=str(folder / "argassets.duckdb"),
        ARGASSETS_CACHE=str(folder / "cache.sqlite"),
        ARGASSETS_DATA_DIR=str(SAMPLE),
        ARGASSETS_MODELS=str(folder / "models.toml"),
        ARGASSETS_AUTOMATION="off",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def study_a_inputs_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home whose instance and DuckDB file hold Study A's inputs (what its judging and reports read).

    Materialised once per session (per test worker) on the sample corpus by Dagster's own command
    (``dagster asset materialize``), its steps in one process (7 s against 31 s with a step process
    per asset); tests copy it with ``cli_environment(..., inputs=home)`` and never write to it.
    """
    from sensors.layout import code_location_layout

    folder = tmp_path_factory.mktemp("study_a_inputs")
    env = cli_environment(folder, INPUTS_REGISTRY, ARGASSETS_EXECUTOR="in_process")
    inputs = ",".join(key.to_user_string() for key in code_location_layout().inputs_by_study["argument_quality"])
    command = [str(BIN / "dagster"), "asset", "materialize", "-m", "argassets.definitions", "--select", inputs]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return folder
