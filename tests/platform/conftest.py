"""Fixtures shared by the platform tests: the registry sensor's harness (test_sensors_registry, test_sensors_schedule)."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.platform.test_sensors_registry import Bootstrapped, Harness, harness  # noqa: F401  (harness: a fixture)


# Bootstrapping runs the study inputs and two partitions through Dagster (seconds): done once per
# session for each variant, then copied, so every test still starts from its own instance.
@pytest.fixture(scope="session")
def judged_snapshot(tmp_path_factory: pytest.TempPathFactory, empty_instance_folder: Path) -> Bootstrapped:
    """The baselines' partitions judged; automation never ran the reports."""
    return Bootstrapped.build(tmp_path_factory.mktemp("judged"), empty_instance_folder, reports=False)


@pytest.fixture(scope="session")
def reported_snapshot(tmp_path_factory: pytest.TempPathFactory, empty_instance_folder: Path) -> Bootstrapped:
    """The baselines' partitions judged and their reports materialised by automation."""
    return Bootstrapped.build(tmp_path_factory.mktemp("reported"), empty_instance_folder, reports=True)


@pytest.fixture()
def judged(judged_snapshot: Bootstrapped, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    """A harness on a copy of :func:`judged_snapshot` (``_bootstrap(h, reports=False)``)."""
    yield from judged_snapshot.copy(tmp_path, monkeypatch)


@pytest.fixture()
def reported(reported_snapshot: Bootstrapped, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    """A harness on a copy of :func:`reported_snapshot` (``_bootstrap(h)``)."""
    yield from reported_snapshot.copy(tmp_path, monkeypatch)
