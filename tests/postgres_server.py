"""A throw-away PostgreSQL server from the Debian packages, on a free loopback port.

Used by the tests (fixtures ``postgres_server``, ``postgres_url`` and ``cache_location``) and by
``benchmarks/bench_judgment_cache.py``. ``initdb`` and ``pg_ctl`` come from ``apt-get install
postgresql`` (``/usr/lib/postgresql/<version>/bin``, or ``$ARGASSETS_PG_BINDIR``). PostgreSQL refuses
to run as root: as root, the cluster belongs to the ``postgres`` user the package creates and
commands run through ``runuser``. The cluster listens on 127.0.0.1 only, with password
authentication, and is deleted when stopped.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

BINDIR_ENV_VAR = "ARGASSETS_PG_BINDIR"


def postgres_bindir() -> Path:
    """The folder of ``initdb``/``pg_ctl``: ``$ARGASSETS_PG_BINDIR``, else the newest Debian one."""
    explicit = os.environ.get(BINDIR_ENV_VAR)
    if explicit:
        return Path(explicit)
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: [int(x) for x in re.findall(r"\d+", p.parent.parent.name)] or [0],
    )
    if candidates:
        return candidates[-1].parent
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    raise RuntimeError(
        "PostgreSQL server binaries not found: install them (apt-get install postgresql) or set "
        f"{BINDIR_ENV_VAR} to the folder holding initdb and pg_ctl"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class TemporaryPostgres:
    """One PostgreSQL cluster in a temporary folder; :meth:`start`, :meth:`new_database`, :meth:`stop`."""

    def __init__(self, user: str = "argassets") -> None:
        self.bindir = postgres_bindir()
        self.user = user
        self.password = secrets.token_urlsafe(18)
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="argassets-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as_root = os.geteuid() == 0
        self.started = False

    def _cmd(self, *args: str) -> list[str]:
        command = [str(self.bindir / args[0]), *args[1:]]
        return ["runuser", "-u", "postgres", "--", *command] if self._as_root else command

    def _run(self, *args: str, timeout: float = 120.0) -> None:
        result = subprocess.run(self._cmd(*args), capture_output=True, text=True, timeout=timeout, cwd=self.root)
        if result.returncode != 0:
            log = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({result.returncode}): {result.stderr or result.stdout}\n{log}")

    def start(self) -> TemporaryPostgres:
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n")
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        os.chmod(self.root, 0o700)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            self.user,
            f"--pwfile={pwfile}",
            "--auth-local=scram-sha-256",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
        )
        pwfile.unlink()
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.root} -c max_connections=200"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        self.started = True
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        import psycopg

        name = f"test_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            if self.started:
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
                self.started = False
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[TemporaryPostgres]:
    """A PostgreSQL server for the whole test session, stopped at its end."""
    server = TemporaryPostgres().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def postgres_url(postgres_server: TemporaryPostgres) -> str:
    """The URL of a fresh database on the session's server (one per test)."""
    return postgres_server.new_database()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def cache_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh judgment cache on each backend: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "cache.sqlite")
    return request.getfixturevalue("postgres_url")
