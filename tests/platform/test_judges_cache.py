"""The judging library: cache keys, incremental judging, resume after an interruption, concurrency."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from argassets.platform.judging.choice_parsing import parse_choice
from argassets.platform.judging.incremental import judge_incrementally
from argassets.platform.judging.interface import (
    ChatRequest,
    Completion,
    Judge,
    PartialBatchError,
    SamplingParams,
    run_seed,
    utc_now,
)
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache


class CountingJudge:
    """Answers 'A' for run 0, 'B' for run 1, 'Tie' otherwise; counts what it was sent; can fail."""

    backend = "counting"

    def __init__(self, fail_on_call: int | None = None, partial: bool = False):
        self.calls: list[tuple[list[str], list[int]]] = []
        self.fail_on_call = fail_on_call
        self.partial = partial

    @property
    def completions_sent(self) -> int:
        return sum(len(keys) * len(runs) for keys, runs in self.calls)

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        self.calls.append(([r.key for r in requests], list(runs)))
        now = utc_now()
        answers = [
            [
                Completion(
                    ("A", "B", "Tie")[min(run, 2)], run, run_seed(sampling.seed, r.prompt_sha256, run), 0.01, now, now
                )
                for run in runs
            ]
            for r in requests
        ]
        if self.fail_on_call is not None and len(self.calls) == self.fail_on_call:
            if self.partial:
                raise PartialBatchError("endpoint died", {0: answers[0]})
            raise RuntimeError("killed mid-batch")
        return answers

    def close(self) -> None:
        """Nothing to free."""


def _requests(n: int, prefix: str = "item") -> list[ChatRequest]:
    return [ChatRequest(f"{prefix}-{i}", "system", f"user {i}", choices=LABELS) for i in range(n)]


def test_protocol_and_keys():
    assert isinstance(CountingJudge(), Judge)
    sampling = SamplingParams(1.0, seed=3)
    assert sampling.key() == SamplingParams(1.0, 1.0, 3, 8).key()
    assert sampling.key() != SamplingParams(0.7, seed=3).key()
    assert sampling.key() != SamplingParams(1.0, seed=4).key()
    assert len(sampling.key()) == 16
    a = ChatRequest("x", "s", "u")
    assert a.prompt_sha256 == ChatRequest("other key", "s", "u", choices=("A",), context={"t": 1}).prompt_sha256
    assert a.prompt_sha256 != ChatRequest("x", "s", "u ").prompt_sha256
    assert run_seed(3, a.prompt_sha256, 2) == run_seed(3, a.prompt_sha256, 0) + 2 and run_seed(None, "x", 2) is None
    assert run_seed(3, a.prompt_sha256, 0) != run_seed(3, ChatRequest("y", "s", "v").prompt_sha256, 0)


def test_sends_only_what_is_missing(tmp_path: Path):
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    judge = CountingJudge()
    requests = _requests(10)
    sampling = SamplingParams(1.0, seed=0)
    first = judge_incrementally(judge, "m", requests, sampling, 3, cache, batch_size=4)
    assert judge.completions_sent == 30
    assert [c.key for c in first[:4]] == ["item-0", "item-0", "item-0", "item-1"]
    assert [c.text for c in first[:3]] == ["A", "B", "Tie"]
    assert not any(c.from_cache for c in first)
    # the same call again sends nothing
    again = judge_incrementally(judge, "m", requests, sampling, 3, cache, batch_size=4)
    assert judge.completions_sent == 30
    assert all(c.from_cache for c in again)
    assert [(c.key, c.run, c.text) for c in again] == [(c.key, c.run, c.text) for c in first]
    # two more items: only their six completions go out
    judge_incrementally(judge, "m", _requests(12), sampling, 3, cache, batch_size=4)
    assert judge.completions_sent == 36
    # another model or other sampling parameters are other cache entries
    judge_incrementally(judge, "m2", requests[:1], sampling, 3, cache, batch_size=4)
    judge_incrementally(judge, "m", requests[:1], SamplingParams(0.5, seed=0), 3, cache, batch_size=4)
    assert judge.completions_sent == 42
    assert cache.count() == 42 and cache.count("m") == 39


def test_identical_prompts_are_sent_once(tmp_path: Path):
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    judge = CountingJudge()
    requests = [ChatRequest("k1", "s", "same"), ChatRequest("k2", "s", "same"), ChatRequest("k3", "s", "other")]
    results = judge_incrementally(judge, "m", requests, SamplingParams(1.0), 2, cache)
    assert judge.completions_sent == 4
    assert [c.key for c in results] == ["k1", "k1", "k2", "k2", "k3", "k3"]
    assert results[0].text == results[2].text


def test_resume_after_an_interruption(tmp_path: Path):
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    requests = _requests(10)
    sampling = SamplingParams(1.0, seed=0)
    dying = CountingJudge(fail_on_call=3)
    with pytest.raises(RuntimeError, match="killed mid-batch"):
        judge_incrementally(dying, "m", requests, sampling, 3, cache, batch_size=4)
    # two whole batches (8 requests x 3 runs) were stored before the failing one
    assert cache.count("m") == 24
    resumed = CountingJudge()
    results = judge_incrementally(resumed, "m", requests, sampling, 3, cache, batch_size=4)
    assert resumed.calls == [(["item-8", "item-9"], [0, 1, 2])]  # only what was missing
    assert len(results) == 30
    assert sum(not c.from_cache for c in results) == 6
    assert len({(c.key, c.run) for c in results}) == 30  # nothing duplicated
    with sqlite3.connect(tmp_path / "cache.sqlite") as con:
        rows = con.execute("select count(*), count(distinct prompt_sha256 || ':' || run) from completions").fetchone()
    assert rows == (30, 30)


def test_partial_batch_keeps_what_was_paid_for(tmp_path: Path):
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    requests = _requests(4)
    with pytest.raises(PartialBatchError):
        judge_incrementally(
            CountingJudge(fail_on_call=1, partial=True), "m", requests, SamplingParams(1.0), 3, cache, batch_size=4
        )
    assert cache.count("m") == 3  # request 0's three runs
    resumed = CountingJudge()
    judge_incrementally(resumed, "m", requests, SamplingParams(1.0), 3, cache, batch_size=4)
    assert resumed.calls == [(["item-1", "item-2", "item-3"], [0, 1, 2])]


def test_progress_is_logged_per_batch(tmp_path: Path):
    lines: list[str] = []
    judge_incrementally(
        CountingJudge(),
        "m",
        _requests(5),
        SamplingParams(1.0),
        3,
        JudgmentCache(tmp_path / "c.sqlite"),
        batch_size=2,
        log=lines.append,
    )
    assert lines[0].startswith("m: 15 completions needed")
    progress = lines[1:]
    assert len(progress) == 3
    assert progress[0].startswith("m: 6/15 completions (40.0%)") and "/s" in progress[0]
    assert progress[-1].startswith("m: 15/15 completions (100.0%)")


def _locked_by_another_connection(path: Path, hold_s: float) -> threading.Thread:
    """Another connection takes the cache's write lock and holds it ``hold_s`` seconds."""
    held = threading.Event()

    def hold() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(hold_s)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait(5)
    return thread


def test_a_write_waiting_for_the_cache_lock_says_so(tmp_path: Path):
    cache = JudgmentCache(tmp_path / "c.sqlite")
    cache.wait_report_s = 0.2
    cache.count()  # the file and its tables exist before the other connection locks it
    holder = _locked_by_another_connection(tmp_path / "c.sqlite", hold_s=1.0)
    lines: list[str] = []
    results = judge_incrementally(CountingJudge(), "m", _requests(2), SamplingParams(1.0), 1, cache, log=lines.append)
    holder.join()
    waits = [line for line in lines if line.startswith("waiting for the judgment cache")]
    assert waits and str(tmp_path / "c.sqlite") in waits[0] and "another process holds its write lock" in waits[0]
    assert len(results) == 2 and cache.count() == 2
    assert cache.on_wait is None  # the call's reporter is gone with the call


def test_a_lock_held_past_the_timeout_fails_naming_the_cache(tmp_path: Path):
    cache = JudgmentCache(tmp_path / "c.sqlite", timeout_s=0.5)
    cache.wait_report_s = 0.1
    cache.count()
    holder = _locked_by_another_connection(tmp_path / "c.sqlite", hold_s=2.0)
    with pytest.raises(sqlite3.OperationalError, match="stayed locked by another process"):
        judge_incrementally(CountingJudge(), "m", _requests(2), SamplingParams(1.0), 1, cache)
    holder.join()
    assert cache.count() == 0


def _worker(path: str, offset: int, out: multiprocessing.Queue) -> None:
    judge = CountingJudge()
    requests = _requests(200)
    ordered = requests[offset:] + requests[:offset]
    results = judge_incrementally(judge, "m", ordered, SamplingParams(1.0), 3, JudgmentCache(path), batch_size=10)
    out.put((judge.completions_sent, len(results)))


def test_concurrent_processes_share_one_cache(tmp_path: Path):
    path = str(tmp_path / "shared.sqlite")
    queue: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_worker, args=(path, offset, queue)) for offset in (0, 100, 50)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    outcomes = [queue.get(timeout=5) for _ in workers]
    assert all(n == 600 for _, n in outcomes)
    with sqlite3.connect(path) as con:
        assert con.execute("select count(*) from completions").fetchone() == (600,)
        assert con.execute("pragma journal_mode").fetchone() == ("wal",)


def test_parse_choice_is_strict():
    assert parse_choice("A") == "A"
    assert parse_choice(" tie.\n") == "Tie"
    assert parse_choice("**B**") == "B"
    assert parse_choice("Argument A") == "A"
    assert parse_choice('{"label": "Tie"}') == "Tie"
    for bad in ("", None, "A or B", "I think A", "C", '{"label": "C"}', '{"a": "A", "b": "B"}', "{broken"):
        assert parse_choice(bad) is None
    assert parse_choice("yes", ("yes", "no")) == "yes"
