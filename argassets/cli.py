"""``argassets``: operate the platform from a terminal, on the persistent Dagster instance.

Everything runs against ``$DAGSTER_HOME`` (default: ``.dagster_home/`` in the project), the same
instance ``dagster dev`` shows, so results appear in the UI. Runs execute in this process, in
order (``run-default`` forks a process for the later studies' inputs and for a study's reports
while the next study is judged), and are recorded like any other run (re-execute them from the UI).

Commands::

    argassets partitions sync      # a partition per registry entry, in judge_models and its studies (never deletes)
    argassets partitions list
    argassets pools --gpu 1        # limit of the "gpu" concurrency pool (judging steps)
    argassets materialize random   # one model partition of every study it takes part in
    argassets backfill --from longer-wins --to random    # a range of partitions (registry order)
    argassets run-default          # study inputs, every baseline and published import, then every report
    argassets runs mark-orphans    # runs whose process died (kill -9) are marked failed (every command does it first)
    argassets ui                   # dagster dev on 127.0.0.1
    argassets sql "SHOW TABLES"    # query the results (Parquet copies), also while runs write
    argassets slurm backfill --partitions a,b   # one Slurm job per partition (docs/operations.md)
    argassets retrieve "..." --system E1 --position 60-90 --method typical   # docs/retrieval.md
    argassets debate "..." --model smollm2-135m-vllm                         # (and persona)

The equivalent Dagster commands (``dagster asset materialize --partition``, ``dagster job
backfill``) are documented in docs/operations.md.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from argassets.platform.operations.run_recovery import (
    HOST_TAG,
    PID_TAG,
    Stopped,
    fail_orphaned_runs,
    fail_runs_of_stopped_processes,
    run_stoppably,
    signals_recorded,
)
from argassets.platform.paths import PROJECT_ROOT, resolve_data_dir
from argassets.platform.registry.entries import (
    BASELINE_BACKENDS,
    ModelRegistry,
    PartitionKeyError,
    RegistryError,
    is_valid_partition_key,
    load_registry,
    validate_partition_key,
)
from argassets.platform.registry.partitions import JUDGE_MODELS, add_model_partitions
from argassets.platform.study import get_study, study_names

DEFAULT_DAGSTER_HOME = PROJECT_ROOT / ".dagster_home"
DEFINITIONS_MODULE = "argassets.definitions"
LAUNCHED_BY_TAG = "argassets/launched-by"
DEFAULT_HOST = "127.0.0.1"
STUDY_HELP = "run only this study (default: every study the model takes part in)"


class CliError(RuntimeError):
    """An error shown to the user as one line, with exit status 2."""


def _print(message: str) -> None:
    print(message, flush=True)  # noqa: T201


LOCAL_INSTANCE_CONFIG = PROJECT_ROOT / "deploy" / "local" / "dagster.yaml"


def dagster_home() -> Path:
    """``$DAGSTER_HOME``, else ``.dagster_home/`` in the project (created, and exported).

    A home without ``dagster.yaml`` gets a copy of ``deploy/local/dagster.yaml`` (run queue,
    concurrency pools, run monitoring); an existing one is never touched.
    """
    home = Path(os.environ.get("DAGSTER_HOME") or DEFAULT_DAGSTER_HOME).resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists() and LOCAL_INSTANCE_CONFIG.exists():
        shutil.copyfile(LOCAL_INSTANCE_CONFIG, config)
        print(f"argassets: wrote {config} (from deploy/local/dagster.yaml)", file=sys.stderr)  # noqa: T201
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def get_instance(recover: bool = True) -> Any:
    """The instance of ``$DAGSTER_HOME``; first, runs whose process is gone are failed and their
    pool slots freed (``recover``), so that no killed run blocks this command."""
    import dagster as dg

    dagster_home()
    instance = dg.DagsterInstance.get()
    if recover:
        for line in mark_orphans(instance):
            _print(line)
    return instance


def _registry() -> ModelRegistry:
    try:
        return load_registry()
    except RegistryError as exc:
        raise CliError(str(exc)) from None


# --- partitions -------------------------------------------------------------------------------


def sync_partitions(instance: Any, registry: ModelRegistry, dry_run: bool = False) -> dict[str, list[str]]:
    """Add a partition for every registry entry that has none (``judge_models`` and its studies'); never delete one.

    Returns the names ``added``, ``present`` and ``not_in_registry`` (partitions kept although
    their entry was removed).
    """

    existing = list(instance.get_dynamic_partitions(JUDGE_MODELS))
    added = [name for name in registry.names if name not in existing]
    if not dry_run:
        # judge_models lists every entry; each study's definition its own (also catching up an upgrade).
        add_model_partitions(instance, registry, study_names())
    return {
        "added": added,
        "present": [name for name in registry.names if name in existing],
        "not_in_registry": [name for name in existing if name not in registry.names],
    }


def cmd_partitions_sync(args: argparse.Namespace) -> int:
    instance = get_instance()
    result = sync_partitions(instance, _registry(), dry_run=args.dry_run)
    verb = "would add" if args.dry_run else "added"
    _print(f"{verb}: {', '.join(result['added']) or 'none'}")
    _print(f"already present: {len(result['present'])}")
    if result["not_in_registry"]:
        _print(
            "kept although no longer in the registry (stored judgments stay): " + ", ".join(result["not_in_registry"])
        )
    return 0


def cmd_partitions_list(args: argparse.Namespace) -> int:

    instance = get_instance()
    registry = _registry()
    for name in instance.get_dynamic_partitions(JUDGE_MODELS):
        if not is_valid_partition_key(name):
            _print(f"{name!r}\t(not a valid model name: added by hand? never run; delete it in the UI)")
        elif name in registry.names:
            entry = registry.get(name)
            _print(f"{name}\t{entry.backend}\tgpus={entry.gpus}\t{','.join(entry.studies)}")
        else:
            _print(f"{name}\t(not in the registry)")
    return 0


def cmd_pools(args: argparse.Namespace) -> int:
    instance = get_instance()
    storage = instance.event_log_storage
    if args.gpu is not None:
        if args.gpu < 0:
            raise CliError("--gpu must be 0 or more")
        storage.set_concurrency_slots("gpu", args.gpu)
        _print(f"pool 'gpu': limit {args.gpu}")
    for key in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(key)
        _print(f"pool {key!r}: limit {info.slot_count}, in use {len(info.claimed_slots)}")
    return 0


# --- execution --------------------------------------------------------------------------------


class Executor:
    """Runs selections of assets in this process on the persistent instance."""

    def __init__(self, instance: Any):
        from dagster._core.definitions.reconstruct import ReconstructableRepository

        from argassets.platform.operations.automation import operations_layout

        self.instance = instance
        self.recon_repo = ReconstructableRepository.for_module(
            DEFINITIONS_MODULE, "defs", working_directory=str(PROJECT_ROOT)
        )
        self.repo_def = self.recon_repo.get_definition()
        self.layout = operations_layout(self.repo_def.asset_graph)

    def run(self, keys: Sequence[Any], partition: str | None, tags: dict[str, str], label: str) -> bool:
        import socket

        import dagster as dg

        job_def = self.repo_def.get_implicit_job_def_for_assets(list(keys))
        if job_def is None:
            raise CliError(f"{label}: the selected assets cannot run in one job")
        run_tags = {
            **tags,
            LAUNCHED_BY_TAG: "argassets-cli",
            PID_TAG: str(os.getpid()),
            HOST_TAG: socket.gethostname(),
        }
        if partition is not None:
            run_tags["dagster/partition"] = partition
        names = ", ".join(key.to_user_string() for key in keys)
        _print(f"running {label}: {names}" + (f" [partition {partition}]" if partition else ""))
        result = run_stoppably(
            lambda: dg.execute_job(
                self.recon_repo.get_reconstructable_job(job_def.name),
                instance=self.instance,
                tags=run_tags,
                asset_selection=list(keys),
                # Steps in this process, one after the other: no re-import of the code location per step.
                run_config={"execution": {"config": {"in_process": {}}}},
            ),
            self.instance,
        )
        status = "succeeded" if result.success else "FAILED"
        _print(f"  run {result.run_id} {status}")
        return result.success

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
        order = {key: i for i, key in enumerate(self.repo_def.asset_graph.toposorted_asset_keys)}
        missing = [k for k in candidates if self.instance.get_latest_materialization_event(k) is None]
        return sorted(missing, key=order.__getitem__)

    def run_partition(self, registry: ModelRegistry, name: str, studies: Sequence[str] | None) -> bool:
        from argassets.platform.operations.run_tags import run_tags_for_entry

        entry = registry.get(name)
        chosen = [s for s in entry.studies if s in self.layout.roots and (studies is None or s in studies)]
        if not chosen:
            _print(f"{name}: takes part in no selected study with assets here; nothing to run")
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
        if first and not self.run(first, None, {}, "study inputs and tables"):
            return False
        later = [key for key in self.missing_inputs(studies[1:], everything=True) if key not in first]
        inputs = "study inputs and tables"
        if later:
            background[inputs] = self._in_background(inputs, lambda: self.run(later, None, {}, inputs))
        failed: list[str] = []
        reports_ok = True
        for i, study in enumerate(studies):
            if i > 0 and inputs in background and not self._succeeded(inputs, background.pop(inputs)):
                return False
            members = [n for n in names if study in registry.get(n).studies]
            failed_here = [n for n in members if not self.run_partition(registry, n, [study])]
            failed += [n for n in failed_here if n not in failed]
            if failed_here:
                _print(f"{study}: reports not run, partitions failed: {', '.join(failed_here)}")
            elif i < len(studies) - 1:
                label = f"{study} reports"
                background[label] = self._in_background(label, functools.partial(self.run_reports, [study]))
            else:
                reports_ok = self.run_reports([study])
        if failed:
            _print(f"failed partitions: {', '.join(failed)}")
        return reports_ok and not failed

    @staticmethod
    def _in_background(label: str, work: Callable[[], bool]) -> Any:
        """A forked process doing ``work`` (exit status 0 when it returned true)."""
        import multiprocessing

        def main() -> None:
            sys.exit(0 if work() else 1)

        # What is buffered now would be written twice, once by each process.
        sys.stdout.flush()
        sys.stderr.flush()
        process = multiprocessing.get_context("fork").Process(target=main, name=f"argassets {label}")
        process.start()
        _print(f"{label}: running in process {process.pid}")
        return process

    @staticmethod
    def _succeeded(label: str, process: Any) -> bool:
        """Whether a process of :meth:`_in_background` succeeded, once it has finished."""
        process.join()
        if process.exitcode != 0:
            _print(f"{label}: process {process.pid} exited with status {process.exitcode}")
        return process.exitcode == 0

    def run_reports(self, studies: Sequence[str] | None = None) -> bool:
        """Every report of ``studies`` (default all), after the inputs and standalone tables their
        checks need that were never materialised."""
        chosen = list(self.layout.roots) if studies is None else list(studies)
        missing = self.missing_inputs(chosen, everything=True)
        if missing and not self.run(missing, None, {}, "study inputs and tables"):
            return False
        if studies is None:
            keys = list(self.layout.reports)
        else:
            keys = []
            for study in studies:
                keys += [k for k in self.layout.reports_by_study.get(study, ()) if k not in keys]
            order = {key: i for i, key in enumerate(self.repo_def.asset_graph.toposorted_asset_keys)}
            keys.sort(key=order.__getitem__)
        if not keys:
            where = "in the code location" if studies is None else f"of the studies {', '.join(studies) or '(none)'}"
            _print(f"no report assets {where}")
            return True
        return self.run(keys, None, {}, "reports")


def _check_key(key: str, where: str) -> str:
    """A partition key given on the command line, checked before anything looks it up."""
    try:
        return validate_partition_key(key, f"{where}: partition key")
    except PartitionKeyError as exc:
        raise CliError(str(exc)) from None


def _select_partitions(registry: ModelRegistry, instance: Any, args: argparse.Namespace) -> list[str]:

    ordered = [n for n in instance.get_dynamic_partitions(JUDGE_MODELS) if n in registry.names]
    for option, value in (("--from", args.start), ("--to", args.end)):
        if value:
            _check_key(value, option)
    if args.partitions:
        names = [_check_key(p.strip(), "--partitions") for p in args.partitions.split(",") if p.strip()]
    elif args.all:
        names = ordered
    else:
        if not (args.start or args.end):
            raise CliError("choose partitions: --partitions a,b or --from A --to B or --all")
        start = ordered.index(args.start) if args.start in ordered else None
        end = ordered.index(args.end) if args.end in ordered else None
        if args.start and start is None:
            raise CliError(f"--from {args.start}: no such partition (have: {', '.join(ordered)})")
        if args.end and end is None:
            raise CliError(f"--to {args.end}: no such partition (have: {', '.join(ordered)})")
        names = ordered[(start or 0) : (len(ordered) if end is None else end + 1)]
        if not names:
            raise CliError(f"--from {args.start} --to {args.end}: empty range (order: {', '.join(ordered)})")
    unknown = [n for n in names if n not in registry.names]
    if unknown:
        raise CliError(f"not in the registry: {', '.join(unknown)}")
    return names


def _studies(value: str | None) -> list[str] | None:
    return None if value in (None, "all") else [value]


def studies_taken_part_in(
    registry: ModelRegistry, names: Sequence[str], studies: Sequence[str] | None, available: Iterable[str]
) -> list[str]:
    """The studies (of ``available``, within ``studies`` unless ``None``) that the entries take part in.

    ``--with-reports`` refreshes these studies' reports only: a Study A-only model leaves Study B's alone.
    """
    present = set(available)
    chosen: list[str] = []
    for name in names:
        for study in registry.get(name).studies:
            if study in present and (studies is None or study in studies) and study not in chosen:
                chosen.append(study)
    return chosen


def cmd_materialize(args: argparse.Namespace) -> int:
    _check_key(args.partition, "materialize")
    instance = get_instance()
    registry = _registry()
    sync_partitions(instance, registry)
    if args.partition not in registry.names:
        raise CliError(f"{args.partition}: not in the registry (known: {', '.join(registry.names)})")
    executor = Executor(instance)
    ok = executor.run_partition(registry, args.partition, _studies(args.study))
    if ok and args.with_reports:
        ok = executor.run_reports(
            studies_taken_part_in(registry, [args.partition], _studies(args.study), executor.layout.roots)
        )
    return 0 if ok else 1


def cmd_backfill(args: argparse.Namespace) -> int:
    instance = get_instance()
    registry = _registry()
    sync_partitions(instance, registry)
    names = _select_partitions(registry, instance, args)
    _print(f"backfill of {len(names)} partition(s): {', '.join(names)}")
    executor = Executor(instance)
    failed = [name for name in names if not executor.run_partition(registry, name, _studies(args.study))]
    ok = not failed
    if args.with_reports and ok:
        ok = executor.run_reports(studies_taken_part_in(registry, names, _studies(args.study), executor.layout.roots))
    if failed:
        _print(f"failed partitions: {', '.join(failed)} (run them again: cached work is not redone)")
    return 0 if ok else 1


def default_models(registry: ModelRegistry, published_data: bool) -> list[str]:
    """What ``run-default`` judges: every baseline and, with the published data, every import of the
    published political predictions (so that the KB holds the paper's 22 models and its ensembles)."""
    names = [e.name for e in registry.models if e.backend in BASELINE_BACKENDS]
    if published_data:
        names += [e.name for e in registry.models if e.backend == "import" and e.format == "published_tsv"]
    return names


def cmd_run_default(args: argparse.Namespace) -> int:
    instance = get_instance()
    registry = _registry()
    synced = sync_partitions(instance, registry)
    _print(f"partitions added: {', '.join(synced['added']) or 'none'}")
    names = (
        [_check_key(p.strip(), "--models") for p in args.models.split(",") if p.strip()]
        if args.models
        else default_models(registry, resolve_data_dir() is not None)
    )
    unknown = [n for n in names if n not in registry.names]
    if unknown:
        raise CliError(f"not in the registry: {', '.join(unknown)}")
    executor = Executor(instance)
    studies = [s for s in executor.layout.roots if any(registry.get(n).takes_part_in(s) for n in names)]
    left_out = [s for s in studies if get_study(s).needs_published_data] if resolve_data_dir() is None else []
    if left_out:
        # The other studies fall back to what they have without it (Study A: the embedded sample).
        studies = [s for s in studies if s not in left_out]
        _print(
            "no published data folder (ARGASSETS_DATA_DIR or ../shared/data); left out, as they need it: "
            + "; ".join(get_study(s).title for s in left_out)
        )
    _print(f"models: {', '.join(names)}; studies: {', '.join(studies) or 'none'}")
    no_study = [n for n in names if not any(s in registry.get(n).studies for s in studies)]
    for name in no_study:
        _print(f"{name}: takes part in no selected study with assets here; nothing to run")
    ok = executor.run_default(registry, names, studies)
    if ok:
        _print(f"done; see the results with `argassets ui` (DAGSTER_HOME={dagster_home()})")
    return 0 if ok else 1


def mark_orphans(instance: Any) -> list[str]:
    """Mark runs whose process is gone as failed and free their pool slots
    (:func:`argassets.platform.operations.run_recovery.fail_orphaned_runs`); one line per run."""
    lines = []
    for run, reason in fail_orphaned_runs(instance):
        gone = reason.removeprefix("the process running it ").removesuffix(" (killed or crashed)")
        lines.append(f"marked failed: run {run.run_id} ({run.job_name}); its process {gone}")
    return lines


def cmd_runs_mark_orphans(args: argparse.Namespace) -> int:
    """Mark runs started from a terminal whose process no longer exists as failed."""
    lines = mark_orphans(get_instance(recover=False))
    for line in lines:
        _print(line)
    _print(f"{len(lines)} orphaned run(s) marked failed")
    return 0


#: Seconds ``argassets ui`` gives dagster dev to stop by itself, then to its children to terminate.
UI_GRACE_S = 5.0
UI_TERMINATE_S = 2.0


def cmd_ui(args: argparse.Namespace) -> int:
    """dagster dev in its own session; on SIGTERM or SIGINT it and every process it started stop
    (within about 8 s), and the runs those processes were running are marked failed."""
    from argassets.platform.operations.process_tree import ProcessTree

    # Opened now: importing dagster takes seconds that the stop must not spend.
    instance = get_instance(recover=False)
    command = [
        str(Path(sys.executable).parent / "dagster"),
        "dev",
        "-h",
        args.host,
        "-p",
        str(args.port),
        "-w",
        str(PROJECT_ROOT / "workspace.yaml"),
    ]
    _print("$ " + " ".join(command))
    with signals_recorded() as received:
        # Its own session: Ctrl-C reaches this process only, which stops the whole tree in order.
        server = subprocess.Popen(command, cwd=PROJECT_ROOT, start_new_session=True)
        tree = ProcessTree(server.pid)
        while server.poll() is None and not received:
            tree.remember()  # children outliving dagster dev are reparented: know them beforehand
            time.sleep(0.5)
        if not received:
            tree.stop(grace_s=UI_GRACE_S, terminate_s=UI_TERMINATE_S)  # dagster dev died: its children too
            return server.returncode
        started = time.monotonic()
        left = tree.stop(signal.SIGTERM, grace_s=UI_GRACE_S, terminate_s=UI_TERMINATE_S)
        if left:
            _print(f"argassets ui: terminated what dagster dev left running: {'; '.join(left)}")
        reason = f"argassets ui stopped by {signal.Signals(received[0]).name} while the run was in flight"
        for run_id in fail_runs_of_stopped_processes(instance, tree.pids(), reason):
            _print(f"marked failed: run {run_id} (its processes were stopped with dagster dev)")
        _print(f"argassets ui: stopped in {time.monotonic() - started:.1f} s")
        # Nothing is left to clean up; the interpreter's own teardown (modules, atexit) took 5 s here.
        sys.stderr.flush()
        os._exit(128 + received[0])


def cmd_sql(args: argparse.Namespace) -> int:
    """One query over the published tables (never the DuckDB file a run writes)."""
    import duckdb

    from argassets.platform.storage.warehouse import connect

    try:
        with connect() as connection:
            relation = connection.sql(args.query)
            if relation is None:
                return 0
            if args.csv:
                relation.df().to_csv(sys.stdout, index=False)
            else:
                relation.show(max_rows=args.max_rows, max_width=shutil.get_terminal_size().columns)
    except (FileNotFoundError, duckdb.Error) as exc:
        raise CliError(str(exc)) from None
    return 0


def build_parser() -> argparse.ArgumentParser:
    from argassets.cli_environment import environment_epilog

    parser = argparse.ArgumentParser(
        prog="argassets",
        description=__doc__.split("\n\n")[0],
        epilog=environment_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    partitions = sub.add_parser("partitions", help="model partitions of the instance (judge_models and models_<study>)")
    psub = partitions.add_subparsers(dest="partitions_command", required=True)
    sync = psub.add_parser("sync", help="add a partition per registry entry (never deletes)")
    sync.add_argument("--dry-run", action="store_true", help="print the partitions it would add; add none")
    sync.set_defaults(func=cmd_partitions_sync)
    plist = psub.add_parser("list", help="list partitions with their backend and GPUs")
    plist.set_defaults(func=cmd_partitions_list)

    pools = sub.add_parser("pools", help="show or set concurrency pool limits")
    pools.add_argument("--gpu", type=int, help="limit of the 'gpu' pool (concurrent judging steps)")
    pools.set_defaults(func=cmd_pools)

    mat = sub.add_parser("materialize", help="materialise one model partition of its studies")
    mat.add_argument("partition", help="registry entry (a judge_models partition key), e.g. random")
    mat.add_argument("--study", choices=[*study_names(), "all"], default="all", help=STUDY_HELP)
    mat.add_argument("--with-reports", action="store_true", help="then refresh every report")
    mat.set_defaults(func=cmd_materialize)

    back = sub.add_parser("backfill", help="materialise several model partitions, one run each")
    back.add_argument("--partitions", help="comma-separated partition keys")
    back.add_argument("--from", dest="start", help="first partition of a range (registry order)")
    back.add_argument("--to", dest="end", help="last partition of a range (inclusive)")
    back.add_argument("--all", action="store_true", help="every partition of the instance (registry order)")
    back.add_argument("--study", choices=[*study_names(), "all"], default="all", help=STUDY_HELP)
    back.add_argument("--with-reports", action="store_true", help="then refresh every report")
    back.set_defaults(func=cmd_backfill)

    default = sub.add_parser(
        "run-default",
        help="every unpartitioned input and table, the baselines and published imports, then every report",
    )
    default.add_argument("--models", help="comma-separated entries instead of the baselines and published imports")
    default.set_defaults(func=cmd_run_default)

    runs = sub.add_parser("runs", help="run housekeeping")
    rsub = runs.add_subparsers(dest="runs_command", required=True)
    orphans = rsub.add_parser("mark-orphans", help="mark runs whose process died as failed")
    orphans.set_defaults(func=cmd_runs_mark_orphans)

    ui = sub.add_parser("ui", help="start dagster dev (webserver + daemon), bound to 127.0.0.1")
    ui.add_argument("--host", default=DEFAULT_HOST, help="interface to bind (default 127.0.0.1)")
    ui.add_argument("--port", type=int, default=3000, help="port of the web UI (default 3000)")
    ui.set_defaults(func=cmd_ui)

    sql = sub.add_parser(
        "sql", help="run one DuckDB query over the results (their Parquet copies: safe while runs write)"
    )
    sql.add_argument("query", help='e.g. "SHOW TABLES" or "SELECT * FROM aq_bt_scores LIMIT 5"')
    sql.add_argument("--csv", action="store_true", help="print every row as CSV instead of a table")
    sql.add_argument("--max-rows", type=int, default=40, help="rows shown in the table (default 40)")
    sql.set_defaults(func=cmd_sql)

    from argassets.cli_slurm import add_slurm_commands

    add_slurm_commands(sub)

    from argassets.cli_batch import add_batch_commands

    add_batch_commands(sub)  # batch export, batch import (docs/judgments.md, "Batch files")

    from argassets.political.cli_retrieval import add_commands as add_retrieval_commands

    add_retrieval_commands(sub)  # retrieve, debate, persona (docs/retrieval.md)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as exc:
        print(f"argassets: error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    except Stopped as stop:
        # Its runs are marked failed; the worker thread may still be inside a step, so leave now.
        print(f"argassets: {stop}; its runs are marked failed", file=sys.stderr, flush=True)  # noqa: T201
        sys.stdout.flush()
        os._exit(128 + stop.signum)


if __name__ == "__main__":
    sys.exit(main())
