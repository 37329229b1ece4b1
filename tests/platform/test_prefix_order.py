"""Requests go out in prefix order (shared prefixes adjacent), results come back in the table's order,
and two writers on one partition still send nothing twice."""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from pathlib import Path

from argassets.platform.judging.incremental import JudgingPolicy, judge_incrementally
from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, run_seed, utc_now
from argassets.platform.judging.prefix_order import distinct_in_prefix_order, prefix_key, prefix_order
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache


class RecordingJudge:
    """Answers with the prompt's user text and the run; records every batch it is sent."""

    backend = "recording"

    def __init__(self) -> None:
        self.batches: list[list[ChatRequest]] = []
        self.lock = threading.Lock()

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        with self.lock:
            self.batches.append(list(requests))
        now = utc_now()
        return [
            [
                Completion(f"{r.user}#{run}", run, run_seed(sampling.seed, r.prompt_sha256, run), 0.0, now, now)
                for run in runs
            ]
            for r in requests
        ]

    def close(self) -> None:
        """Nothing to free."""

    @property
    def sent(self) -> list[ChatRequest]:
        return [request for batch in self.batches for request in batch]


def _study_like_requests(seed: int = 0) -> list[ChatRequest]:
    """Three system texts (a dimension and strategy each) x pairs sharing their first argument,
    in a shuffled table order, one prompt twice under two keys."""
    systems = ["judge logic", "judge logic. Examples: ...", "judge rhetoric"]
    users = [f"Argument A: {a}\nArgument B: {b}" for a in ("tax", "war", "school") for b in ("x", "y", "z")]
    requests = [ChatRequest(f"{s}|{u}", s, u, choices=LABELS) for s in systems for u in users]
    requests.append(ChatRequest("duplicate", systems[0], users[0], choices=LABELS))
    random.Random(seed).shuffle(requests)
    return requests


def test_prefix_order_sorts_by_system_then_user_and_keeps_the_first_of_identical_prompts() -> None:
    requests = _study_like_requests()
    order = prefix_order(requests)
    keys = [prefix_key(requests[i]) for i in order]
    assert keys == sorted(keys) and sorted(order) == list(range(len(requests)))
    distinct = distinct_in_prefix_order(requests)
    assert len(distinct) == len(requests) - 1
    assert [prefix_key(r) for r in distinct.values()] == sorted(set(keys))
    first = next(r for r in requests if (r.system, r.user) == ("judge logic", "Argument A: tax\nArgument B: x"))
    assert distinct[first.prompt_sha256] is first


def test_requests_are_sent_in_prefix_order_across_batches_and_reported_in_table_order(tmp_path: Path) -> None:
    requests = _study_like_requests()
    judge = RecordingJudge()
    results = judge_incrementally(
        judge, "m", requests, SamplingParams(1.0, seed=1), 3, JudgmentCache(tmp_path / "c.sqlite"), batch_size=4
    )
    sent = [prefix_key(r) for r in judge.sent]
    assert sent == sorted(set(sent))  # within and across batches, each prompt once
    assert [len(b) for b in judge.batches] == [4] * 6 + [3]
    # Results: the table's order, every request (the duplicate too) with its own key.
    assert [(c.key, c.run) for c in results] == [(r.key, run) for r in requests for run in range(3)]
    assert all(
        c.text == f"{r.user}#{c.run}" for r, c in zip((r for r in requests for _ in range(3)), results, strict=True)
    )


def test_only_the_missing_prompts_go_out_still_in_prefix_order(tmp_path: Path) -> None:
    requests = _study_like_requests()
    cache = JudgmentCache(tmp_path / "c.sqlite")
    sampling = SamplingParams(1.0, seed=1)
    judge_incrementally(RecordingJudge(), "m", requests[::2], sampling, 3, cache, batch_size=5)
    judge = RecordingJudge()
    judge_incrementally(judge, "m", requests, sampling, 3, cache, batch_size=5)
    sent = [prefix_key(r) for r in judge.sent]
    done = {prefix_key(r) for r in requests[::2]}
    assert sent == sorted({prefix_key(r) for r in requests} - done)


def test_two_writers_in_prefix_order_send_nothing_twice(tmp_path: Path) -> None:
    """Both writers sort the same way, so they meet on the same first batch: the claims split it."""
    path = tmp_path / "shared.sqlite"
    sampling = SamplingParams(1.0, seed=1)
    judges = [RecordingJudge(), RecordingJudge()]
    results: list[list] = [[], []]
    barrier = threading.Barrier(2)

    def write(index: int) -> None:
        barrier.wait()
        results[index] = judge_incrementally(
            judges[index], "m", _study_like_requests(seed=index), sampling, 3, JudgmentCache(path), batch_size=2,
            policy=JudgingPolicy(lease_s=30.0, poll_s=0.01),
        )  # fmt: skip

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    sent = [r.prompt_sha256 for judge in judges for r in judge.sent]
    assert len(sent) == len(set(sent)) == 27  # every distinct prompt once, by one writer or the other
    for judge in judges:  # each writer's own share still in prefix order
        keys = [prefix_key(r) for r in judge.sent]
        assert keys == sorted(keys)
    by_key = [{(c.key, c.run): c.text for c in result} for result in results]
    assert by_key[0] == by_key[1] and len(by_key[0]) == 28 * 3
    assert JudgmentCache(path).count("m") == 27 * 3


def test_a_judge_that_computes_no_prompt_keeps_the_table_order(tmp_path: Path) -> None:
    requests = _study_like_requests()
    judge = RecordingJudge()
    judge.prefix_order = False  # type: ignore[attr-defined]
    judge_incrementally(judge, "m", requests, SamplingParams(1.0), 1, JudgmentCache(tmp_path / "c.sqlite"))
    assert judge.sent == [r for r in requests if r.key != "duplicate"]
    from argassets.platform.judging.engines.baselines import LongerWinsJudge, RandomJudge

    assert RandomJudge.prefix_order is False and LongerWinsJudge.prefix_order is False
