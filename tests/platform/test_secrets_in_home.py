"""A cache password that breaks URL parsing is stored and shown nowhere (issue 35, part 3).

Study A's ``random`` partition is materialised by ``argassets`` in a subprocess twice, with the
judgment cache in PostgreSQL under a password holding '@', ':', '/', '#', '%', a space and
non-ASCII, written into ``ARGASSETS_CACHE`` unescaped: first against a port nothing listens on
(the run fails, saying it cannot connect, the URL redacted), then against a real server whose role
has that password (the run succeeds). Then the password, its percent-encoded form and every piece
a half-parsed URL would leave (the probe found the part after the first '@' in the run database)
are searched in the captured output and in every file of the test's folder: the Dagster home (run
and event-log databases, compute logs), the runs' store, the reader file, the Parquet tables.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.cli_home import BIN, ROOT, cli_environment
from tests.platform.test_secrets import PIECES, TRICKY, tricky_url

pytestmark = pytest.mark.postgres

REGISTRY = '[[models]]\nname = "random"\nbackend = "random"\nstudies = ["argument_quality"]\n'


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _materialize(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "argassets"), "materialize", "random"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def test_a_cache_password_that_breaks_url_parsing_leaks_nowhere(
    tmp_path: Path, study_a_inputs_home: Path, postgres_server
) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(postgres_server.url(), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE tricky LOGIN PASSWORD {}").format(sql.Literal(TRICKY)))
        admin.execute("CREATE DATABASE tricky_cache OWNER tricky")
    env = cli_environment(tmp_path, REGISTRY, inputs=study_a_inputs_home, ARGASSETS_CACHE=tricky_url(_closed_port()))
    failing = _materialize(env)
    env["ARGASSETS_CACHE"] = f"postgresql://tricky:{TRICKY}@127.0.0.1:{postgres_server.port}/tricky_cache"
    succeeding = _materialize(env)

    shown = failing.stdout + failing.stderr
    assert failing.returncode == 1, shown[-3000:]
    assert "judgment cache postgresql://argassets:***@127.0.0.1:" in shown and "cannot connect" in shown
    assert succeeding.returncode == 0, succeeding.stdout[-3000:] + succeeding.stderr[-3000:]
    captured = shown + succeeding.stdout + succeeding.stderr
    files = [path for path in sorted(tmp_path.rglob("*")) if path.is_file()]
    assert any(path.suffix == ".db" for path in files) and any(path.name == "data.parquet" for path in files)
    assert any(".store." in path.name for path in files), "the runs' store was searched"
    for form in (TRICKY, quote(TRICKY, safe=""), *PIECES):
        assert form not in captured, form
        leaked = [str(path) for path in files if form.encode() in path.read_bytes()]
        assert not leaked, f"{form!r} stored in {leaked}"
