"""Every test runs: a skip is reported as a failure, so a missing service can never pass unseen.

Two places a skip can happen: in a test (its body, or a skip mark acting at setup) and while a
module is collected (a module-level ``pytest.importorskip`` or ``pytest.skip(allow_module_level=True)``),
which reports no test at all. Both fail the run.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid} was skipped, and no test may skip here: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, pytest.CollectReport, None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = (
            f"{collector.nodeid} was skipped while collected, and no test may skip here: {report.longrepr}"
        )
