"""Slurm's command-line tools, as plain functions: submit, query, cancel one job.

No Dagster here. The tools (``sbatch``, ``scontrol``, ``scancel``) are Slurm's own, found on
``$PATH``; ``$SLURM_CONF`` selects the cluster as for any Slurm command. Job state comes from
``scontrol show job`` (it works without Slurm's accounting database, which ``sacct`` needs).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from argassets.platform.registry.model_entry import SlurmSettings

#: States of a job that has not ended yet (``scontrol``'s ``JobState``).
ACTIVE_STATES = frozenset(
    {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "STAGE_OUT", "SIGNALING"}
)
#: What each way of ending means, in the words a run's log shows.
END_EXPLANATIONS: Mapping[str, str] = {
    "COMPLETED": "completed",
    "CANCELLED": "was cancelled",
    "TIMEOUT": "reached its time limit",
    "PREEMPTED": "was preempted",
    "NODE_FAIL": "lost its node (node failure)",
    "OUT_OF_MEMORY": "ran out of memory",
    "FAILED": "failed",
    "BOOT_FAIL": "could not boot its node",
    "DEADLINE": "reached its deadline",
}
_TIMEOUT = 60.0


class SlurmError(RuntimeError):
    """A Slurm command that failed; the message holds the command and Slurm's own words."""


@dataclass(frozen=True)
class JobState:
    """One job as ``scontrol show job`` reports it."""

    job_id: str
    state: str
    reason: str
    exit_code: str
    time_limit: str
    stdout: str

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    def describe(self) -> str:
        """One line for a run's log, e.g. ``Slurm job 12 reached its time limit (TIMEOUT, ...)``."""
        explanation = END_EXPLANATIONS.get(self.state, self.state.lower())
        if self.active:
            explanation = f"is {self.state.lower()}"
        details = [self.state]
        if self.reason and self.reason != "None":
            details.append(f"reason {self.reason}")
        if self.state == "TIMEOUT":
            details.append(f"time limit {self.time_limit}")
        if not self.active:
            details.append(f"exit code {self.exit_code}")
        return f"Slurm job {self.job_id} {explanation} ({', '.join(details)})"


def sbatch_options(
    gpus: int, settings: SlurmSettings, *, job_name: str, output: Path, time_limit: str | None = None
) -> list[str]:
    """``sbatch`` options of one run's job: its GPUs (the entry's ``gpus``) and Slurm settings.

    ``time_limit`` (from the estimate) applies when the settings name none.
    """
    options = [f"--job-name={job_name}", f"--output={output}", "--parsable"]
    if gpus:
        options.append(f"--gres=gpu:{gpus}")
    named = {
        "--partition": settings.partition,
        "--account": settings.account,
        "--qos": settings.qos,
        "--cpus-per-task": settings.cpus,
        "--mem": settings.mem,
        "--time": settings.time or time_limit,
    }
    options += [f"{flag}={value}" for flag, value in named.items() if value is not None]
    return options


def _run(command: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    try:
        result = subprocess.run(list(command), capture_output=True, text=True, timeout=_TIMEOUT, env=env)
    except FileNotFoundError:
        raise SlurmError(
            f"{command[0]}: not found; install Slurm's client tools (apt-get install slurm-client)"
        ) from None
    if result.returncode != 0:
        words = (result.stderr or result.stdout).strip()
        raise SlurmError(f"{shlex.join(command)} failed (exit {result.returncode}): {words}")
    return result.stdout


def submit(script: Path, options: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """Submit ``script`` with ``options`` (``--parsable`` among them); the job id."""
    output = _run(["sbatch", *options, str(script)], env).strip()
    job_id = output.split(";")[0]
    if not job_id.isdigit():
        raise SlurmError(f"sbatch {script}: unexpected answer {output!r} (expected a job id)")
    return job_id


def parse_show_job(text: str) -> JobState:
    """The fields of one ``scontrol show job -o`` line that the platform uses."""
    fields = dict(re.findall(r"(\w+)=(\S*)", text))
    if "JobId" not in fields or "JobState" not in fields:
        raise SlurmError(f"scontrol show job: unexpected answer {text[:200]!r}")
    return JobState(
        job_id=fields["JobId"],
        state=fields["JobState"],
        reason=fields.get("Reason", ""),
        exit_code=fields.get("ExitCode", ""),
        time_limit=fields.get("TimeLimit", ""),
        stdout=fields.get("StdOut", ""),
    )


def job_state(job_id: str) -> JobState | None:
    """The job's state, or ``None`` when Slurm no longer knows it (purged after ``MinJobAge``)."""
    try:
        output = _run(["scontrol", "show", "job", "-o", job_id])
    except SlurmError as exc:
        if "Invalid job id" in str(exc):
            return None
        raise
    return parse_show_job(output.strip().splitlines()[0])


def cancel(job_id: str) -> None:
    """``scancel`` the job (a job that has already ended is not an error)."""
    _run(["scancel", job_id])


def log_tail(path: str | Path, chars: int = 3000) -> str:
    """The end of a job's output file ('' when it does not exist yet)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, PermissionError):
        return ""
    return text[-chars:]
