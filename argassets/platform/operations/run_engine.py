"""The in-process run engine: selections of assets run in this process, on the persistent instance.

``argassets`` (the CLI) drives it: one run per model partition and study, the study inputs and
reports around them; ``run-default`` forks a process for the later studies' inputs and for a
study's reports while the next study is judged (docs/operations.md).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

from argassets.platform.operations.run_recovery import HOST_TAG, PID_TAG, run_stoppably
from argassets.platform.paths import PROJECT_ROOT
from argassets.platform.registry.entries import ModelRegistry

LAUNCHED_BY_TAG = "argassets/launched-by"
#: Steps in the run's process, one after the other: no re-import of the code location per step.
IN_PROCESS: dict[str, Any] = {"execution": {"config": {"in_process": {}}}}
INPUTS_LABEL = "study inputs and tables"


class OperationError(RuntimeError):
    """An operation that cannot go on; shown to the user as one line (the CLI exits with status 2)."""


def say(message: str) -> None:
    """One line of progress on standard output, flushed (forked processes write to the same stream)."""
    print(message, flush=True)


class Executor:
    """Runs selections of assets in this process on the persistent instance.

    ``definitions_module`` names the module whose ``defs`` is the code location (the CLI passes
    ``argassets.definitions``); it is imported here, once.
    """

    def __init__(self, instance: Any, definitions_module: str):
        from dagster._core.definitions.reconstruct import ReconstructableRepository

        from argassets.platform.operations.automation import operations_layout

        self.instance = instance
        self.recon_repo = ReconstructableRepository.for_module(
            definitions_module, "defs", working_directory=str(PROJECT_ROOT)
        )
        self.repo_def = self.recon_repo.get_definition()
        self.layout = operations_layout(self.repo_def.asset_graph)

    def run(self, keys: Sequence[Any], partition: str | None, tags: dict[str, str], label: str) -> bool:
        """One run of ``keys`` (of ``partition``), tagged; whether it succeeded."""
        import dagster as dg

        job_def = self.repo_def.get_implicit_job_def_for_assets(list(keys))
        if job_def is None:
            raise OperationError(f"{label}: the selected assets cannot run in one job")
        run_tags = {**tags, LAUNCHED_BY_TAG: "argassets-cli", PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}
        if partition is not None:
            run_tags["dagster/partition"] = partition
        names = ", ".join(key.to_user_string() for key in keys)
        say(f"running {label}: {names}" + (f" [partition {partition}]" if partition else ""))
        result = run_stoppably(
            lambda: dg.execute_job(
                self.recon_repo.get_reconstructable_job(job_def.name),
                instance=self.instance,
                tags=run_tags,
                asset_selection=list(keys),
                run_config=IN_PROCESS,
            ),
            self.instance,
        )
        say(f"  run {result.run_id} {'succeeded' if result.success else 'FAILED'}")
        return result.success

    def in_graph_order(self, keys: Sequence[Any]) -> list[Any]:
        """``keys`` in the topological order of the code location's asset graph."""
        order = {key: i for i, key in enumerate(self.repo_def.asset_graph.toposorted_asset_keys)}
        return sorted(keys, key=order.__getitem__)

    def missing_inputs(self, studies: Sequence[str], everything: bool = False) -> list[Any]:
        """Unmaterialised inputs of the studies' judging (or, ``everything``, of their reports and
        their standalone tables too)."""
        candidates: list[Any] = []
        for study in studies:
            groups = (
                [self.layout.inputs_by_study.get(study, ()), self.layout.standalone_by_study.get(study, ())]
                if everything
                else [self.layout.unpartitioned_ancestors.get(study, ())]
            )
            for keys in groups:
                candidates += [k for k in keys if k not in candidates]
        missing = [k for k in candidates if self.instance.get_latest_materialization_event(k) is None]
        return self.in_graph_order(missing)

    def run_partition(self, registry: ModelRegistry, name: str, studies: Sequence[str] | None) -> bool:
        """Partition ``name`` of each of its studies (within ``studies``), after their missing inputs."""
        from argassets.platform.operations.run_tags import run_tags_for_entry

        entry = registry.get(name)
        chosen = [s for s in entry.studies if s in self.layout.roots and (studies is None or s in studies)]
        if not chosen:
            say(f"{name}: takes part in no selected study with assets here; nothing to run")
            return True
        inputs = self.missing_inputs(chosen)
        if inputs and not self.run(inputs, None, {}, "study inputs"):
            return False
        ok = True
        for study in chosen:
            keys = self.layout.study_selection(study)
            ok = self.run(keys, name, run_tags_for_entry(entry, study=study), f"{study} / {name}") and ok
        return ok

    def run_default(self, registry: ModelRegistry, names: Sequence[str], studies: Sequence[str]) -> bool:
        """The inputs, partitions of ``names`` and reports of ``studies``, on two cores.

        The first study's inputs run here, the other studies' in a forked process meanwhile. Then
        study after study: its partitions (one run each), then its reports in a forked process while
        the next study's partitions are judged (the last study's reports here). A study with a
        failed partition gets no reports. Forks inherit the loaded code location (nothing is
        imported again); DuckDB and the judgment cache take one writer at a time, and Dagster's
        connections to them wait for their turn. Every forked process is waited for; on an
        exception (a signal) they are terminated.
        """
        background: dict[str, Any] = {}
        try:
            ok = self._judge_and_report(registry, names, studies, background)
        except BaseException:
            for process in background.values():
                process.terminate()
            raise
        finished = [self._succeeded(label, process) for label, process in background.items()]
        return ok and all(finished)

    def _judge_and_report(
        self, registry: ModelRegistry, names: Sequence[str], studies: Sequence[str], background: dict[str, Any]
    ) -> bool:
        first = self.missing_inputs(studies[:1], everything=True)
        if first and not self.run(first, None, {}, INPUTS_LABEL):
            return False
        later = [key for key in self.missing_inputs(studies[1:], everything=True) if key not in first]
        if later:
            background[INPUTS_LABEL] = self._in_background(
                INPUTS_LABEL, lambda: self.run(later, None, {}, INPUTS_LABEL)
            )
        failed: list[str] = []
        reports_ok = True
        for i, study in enumerate(studies):
            if i > 0 and INPUTS_LABEL in background and not self._succeeded(INPUTS_LABEL, background.pop(INPUTS_LABEL)):
                return False
            members = [n for n in names if study in registry.get(n).studies]
            failed_here = [n for n in members if not self.run_partition(registry, n, [study])]
            failed += [n for n in failed_here if n not in failed]
            if failed_here:
                say(f"{study}: reports not run, partitions failed: {', '.join(failed_here)}")
            elif i < len(studies) - 1:
                label = f"{study} reports"
                background[label] = self._in_background(label, functools.partial(self.run_reports, [study]))
            else:
                reports_ok = self.run_reports([study])
        if failed:
            say(f"failed partitions: {', '.join(failed)}")
        return reports_ok and not failed

    @staticmethod
    def _in_background(label: str, work: Callable[[], bool]) -> Any:
        """A forked process doing ``work`` (exit status 0 when it returned true)."""

        def main() -> None:
            sys.exit(0 if work() else 1)

        # What is buffered now would be written twice, once by each process.
        sys.stdout.flush()
        sys.stderr.flush()
        process = multiprocessing.get_context("fork").Process(target=main, name=f"argassets {label}")
        process.start()
        say(f"{label}: running in process {process.pid}")
        return process

    @staticmethod
    def _succeeded(label: str, process: Any) -> bool:
        """Whether a process of :meth:`_in_background` succeeded, once it has finished."""
        process.join()
        if process.exitcode != 0:
            say(f"{label}: process {process.pid} exited with status {process.exitcode}")
        return process.exitcode == 0

    def run_reports(self, studies: Sequence[str] | None = None) -> bool:
        """Every report of ``studies`` (default all), after the inputs and standalone tables their
        checks need that were never materialised."""
        chosen = list(self.layout.roots) if studies is None else list(studies)
        missing = self.missing_inputs(chosen, everything=True)
        if missing and not self.run(missing, None, {}, INPUTS_LABEL):
            return False
        if studies is None:
            keys = list(self.layout.reports)
        else:
            keys = []
            for study in studies:
                keys += [k for k in self.layout.reports_by_study.get(study, ()) if k not in keys]
            keys = self.in_graph_order(keys)
        if not keys:
            where = "in the code location" if studies is None else f"of the studies {', '.join(studies) or '(none)'}"
            say(f"no report assets {where}")
            return True
        return self.run(keys, None, {}, "reports")
