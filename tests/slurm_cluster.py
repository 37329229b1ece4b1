"""A throw-away one-node Slurm cluster on 127.0.0.1, from Debian's ``slurm-wlm`` and ``munge``.

Used by the ``slurm`` tests (fixture ``slurm_cluster``) and by ``benchmarks/bench_slurm.py``. Its
own ``munged`` (own key and socket), ``slurmctld`` and ``slurmd`` run as root on free ports from a
temporary folder; the node offers four GPUs as GRES backed by dummy character devices (Slurm then
sets ``CUDA_VISIBLE_DEVICES`` as on a real GPU node). ``$SLURM_CONF`` points every Slurm command
at it while it runs. Stopping it kills the three daemons by their pids and deletes the folder.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

GPUS = 4
CPUS = 8
MEMORY_MIB = 8000
_DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def slurm_conf(root: Path, host: str, ctld_port: int, slurmd_port: int) -> str:
    """The cluster's ``slurm.conf``: one node, ``CPUS`` CPUs and ``GPUS`` GPUs whatever the machine has."""
    return f"""ClusterName=argassets-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={root}/run/munge.socket
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
DefMemPerCPU=500
KillWait=10
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
GresTypes=gpu
NodeName={host} NodeAddr=127.0.0.1 CPUs={CPUS} RealMemory={MEMORY_MIB} Gres=gpu:{GPUS} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


class TemporarySlurmCluster:
    """One ``munged`` + ``slurmctld`` + ``slurmd`` in a temporary folder; :meth:`start`, :meth:`stop`."""

    def __init__(self) -> None:
        for name, path in _DAEMONS.items():
            if not Path(path).exists():
                raise RuntimeError(
                    f"{path} not found: install Slurm and munge (apt-get install slurm-wlm munge) for {name}"
                )
        if os.geteuid() != 0:
            raise RuntimeError("the test Slurm cluster runs its daemons as root (SlurmUser=root)")
        self.root = Path(tempfile.mkdtemp(prefix="argassets-slurm-"))
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.root / "slurm.conf"
        self._previous_conf = os.environ.get("SLURM_CONF")
        self._pids: dict[str, Path] = {}

    def _write_files(self) -> None:
        os.chmod(self.root, 0o755)
        for folder in ("state", "spool", "log", "munge", "run", "devices"):
            (self.root / folder).mkdir()
        key = self.root / "munge" / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        for path, mode in ((self.root / "munge", 0o700), (self.root / "run", 0o755), (key, 0o400)):
            shutil.chown(path, "munge", "munge")
            os.chmod(path, mode)
        for index in range(GPUS):  # dummy character devices (same numbers as /dev/null) for GRES
            subprocess.run(["mknod", str(self.root / "devices" / f"gpu{index}"), "c", "1", "3"], check=True)
        self.conf.write_text(slurm_conf(self.root, self.host, _free_port(), _free_port()), encoding="utf-8")
        gres = f"NodeName={self.host} Name=gpu File={self.root}/devices/gpu[0-{GPUS - 1}]\n"
        (self.root / "gres.conf").write_text(gres, encoding="utf-8")

    def _start_munge(self) -> None:
        munge = self.root / "munge"
        subprocess.run(
            ["runuser", "-u", "munge", "--", _DAEMONS["munged"], f"--socket={self.root}/run/munge.socket",
             f"--key-file={munge}/munge.key", f"--pid-file={self.root}/run/munged.pid",
             f"--log-file={munge}/munged.log", f"--seed-file={munge}/munged.seed"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        self._pids["munged"] = self.root / "run" / "munged.pid"

    def start(self) -> TemporarySlurmCluster:
        self._write_files()
        self._start_munge()
        os.environ["SLURM_CONF"] = str(self.conf)
        for daemon in ("slurmctld", "slurmd"):
            subprocess.run([_DAEMONS[daemon], "-f", str(self.conf)], check=True, capture_output=True, timeout=60)
            self._pids[daemon] = self.root / f"{daemon}.pid"
        self._wait_until_idle()
        return self

    def _wait_until_idle(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            result = subprocess.run(["sinfo", "-h", "-o", "%T %G"], capture_output=True, text=True, timeout=30)
            state = result.stdout.strip()
            if state.startswith("idle") and f"gpu:{GPUS}" in state:
                return
            time.sleep(0.5)
        raise RuntimeError(f"the test Slurm node is not idle after {timeout:.0f} s (sinfo: {state!r}):\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-2000:]}"
            for path in sorted((self.root / "log").glob("*.log"))
        )

    def stop(self) -> None:
        try:
            # The cluster's own jobs first, so that no run worker outlives its slurmd.
            subprocess.run(["scancel", "--partition=debug"], capture_output=True, timeout=60)
            for daemon in ("slurmd", "slurmctld", "munged"):
                pid_file = self._pids.get(daemon)
                if pid_file and pid_file.exists():
                    try:
                        os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            time.sleep(1.0)
        finally:
            if self._previous_conf is None:
                os.environ.pop("SLURM_CONF", None)
            else:
                os.environ["SLURM_CONF"] = self._previous_conf
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> TemporarySlurmCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[TemporarySlurmCluster]:
    """A one-node Slurm cluster for the whole test session, stopped at its end."""
    cluster = TemporarySlurmCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()
