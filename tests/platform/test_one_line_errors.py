"""Bad options and unreachable services answer in one line, never a traceback (issue 35, part 6).

``argassets estimate`` with an unreachable cache, ``argassets pools --gpu 0`` (a limit that blocks
every GPU run for ever: refused), a negative ``--max-examples`` or ``--k`` of ``debate``/``persona``
/``retrieve``. (``argassets sql --max-rows -5``: test_read_path_guards.py.)
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

import argassets.cli.estimate as cli_estimate
from argassets import cli
from argassets.platform.judging.interface import ChatRequest, SamplingParams
from argassets.political.retrieval.generation import select_examples
from tests.platform.test_secrets import PIECES, tricky_url


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    error = capsys.readouterr().err
    lines = [line for line in error.splitlines() if not line.startswith("argassets: wrote ")]
    assert "Traceback" not in error and len(lines) == 1, error
    return lines[0]


def test_estimate_with_an_unreachable_cache_is_one_line_without_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(tmp_path / "argassets.duckdb"))
    monkeypatch.setenv("ARGASSETS_CACHE", tricky_url(_closed_port()))
    # The workload needs no materialised input here: the cache is what is under test.
    request = ChatRequest("k", "system", "user")
    monkeypatch.setattr(
        cli_estimate,
        "workloads",
        lambda: {"argument_quality": ("aq_judgments", lambda entry, load: ([request], 3, SamplingParams(0.0)))},
    )
    assert cli.main(["estimate", "random", "--study", "argument_quality"]) == 2
    line = _one_line_error(capsys)
    assert line.startswith("argassets: error: random / argument_quality: judgment cache postgresql://argassets:***@")
    assert "cannot connect" in line
    for piece in PIECES:
        assert piece not in line


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_a_gpu_pool_limit_that_blocks_every_run_is_refused(
    limit: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert cli.main(["pools", "--gpu", limit]) == 2
    line = _one_line_error(capsys)
    assert line.startswith(f"argassets: error: --gpu {limit}: pool 'gpu' limit {limit} blocks every step")
    assert "argassets pools --gpu 1" in line
    assert cli.main(["pools", "--gpu", "2"]) == 0
    assert "pool 'gpu': limit 2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "refusal"),
    [
        (["debate", "x", "--model", "m", "--max-examples", "-3"], "--max-examples: must be 0 or more, got -3"),
        (["persona", "--model", "m", "--max-examples", "-1"], "--max-examples: must be 0 or more, got -1"),
        (["retrieve", "x", "--k", "0"], "--k: must be 1 or more, got 0"),
    ],
)
def test_negative_counts_of_the_retrieval_commands_are_refused(
    argv: list[str], refusal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    assert refusal in capsys.readouterr().err


def test_select_examples_refuses_a_negative_limit() -> None:
    with pytest.raises(ValueError, match="max_examples must be 0 or more, got -2"):
        select_examples([], -2)
