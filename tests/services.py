"""Which tests need a service, so that the fast loop (``pytest -m "not services"``) never runs one.

A test needs a service when it carries a marker of one (a server, a real model, a browser, several
processes at once, the full corpus) or uses, directly or through other fixtures, a fixture that
starts one. Such tests get the ``services`` marker at collection. A service fixture reached in a way
collection cannot see (``request.getfixturevalue``) from a test without the marker is an error, so
a new service test can never slip into the fast loop unmarked.
"""

from __future__ import annotations

import pytest

SERVICES_MARKER = "services"
#: Markers of tests that need more than Python and the data folder, or take minutes each.
SERVICE_MARKERS: frozenset[str] = frozenset(
    {"neo4j", "postgres", "llm", "vllm_engine", "browser", "concurrency", "slurm", "slow", "sampling_distribution"}
)
#: Fixtures that start a server, a browser or a real model (embedding_model: all-MiniLM-L6-v2, ~10 s to load).
SERVICE_FIXTURES: frozenset[str] = frozenset(
    {"neo4j_server", "postgres_server", "slurm_cluster", "vllm_engine", "embedding_model", "chromium"}
)

_running: dict[str, pytest.Item] = {}


def needs_service(item: pytest.Item) -> bool:
    """Whether ``item`` carries a service marker or uses a service fixture."""
    if any(item.get_closest_marker(name) is not None for name in SERVICE_MARKERS):
        return True
    return bool(SERVICE_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{SERVICES_MARKER}: needs a service or minutes (set at collection; the fast loop leaves it out)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if needs_service(item):
            item.add_marker(SERVICES_MARKER)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _running["item"] = item


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest) -> None:
    item = _running.get("item")
    if fixturedef.argname in SERVICE_FIXTURES and item is not None and item.get_closest_marker(SERVICES_MARKER) is None:
        raise pytest.UsageError(
            f"{item.nodeid} starts the service fixture '{fixturedef.argname}' but is not marked '{SERVICES_MARKER}': "
            f"give it one of the markers {sorted(SERVICE_MARKERS)} or use the fixture as an argument"
        )
