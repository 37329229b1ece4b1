"""``argassets slurm ...``: judge model partitions as Slurm jobs, from the cluster's login node.

Commands::

    argassets slurm backfill --partitions a,b,c [--study S] [--no-wait]
    argassets slurm backfill --partitions a,b,c --dry-run   # what it would submit; needs no cluster
    argassets slurm status RUN_ID

Each job's time limit and tags come from the partition's estimate (:mod:`argassets.cli.estimate`).

``backfill`` materialises any missing study inputs in this process, then creates one Dagster run
per partition and study and launches it through the instance's ``SlurmRunLauncher``
(``deploy/slurm/dagster.yaml``): every run is one Slurm job with its entry's resources, all queued
at once. It then waits for the jobs (unless ``--no-wait``) and writes each job's end, in Slurm's
words, into its run's log; a run whose worker Slurm killed is failed there with that reason (the
daemon's run monitoring does the same for runs launched from the UI). Re-running a failed
partition resumes from the judgment cache. ``--dry-run`` materialises, adds and submits nothing:
it prints each job's estimate and ``sbatch`` options (needing neither a Slurm cluster nor the
Slurm launcher).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argassets.cli.common import (
    CliError,
    add_partition_options,
    chosen_studies,
    executor,
    get_instance,
    preflight_partitions,
    refused_summary,
    registry,
    say,
    select_partitions,
    study_choices,
    sync_partitions,
)
from argassets.cli.estimate import estimate_for
from argassets.platform.operations.machine import slurm_machine
from argassets.platform.operations.run_engine import IN_PROCESS, Executor
from argassets.platform.registry.entries import ModelRegistry

#: Engine-event text that marks a run whose Slurm job's end has been recorded.
ENDED_MARK = "Slurm job ended:"
POLL_SECONDS = 2.0


def slurm_launcher(instance: Any) -> Any:
    """The instance's ``SlurmRunLauncher``; a clear error when the instance launches runs otherwise."""
    from argassets.platform.operations.slurm.launcher import SlurmRunLauncher

    launcher = instance.run_launcher
    if not isinstance(launcher, SlurmRunLauncher):
        raise CliError(
            f"the instance at $DAGSTER_HOME launches runs with {type(launcher).__name__}, not SlurmRunLauncher: "
            "copy deploy/slurm/dagster.yaml to $DAGSTER_HOME/dagster.yaml (docs/operations.md, 'On a Slurm cluster')"
        )
    return launcher


def launch_partition(engine: Executor, registry: ModelRegistry, name: str, studies: Sequence[str] | None) -> list[str]:
    """Launch one Slurm-backed run per study of partition ``name``; their run ids."""
    from argassets.platform.operations.run_tags import run_tags_for_entry

    entry = registry.get(name)
    chosen = [s for s in entry.studies if s in engine.layout.roots and (studies is None or s in studies)]
    run_ids = []
    for study in chosen:
        keys = engine.layout.study_selection(study)
        job_def = engine.repo_def.get_implicit_job_def_for_assets(keys)
        if job_def is None:
            raise CliError(f"{study} / {name}: the selected assets cannot run in one job")
        tags = {
            **run_tags_for_entry(entry, study=study),
            "dagster/partition": name,
            **estimate_tags(engine, registry, name, study),
        }
        run = engine.instance.create_run_for_job(
            job_def=job_def,
            run_config=IN_PROCESS,
            tags=tags,
            asset_selection=frozenset(keys),
            job_code_origin=engine.recon_repo.get_reconstructable_job(job_def.name).get_python_origin(),
        )
        try:
            engine.instance.launch_run(run.run_id, workspace=None)
        except Exception as exc:
            raise CliError(f"{study} / {name}: run {run.run_id} was not submitted: {exc}") from None
        job_id = engine.instance.get_run_by_id(run.run_id).tags.get("argassets/slurm-job-id")
        say(f"submitted {study} / {name}: run {run.run_id}, Slurm job {job_id}")
        run_ids.append(run.run_id)
    return run_ids


def estimate_tags(engine: Executor, registry: ModelRegistry, name: str, study: str) -> dict[str, str]:
    """The run's estimate as tags, with the job's time limit from it; refuses a run over budget."""
    from argassets.platform.operations.estimate import BudgetExceeded, check_budget
    from argassets.platform.operations.slurm.launcher import TIME_TAG

    estimate = estimate_for(engine, registry, name, study)
    say(estimate.describe())
    try:
        check_budget(estimate)
    except BudgetExceeded as exc:
        raise CliError(str(exc)) from None
    tags = estimate.as_tags()
    if estimate.time_limit_minutes is not None:
        tags[TIME_TAG] = str(estimate.time_limit_minutes)
    return tags


def record_job_end(instance: Any, run_id: str) -> str | None:
    """Once the run's Slurm job has ended: its end in the run's log (once), and a run that is
    still marked as running failed with Slurm's reason. The end's description, else ``None``."""
    from dagster import DagsterEventType

    launcher = slurm_launcher(instance)
    run = instance.get_run_by_id(run_id)
    health = launcher.check_run_worker_health(run)
    if health.status.value == "RUNNING":
        return None
    message = f"{ENDED_MARK} {health.msg}"
    logged = [e.message for e in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT)]
    if message not in logged:
        instance.report_engine_event(message, run)
    if not run.is_finished:
        debug = launcher.get_run_worker_debug_info(run) or ""
        instance.report_run_failed(run, f"{health.msg}\n{debug}".strip())
    return str(health.msg)


def wait_for_runs(instance: Any, run_ids: Sequence[str], timeout: float | None = None) -> dict[str, str]:
    """Wait until every run's job has ended and its run has finished; each run's final status."""
    pending = list(run_ids)
    deadline = None if timeout is None else time.monotonic() + timeout
    while pending:
        for run_id in list(pending):
            ended = record_job_end(instance, run_id)
            run = instance.get_run_by_id(run_id)
            if ended is not None and run.is_finished:
                say(f"run {run_id}: {run.status.value} ({ended})")
                pending.remove(run_id)
        if pending:
            if deadline is not None and time.monotonic() > deadline:
                break
            time.sleep(POLL_SECONDS)
    return {run_id: instance.get_run_by_id(run_id).status.value for run_id in run_ids}


def cmd_slurm_backfill(args: argparse.Namespace) -> int:
    instance = get_instance()
    if not args.dry_run:
        slurm_launcher(instance)
    models = registry()
    if not args.dry_run:
        sync_partitions(instance, models)
    # Refused before anything is submitted: what the cluster's nodes cannot run.
    names, refused = preflight_partitions(models, select_partitions(models, instance, args), slurm_machine())
    if not names:
        return 2
    engine = executor(instance)
    studies = chosen_studies(args.study)
    if args.dry_run:
        return show_jobs(engine, models, names, studies)
    chosen = sorted({s for n in names for s in models.get(n).studies if studies is None or s in studies})
    inputs = engine.missing_inputs(chosen)
    if inputs and not engine.run(inputs, None, {}, "study inputs"):
        return 1
    run_ids = [run_id for name in names for run_id in launch_partition(engine, models, name, studies)]
    if refused:
        say(refused_summary(refused, "the Slurm cluster"))
    if args.no_wait:
        return 1 if refused else 0
    statuses = wait_for_runs(instance, run_ids)
    failed = [run_id for run_id, status in statuses.items() if status != "SUCCESS"]
    if failed:
        say(f"failed runs: {', '.join(failed)} (run the partitions again: cached judgments are not redone)")
    return 1 if failed or refused else 0


def show_jobs(engine: Executor, registry: ModelRegistry, names: Sequence[str], studies: Sequence[str] | None) -> int:
    """``--dry-run``: each job's estimate and ``sbatch`` options, and the inputs it would materialise first."""
    from argassets.platform.operations.slurm.jobs import sbatch_options
    from argassets.platform.operations.slurm.launcher import TIME_TAG

    log = _job_log_placeholder(engine.instance)
    for name in names:
        entry = registry.get(name)
        for study in [s for s in entry.studies if s in engine.layout.roots and (studies is None or s in studies)]:
            missing = engine.missing_inputs([study])
            if missing:
                inputs = ", ".join(key.to_user_string() for key in missing)
                say(f"{study} / {name}: would first materialise {inputs}; no estimate before them")
                tags: dict[str, str] = {}
            else:
                tags = estimate_tags(engine, registry, name, study)
            options = sbatch_options(
                entry.gpus_needed,
                registry.slurm_for(entry),
                job_name=f"argassets-{name}"[:64],
                output=log,
                time_limit=tags.get(TIME_TAG),
            )
            say(f"would submit {study} / {name}: sbatch {' '.join(options)}")
    return 0


def _job_log_placeholder(instance: Any) -> Path:
    """Where a job's log would go: the Slurm launcher's folder, else ``$DAGSTER_HOME/slurm``."""
    from argassets.platform.operations.slurm.launcher import SlurmRunLauncher

    launcher = instance.run_launcher
    folder = launcher.work_dir if isinstance(launcher, SlurmRunLauncher) else Path(os.environ["DAGSTER_HOME"]) / "slurm"
    return folder / "run-<run id>.log"


def cmd_slurm_status(args: argparse.Namespace) -> int:
    from argassets.platform.operations.slurm.launcher import JOB_ID_TAG

    instance = get_instance()
    run = instance.get_run_by_id(args.run_id)
    if run is None or JOB_ID_TAG not in run.tags:
        raise CliError(f"{args.run_id}: no run launched through Slurm with this id")
    health = slurm_launcher(instance).check_run_worker_health(run)
    say(f"run {run.run_id}: {run.status.value}; {health.msg}")
    return 0


def add_command(sub: Any) -> None:
    """Register ``argassets slurm backfill | status``."""
    slurm = sub.add_parser("slurm", help="judge model partitions as Slurm jobs (login node)")
    ssub = slurm.add_subparsers(dest="slurm_command", required=True)
    back = ssub.add_parser("backfill", help="one Slurm job per partition and study, all submitted at once")
    add_partition_options(back)
    back.add_argument(
        "--study",
        choices=study_choices(),
        default="all",
        help="judge only this study's partitions (default: every study the model takes part in)",
    )
    back.add_argument("--no-wait", action="store_true", help="submit and return (the daemon monitors the jobs)")
    back.add_argument(
        "--dry-run",
        action="store_true",
        help="print each job's estimate and sbatch options; materialise, add and submit nothing (no cluster needed)",
    )
    back.set_defaults(func=cmd_slurm_backfill)
    status = ssub.add_parser("status", help="a run's Slurm job: state and reason")
    status.add_argument("run_id", help="the Dagster run id (from the UI or slurm backfill)")
    status.set_defaults(func=cmd_slurm_status)
