"""The judgment cache on both backends (SQLite file, real PostgreSQL): claims, leases, concurrency.

PostgreSQL is a real server from the Debian packages, started on a free loopback port for the test
session and stopped at its end (tests/postgres_server.py). The concurrency tests run 8 writer
processes (spawned, each with its own connection) and check every (prompt, sampling, run) is stored
exactly once, nothing is sent twice, each writer's result equals the cache, and a SIGKILLed writer
loses only the batch it had in flight.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from argassets.platform.judging.incremental import JudgingPolicy, judge_incrementally
from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, utc_now
from argassets.platform.storage.judgment_cache import open_judgment_cache
from argassets.platform.storage.judgment_cache.interface import new_owner_id
from argassets.platform.storage.judgment_cache.location import redact_location
from argassets.platform.storage.judgment_cache.postgres import PostgresJudgmentStore
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache, SQLiteJudgmentStore

pytestmark = pytest.mark.concurrency

SAMPLING = SamplingParams(1.0, seed=0)


def _requests(n: int, prefix: str = "item") -> list[ChatRequest]:
    return [ChatRequest(f"{prefix}-{i}", "system", f"user {i}") for i in range(n)]


def _completion(text: str, run: int) -> Completion:
    now = utc_now()
    return Completion(text, run, None, 0.01, now, now)


class LoggingJudge:
    """Answers ``<tag>:<run>``; appends every (prompt hash, run) it is sent to a file before answering.

    ``block_on_call``: that call logs its keys and then blocks (a writer stuck mid-batch, to be killed).
    """

    backend = "logging"

    def __init__(self, log_path: str, tag: str, delay_s: float = 0.0, block_on_call: int | None = None):
        self.log_path = log_path
        self.tag = tag
        self.delay_s = delay_s
        self.block_on_call = block_on_call
        self.calls = 0

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        self.calls += 1
        with open(self.log_path, "a", encoding="utf-8") as log:
            for request in requests:
                for run in runs:
                    log.write(f"{self.calls}\t{request.prompt_sha256}\t{run}\n")
            log.flush()
            os.fsync(log.fileno())
        if self.block_on_call == self.calls:
            time.sleep(600)
        time.sleep(self.delay_s)
        return [[_completion(f"{self.tag}:{run}", run) for run in runs] for _ in requests]


def _writer(
    cache_location: str,
    folder: str,
    tag: str,
    offset: int,
    n: int,
    models: list[str],
    delay_s: float,
    lease_s: float,
    block_on_call: int | None = None,
    go_file: str | None = None,
) -> None:
    """One writer process: judges ``n`` requests (rotated by ``offset``) for each model."""
    requests = _requests(n)
    requests = requests[offset:] + requests[:offset]
    cache = open_judgment_cache(cache_location)
    cache.count()  # connected, schema in place
    if go_file is not None:
        Path(folder, f"ready-{tag}").touch()
        while not os.path.exists(go_file):
            time.sleep(0.02)
    out = {}
    for model in models:
        judge = LoggingJudge(os.path.join(folder, f"sent-{tag}-{model}.log"), tag, delay_s, block_on_call)
        results = judge_incrementally(
            judge, model, requests, SAMPLING, 3, cache, batch_size=4, policy=JudgingPolicy(lease_s=lease_s)
        )
        out[model] = [[c.prompt_sha256, c.run, c.text, c.from_cache] for c in results]
    cache.close()
    with open(os.path.join(folder, f"result-{tag}.json"), "w", encoding="utf-8") as handle:
        json.dump(out, handle)


def _start_together(folder: Path, tags: list[str], go: Path, timeout_s: float = 180.0) -> None:
    """Wait until every writer has started and connected, then let them all go at once."""
    deadline = time.time() + timeout_s
    while not all((folder / f"ready-{tag}").exists() for tag in tags):
        assert time.time() < deadline, "writers did not start"
        time.sleep(0.05)
    go.touch()


def _sent(folder: Path, model: str) -> list[tuple[str, str, int]]:
    """Every (writer, prompt hash, run) sent for ``model``, over all writers' logs."""
    sent = []
    for path in folder.glob(f"sent-*-{model}.log"):
        writer = path.name.split("-")[1]
        for line in path.read_text().splitlines():
            _, sha, run = line.split("\t")
            sent.append((writer, sha, int(run)))
    return sent


def _cache_texts(cache_location: str, model: str) -> dict[tuple[str, int], str]:
    with open_judgment_cache(cache_location) as cache:
        return {key: row["text"] for key, row in cache.lookup(model, SAMPLING.key()).items()}


# --- the store interface, on both backends --------------------------------------------------------


def test_claims_leases_and_first_store_wins(cache_location: str) -> None:
    cache = open_judgment_cache(cache_location)
    sk = SAMPLING.key()
    alice, bob = new_owner_id(), new_owner_id()
    first = cache.claim("m", sk, [("p1", 0), ("p1", 1), ("p2", 0)], alice, lease_s=30)
    assert first.claimed == {("p1", 0), ("p1", 1), ("p2", 0)} and not first.stored
    # Held by a live owner: nobody else gets them; the owner may claim them again.
    assert cache.claim("m", sk, [("p1", 0), ("p3", 0)], bob, lease_s=30).claimed == {("p3", 0)}
    assert cache.claim("m", sk, [("p1", 0)], alice, lease_s=30).claimed == {("p1", 0)}
    assert cache.claims("m") == 4
    # Alice stores p1 run 0: her claim on it goes; Bob then finds it stored instead of claiming it.
    assert cache.store("m", sk, "test", [("p1", _completion("alice", 0))], alice) == {("p1", 0)}
    outcome = cache.claim("m", sk, [("p1", 0), ("p1", 1)], bob, lease_s=30)
    assert set(outcome.stored) == {("p1", 0)} and outcome.stored[("p1", 0)]["text"] == "alice"
    assert outcome.claimed == set()
    # A second store of the same key changes nothing and says so.
    assert cache.store("m", sk, "test", [("p1", _completion("bob", 0))], bob) == set()
    assert cache.fetch("m", sk, [("p1", 0), ("p9", 0)])[("p1", 0)]["text"] == "alice"
    assert set(cache.fetch("m", sk, [("p1", 0), ("p9", 0)])) == {("p1", 0)}
    # Leases: renewed claims hold; expired ones are taken over.
    assert cache.renew(alice, 0.2) == 2
    time.sleep(0.5)
    assert cache.claim("m", sk, [("p1", 1), ("p2", 0)], bob, lease_s=30).claimed == {("p1", 1), ("p2", 0)}
    assert cache.renew(alice, 30) == 0
    assert cache.release(bob) == 3 and cache.claims() == 0
    # Scopes are separate: another model or sampling key is another key.
    assert cache.claim("m2", sk, [("p1", 0)], alice, 30).claimed == {("p1", 0)}
    assert cache.claim("m", "other", [("p1", 0)], alice, 30).claimed == {("p1", 0)}
    assert cache.count() == 1 and cache.count("m") == 1 and cache.count("m2") == 0
    cache.close()


def test_results_follow_the_cache_when_another_writer_stored_first(cache_location: str) -> None:
    """A writer whose lease ran out answers keys someone else stored meanwhile: theirs are returned."""
    cache = open_judgment_cache(cache_location)
    sk = SAMPLING.key()
    requests = _requests(3)

    class RacedJudge:
        backend = "raced"

        def complete(self, batch, sampling, runs):  # noqa: ANN001, ANN201
            # While this batch is "in flight", another writer stores request 1, run 0.
            other = open_judgment_cache(cache_location)
            other.store("m", sk, "other", [(requests[1].prompt_sha256, _completion("theirs", 0))])
            other.close()
            return [[_completion("mine", run) for run in runs] for _ in batch]

    results = judge_incrementally(RacedJudge(), "m", requests, SAMPLING, 2, cache, batch_size=8)
    by_key = {(c.key, c.run): c for c in results}
    assert by_key[("item-1", 0)].text == "theirs" and by_key[("item-1", 0)].from_cache
    assert by_key[("item-1", 0)].backend == "other"
    assert by_key[("item-0", 0)].text == "mine" and not by_key[("item-0", 0)].from_cache
    stored = {key: row["text"] for key, row in cache.lookup("m", sk).items()}
    assert {(c.prompt_sha256, c.run): c.text for c in results} == stored
    assert cache.claims() == 0
    cache.close()


def test_claims_of_a_failed_call_are_released_at_once(cache_location: str) -> None:
    cache = open_judgment_cache(cache_location)

    class Failing:
        backend = "failing"

        def complete(self, batch, sampling, runs):  # noqa: ANN001, ANN201
            raise RuntimeError("endpoint down")

    with pytest.raises(RuntimeError, match="endpoint down"):
        judge_incrementally(
            Failing(), "m", _requests(5), SAMPLING, 3, cache, batch_size=2, policy=JudgingPolicy(lease_s=600)
        )
    assert cache.claims() == 0 and cache.count() == 0
    cache.close()


def test_a_writer_waits_for_keys_another_holds(cache_location: str, tmp_path: Path) -> None:
    """Keys claimed by a live writer are not sent: the call waits until they are stored."""
    cache = open_judgment_cache(cache_location)
    sk = SAMPLING.key()
    requests = _requests(4)
    holder = new_owner_id()
    held = [(requests[0].prompt_sha256, run) for run in range(3)]
    assert cache.claim("m", sk, held, holder, lease_s=60).claimed == set(held)
    judge = LoggingJudge(str(tmp_path / "sent.log"), "waiter")

    def store_later() -> None:
        time.sleep(1.0)
        cache.store("m", sk, "holder", [(sha, _completion("held", run)) for sha, run in held], holder)

    thread = threading.Thread(target=store_later)
    thread.start()
    started = time.perf_counter()
    results = judge_incrementally(
        judge,
        "m",
        requests,
        SAMPLING,
        3,
        open_judgment_cache(cache_location),
        batch_size=2,
        policy=JudgingPolicy(lease_s=60, poll_s=0.1),
    )
    thread.join()
    assert time.perf_counter() - started >= 0.9
    sent = [tuple(line.split("\t")[1:]) for line in (tmp_path / "sent.log").read_text().splitlines()]
    assert len(sent) == 9 and requests[0].prompt_sha256 not in {sha for sha, _ in sent}
    assert [c.text for c in results[:3]] == ["held"] * 3 and all(c.from_cache for c in results[:3])
    cache.close()


def test_postgres_location_is_redacted_and_bad_urls_refused() -> None:
    assert redact_location("postgresql://user:s3cret@db:5432/cache") == "postgresql://user:***@db:5432/cache"
    assert "s3cret" not in PostgresJudgmentStore("postgresql://user:s3cret@db/cache").location
    with pytest.raises(ValueError, match="not a postgresql"):
        PostgresJudgmentStore("/tmp/cache.sqlite")
    assert isinstance(open_judgment_cache("/tmp/x/cache.sqlite"), SQLiteJudgmentStore)
    assert isinstance(JudgmentCache("/tmp/x/cache.sqlite"), SQLiteJudgmentStore)


@pytest.mark.postgres
def test_unreachable_postgres_fails_with_the_location_named() -> None:
    from tests.postgres_server import free_port

    cache = PostgresJudgmentStore(f"postgresql://u:pw@127.0.0.1:{free_port()}/none", connect_timeout_s=3)
    with pytest.raises(ConnectionError, match=r"judgment cache postgresql://u:\*\*\*@127\.0\.0\.1"):
        cache.count()


# --- 8 concurrent writer processes ---------------------------------------------------------------

N_WRITERS = 8
N_REQUESTS = 60


def test_eight_writers_of_one_partition_send_nothing_twice(cache_location: str, tmp_path: Path) -> None:
    """8 processes judge the same model (same partition) at once, each also its own model."""
    context = multiprocessing.get_context("spawn")
    go = tmp_path / "go"
    writers = [
        context.Process(
            target=_writer,
            args=(
                cache_location,
                str(tmp_path),
                f"w{i}",
                (i * N_REQUESTS) // N_WRITERS,
                N_REQUESTS,
                ["shared", f"own{i}"],
                0.02,
                30.0,
                None,
                str(go),
            ),
        )
        for i in range(N_WRITERS)
    ]
    for writer in writers:
        writer.start()
    _start_together(tmp_path, [f"w{i}" for i in range(N_WRITERS)], go)
    for writer in writers:
        writer.join(300)
        assert writer.exitcode == 0
    expected = N_REQUESTS * 3
    shared = _cache_texts(cache_location, "shared")
    assert len(shared) == expected
    sent = _sent(tmp_path, "shared")
    counts = Counter((sha, run) for _, sha, run in sent)
    assert len(counts) == expected and max(counts.values()) == 1, "a key was sent twice"
    # More than one writer did the work, and every writer's result is exactly the cache.
    assert len({writer for writer, _, _ in sent}) > 1
    for i in range(N_WRITERS):
        result = json.loads((tmp_path / f"result-w{i}.json").read_text())
        assert {(sha, run): text for sha, run, text, _ in result["shared"]} == shared
        own = _cache_texts(cache_location, f"own{i}")
        assert len(own) == expected and set(own.values()) == {f"w{i}:{r}" for r in range(3)}
        assert not any(from_cache for *_, from_cache in result[f"own{i}"])
    fresh = sum(
        not from_cache
        for i in range(N_WRITERS)
        for *_, from_cache in json.loads((tmp_path / f"result-w{i}.json").read_text())["shared"]
    )
    assert fresh == expected  # each key counted as sent by exactly one writer
    with open_judgment_cache(cache_location) as cache:
        assert cache.claims() == 0
        assert cache.count() == expected * (N_WRITERS + 1)


def test_a_sigkilled_writer_loses_only_its_batch_in_flight(cache_location: str, tmp_path: Path) -> None:
    """One of 8 writers is SIGKILLed mid-batch; the others finish, re-sending only that batch."""
    context = multiprocessing.get_context("spawn")
    lease_s = 3.0
    victim = context.Process(
        target=_writer,
        args=(cache_location, str(tmp_path), "victim", 0, N_REQUESTS, ["shared"], 0.0, lease_s, 3),
    )
    victim.start()
    victim_log = tmp_path / "sent-victim-shared.log"
    deadline = time.time() + 120
    while not (victim_log.exists() and any(line.startswith("3\t") for line in victim_log.read_text().splitlines())):
        assert time.time() < deadline and victim.is_alive(), "the victim never reached its third batch"
        time.sleep(0.05)
    go = tmp_path / "go"
    others = [
        context.Process(
            target=_writer,
            args=(
                cache_location,
                str(tmp_path),
                f"w{i}",
                (i * N_REQUESTS) // 7,
                N_REQUESTS,
                ["shared"],
                0.05,
                lease_s,
                None,
                str(go),
            ),
        )
        for i in range(N_WRITERS - 1)
    ]
    for writer in others:
        writer.start()
    _start_together(tmp_path, [f"w{i}" for i in range(N_WRITERS - 1)], go)
    # Kill the victim once the others are sending.
    while not any(tmp_path.glob("sent-w*-shared.log")):
        assert time.time() < deadline
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(30)
    assert victim.exitcode == -signal.SIGKILL
    for writer in others:
        writer.join(300)
        assert writer.exitcode == 0
    victim_lines = [line.split("\t") for line in victim_log.read_text().splitlines()]
    in_flight = {(sha, int(run)) for call, sha, run in victim_lines if call == "3"}
    finished = {(sha, int(run)) for call, sha, run in victim_lines if call != "3"}
    assert len(in_flight) == 4 * 3 and len(finished) == 2 * 4 * 3
    shared = _cache_texts(cache_location, "shared")
    assert len(shared) == N_REQUESTS * 3
    # The victim's finished batches are in the cache as it answered them; its batch in flight is not.
    assert all(shared[key].startswith("victim:") for key in finished)
    assert not any(shared[key].startswith("victim:") for key in in_flight)
    counts = Counter((sha, run) for _, sha, run in _sent(tmp_path, "shared"))
    twice = {key for key, n in counts.items() if n > 1}
    assert twice == in_flight, "only the killed writer's batch in flight may be sent again"
    assert max(counts.values()) == 2
    for i in range(N_WRITERS - 1):
        result = json.loads((tmp_path / f"result-w{i}.json").read_text())
        assert {(sha, run): text for sha, run, text, _ in result["shared"]} == shared
    with open_judgment_cache(cache_location) as cache:
        assert cache.claims() == 0
