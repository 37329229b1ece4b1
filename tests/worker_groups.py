"""Which tests share a worker when the fast loop runs on both cores (``-n 2``, ``--dist loadgroup``).

pytest-xdist computes a session fixture once per worker, and a module fixture once per worker that
runs a test of its module. So the tests that use an expensive session fixture are kept on one worker
(group: the fixture), and the tests that use a module-, class- or package-scoped fixture on one
worker per module (group: the module); every other test is handed to whichever worker is free.
"""

from __future__ import annotations

import pytest

#: Session fixtures that take seconds (parsing QT30, which the 22 published models' fixture also
#: needs; materialising the sample's Study A inputs; the sensor tests' bootstrapped instances), in
#: the order that names a test's group.
EXPENSIVE_SESSION_FIXTURES: tuple[str, ...] = ("qt30_kb", "upstream_db", "judged_snapshot", "reported_snapshot")
_SHARED_SCOPES = frozenset({"module", "class", "package"})


def worker_group(item: pytest.Item) -> str | None:
    """The group that keeps ``item`` on the worker holding its expensive fixtures, if it needs one."""
    names = set(getattr(item, "fixturenames", ()))
    for fixture in EXPENSIVE_SESSION_FIXTURES:
        if fixture in names:
            return fixture
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.values() if info is not None else ()
    if any(defs and defs[-1].scope in _SHARED_SCOPES for defs in definitions):
        return item.nodeid.split("::")[0]
    return None


# First, so that xdist's own hook (which appends the group to each node id) sees the marks.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = worker_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
