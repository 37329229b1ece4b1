"""Shared fixtures: the published data folder, and an isolated DuckDB file per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from argassets.argument_quality.corpus import ensure_sample_corpus
from argassets.platform.paths import resolve_data_dir
from tests import instances

pytest_plugins = [
    "tests.process_costs",
    "tests.no_skips",
    "tests.services",
    "pytester",
    "tests.kb_fixtures",
    "tests.postgres_server",
    "tests.slurm_cluster",
    "tests.vllm_fixtures",
    "tests.published_fixtures",
    "tests.sample_fixtures",
    "tests.cli_home",
]


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The published corpora (``$ARGASSETS_DATA_DIR`` or ``../shared/data``); tests need them."""
    root = resolve_data_dir()
    if root is None or not (root / "webis-argquality20").is_dir():
        pytest.fail("the published data folder is missing: set ARGASSETS_DATA_DIR or place it at ../shared/data")
    return root


@pytest.fixture()
def duckdb_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DuckDB file for one test, also exported as ``$ARGASSETS_DUCKDB``."""
    path = tmp_path / "argassets.duckdb"
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(path))
    return path


@pytest.fixture(scope="session")
def empty_instance_folder() -> Path:
    """The storage of an empty Dagster instance (:func:`tests.instances.empty_instance_folder`).
    Copy it, never open it (:func:`dagster_instance` does)."""
    return instances.empty_instance_folder()


@pytest.fixture()
def dagster_instance() -> Iterator[dg.DagsterInstance]:
    """A new instance for this test alone (:func:`tests.instances.new_instance`)."""
    with instances.new_instance() as instance:
        yield instance


@pytest.fixture(autouse=True)
def _isolated_embedding_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own shared embedding cache, never the user's ``~/.cache`` one."""
    monkeypatch.setenv("ARGASSETS_EMBEDDING_CACHE", str(tmp_path / "embedding-cache.sqlite"))


@pytest.fixture(autouse=True)
def _no_user_registry_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests read the shipped registry unless they set ``$ARGASSETS_MODELS`` themselves."""
    if "ARGASSETS_MODELS" in os.environ:
        monkeypatch.delenv("ARGASSETS_MODELS")


def pytest_configure(config: pytest.Config) -> None:
    """Tests (and their subprocesses) point at data/sample; its files are generated, not tracked.

    Written here, before pytest-xdist starts its workers, so that two workers never write them at once.
    """
    ensure_sample_corpus()


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium for Playwright (``$ARGASSETS_CHROMIUM`` or ``/usr/bin/chromium``).

    A service fixture (tests/services.py): a test that drives the browser leaves the fast loop.
    """
    path = Path(os.environ.get("ARGASSETS_CHROMIUM", "/usr/bin/chromium"))
    if not path.exists():
        pytest.fail(f"{path} not found: install Debian's chromium (apt-get install -y chromium)")
    return path
