"""An isolated home for the ``argassets`` and ``dagster`` commands that tests run as subprocesses."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
#: The shipped local instance: queued runs, the ``gpu`` pool of limit 1, the run-tag policy.
LOCAL_INSTANCE = ROOT / "deploy" / "local" / "dagster.yaml"


def cli_environment(
    folder: Path, registry: str, *, without: tuple[str, ...] = ("ARGASSETS_", "DAGSTER_"), **extra: str
) -> dict[str, str]:
    """The environment of a subprocess whose instance, tables, cache and registry all live in ``folder``.

    The instance is the shipped local one (``folder/dagster_home``); ``registry`` is written to
    ``folder/models.toml``; automation is off; variables starting with ``without`` are dropped from
    this process's environment and ``extra`` is added last.
    """
    home = folder / "dagster_home"
    home.mkdir(parents=True)
    shutil.copyfile(LOCAL_INSTANCE, home / "dagster.yaml")
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
