"""``run-default``'s order of work: the first study's inputs, the others' in another process; then
each study's partitions, then its reports, in another process while the next study is judged.

The executor's runs are replaced by recorders (no Dagster run): what is checked is which study is
judged and reported when, in which process, and what a failure stops.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from argassets.platform.operations.run_engine import Executor
from argassets.platform.registry.entries import parse_registry

REGISTRY = parse_registry(
    {
        "models": [
            {"name": "both", "backend": "random", "studies": ["argument_quality", "political"]},
            {"name": "only-a", "backend": "longer-wins", "studies": ["argument_quality"]},
            {"name": "only-b", "backend": "random", "studies": ["political"]},
        ]
    }
)
STUDIES = ["argument_quality", "political"]


class RecordingExecutor(Executor):
    """An executor whose runs only append ``event pid`` lines to a file (shared with forked processes)."""

    def __init__(self, log: Path, failing: frozenset[str] = frozenset()):  # no instance, no code location
        self.log = log
        self.failing = failing

    def missing_inputs(self, studies, everything=False):  # noqa: ANN001
        assert everything
        return [f"{study}-input" for study in studies] + (["shared-input"] if studies else [])

    def run(self, keys, partition, tags, label):  # noqa: ANN001
        self.record(f"inputs {','.join(keys)}")
        return "political-input" not in keys or "inputs" not in self.failing

    def record(self, event: str) -> None:
        with self.log.open("a", encoding="utf-8") as out:
            out.write(f"{event} {os.getpid()}\n")

    def run_partition(self, registry, name, studies):  # noqa: ANN001
        self.record(f"judge {name} {','.join(studies or [])}")
        return name not in self.failing

    def run_reports(self, studies=None):  # noqa: ANN001
        self.record(f"reports {','.join(studies or [])}")
        return True

    def events(self) -> list[tuple[str, bool]]:
        """Each event and whether it ran in this process."""
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [(line.rsplit(" ", 1)[0], int(line.rsplit(" ", 1)[1]) == os.getpid()) for line in lines]


def test_a_study_is_reported_in_another_process_while_the_next_is_judged(tmp_path: Path) -> None:
    executor = RecordingExecutor(tmp_path / "events")
    assert executor.run_default(REGISTRY, ["both", "only-a", "only-b"], STUDIES)
    events = executor.events()
    here = [event for event, local in events if local]
    assert here == [
        "inputs argument_quality-input,shared-input",
        "judge both argument_quality",
        "judge only-a argument_quality",
        "judge both political",
        "judge only-b political",
        "reports political",
    ]
    # the other study's inputs (less what the first run had) and the first study's reports, forked
    assert [event for event, local in events if not local] == ["inputs political-input", "reports argument_quality"]
    assert events.index(("reports argument_quality", False)) > events.index(("judge only-a argument_quality", True))
    assert events.index(("inputs political-input", False)) < events.index(("judge both political", True))


def test_failed_inputs_of_a_later_study_stop_before_it_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    executor = RecordingExecutor(tmp_path / "events", failing=frozenset({"inputs"}))
    assert not executor.run_default(REGISTRY, ["both", "only-b"], STUDIES)
    events = [event for event, _ in executor.events()]
    assert "judge both political" not in events
    assert "reports argument_quality" in events  # already running: waited for, not abandoned
    assert "study inputs and tables: process" in capsys.readouterr().out


def test_a_failed_partition_leaves_its_study_unreported_and_fails_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    executor = RecordingExecutor(tmp_path / "events", failing=frozenset({"only-a"}))
    assert not executor.run_default(REGISTRY, ["both", "only-a", "only-b"], STUDIES)
    events = [event for event, _ in executor.events()]
    assert "reports argument_quality" not in events
    assert events[-1] == "reports political"  # the other study's partitions all succeeded
    out = capsys.readouterr().out
    assert "argument_quality: reports not run, partitions failed: only-a" in out
    assert "failed partitions: only-a" in out


def test_failed_background_reports_fail_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    class FailingReports(RecordingExecutor):
        def run_reports(self, studies=None):  # noqa: ANN001
            super().run_reports(studies)
            return studies != ["argument_quality"]

    executor = FailingReports(tmp_path / "events")
    assert not executor.run_default(REGISTRY, ["both"], STUDIES)
    assert "argument_quality reports: process" in capsys.readouterr().out
