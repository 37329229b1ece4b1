"""Judging through the cache: only what is missing is sent, in batches, each stored before the next."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from argassets.platform.judging.interface import (
    CachedCompletion,
    ChatRequest,
    Completion,
    Judge,
    PartialBatchError,
    SamplingParams,
    is_non_answer,
)
from argassets.platform.judging.prefix_order import distinct_in_prefix_order
from argassets.platform.storage.judgment_cache.codec import CachedRow, decode_label_probs, encode_label_probs
from argassets.platform.storage.judgment_cache.interface import JudgmentStore, new_owner_id

Log = Callable[[str], None] | logging.Logger | None


def _emit(log: Log, message: str) -> None:
    if log is None:
        return
    if isinstance(log, logging.Logger) or hasattr(log, "info"):
        log.info(message)
    else:
        log(message)


#: Seconds a claim lasts without renewal: how long other writers wait for work a dead writer held.
DEFAULT_LEASE_S = 60.0
#: Attempts per key, over all calls, before a non-answer is kept as final (given up). Three gives a
#: failed request (an endpoint's empty body, a cut-off) two more chances without paying for ever.
MAX_ATTEMPTS = 3


def _by_runs(pending: Mapping[str, Iterable[int]]) -> dict[tuple[int, ...], list[str]]:
    """Prompt hashes grouped by the tuple of runs they still need (first-seen order kept)."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for sha, runs in pending.items():
        todo = tuple(sorted(runs))
        if todo:
            groups.setdefault(todo, []).append(sha)
    return groups


#: ``(prompt_sha256, run)``.
Item = tuple[str, int]


@dataclass(frozen=True)
class JudgingPolicy:
    """How a call shares work with other writers, and how often it asks a non-answer again.

    ``lease_s``: how long a claim lasts without renewal. ``poll_s``: pause between two looks at
    keys claimed by another writer (default ``lease_s / 10``, at most 1 s). ``max_attempts``:
    attempts per key before a non-answer is final.
    """

    lease_s: float = DEFAULT_LEASE_S
    poll_s: float | None = None
    max_attempts: int = MAX_ATTEMPTS

    def __post_init__(self) -> None:
        if self.lease_s <= 0:
            raise ValueError(f"lease_s must be > 0, got {self.lease_s}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")

    @property
    def poll(self) -> float:
        return min(1.0, self.lease_s / 10.0) if self.poll_s is None else float(self.poll_s)


DEFAULT_POLICY = JudgingPolicy()


@dataclass
class _Work:
    """What a call still has to send and the cache rows it has seen: the state its steps share."""

    stored: dict[Item, CachedRow]
    pending: dict[str, set[int]]
    #: Cached non-answers asked again, with the attempts they had (see JudgmentStore.claim).
    again: dict[Item, int]
    #: Keys this call stored itself (its answers are the cache's).
    mine: set[Item] = field(default_factory=set)

    @classmethod
    def plan(cls, shas: Iterable[str], n_runs: int, stored: dict[Item, CachedRow], max_attempts: int) -> _Work:
        """Missing keys, and cached non-answers with attempts left, of every prompt."""
        pending: dict[str, set[int]] = {}
        again: dict[Item, int] = {}
        for sha in shas:
            todo = set()
            for run in range(n_runs):
                row = stored.get((sha, run))
                if row is None:
                    todo.add(run)
                elif not row["answered"] and int(row["attempts"]) < max_attempts:
                    todo.add(run)
                    again[(sha, run)] = int(row["attempts"])
            if todo:
                pending[sha] = todo
        return cls(stored, pending, again)

    def left(self) -> int:
        return sum(len(runs) for runs in self.pending.values())

    def settle(self, rows: Mapping[Item, CachedRow]) -> int:
        """Take completions now in the cache off the pending work; returns how many."""
        for (sha, run), row in rows.items():
            self.stored[(sha, run)] = row
            left = self.pending.get(sha)
            if left is not None:
                left.discard(run)
                if not left:
                    del self.pending[sha]
        return len(rows)


@dataclass
class _Progress:
    """Progress lines: one at the start, one per stored batch, one per minute of waiting."""

    model: str
    total: int
    done: int
    log: Log
    sent: int = 0
    started: float = field(default_factory=time.perf_counter)
    waited_since: float | None = None

    def stored(self, count: int) -> None:
        self.done += count
        self.sent += count
        elapsed = time.perf_counter() - self.started
        rate = self.sent / elapsed if elapsed > 0 else math.inf
        remaining = (self.total - self.done) / rate if rate > 0 and math.isfinite(rate) else 0.0
        _emit(
            self.log,
            f"{self.model}: {self.done}/{self.total} completions ({100.0 * self.done / max(self.total, 1):.1f}%), "
            f"{rate:.1f}/s, about {remaining:.0f} s left",
        )

    def waiting(self, left: int) -> None:
        now = time.perf_counter()
        if self.waited_since is None or now - self.waited_since >= 60.0:
            self.waited_since = now
            _emit(
                self.log,
                f"{self.model}: waiting for {left} completions claimed by another run of the same model and sampling",
            )


def _checked(completions: Iterable[tuple[str, Completion]]) -> list[tuple[str, Completion]]:
    """The completions with ``answered`` set by the one definition of a non-answer."""
    return [(sha, with_answered(c)) for sha, c in completions]


def with_answered(completion: Completion) -> Completion:
    """``completion`` with ``answered`` per :func:`is_non_answer`; the same object when already so
    (nearly always: copying every completion of a baseline's batch cost seconds)."""
    answered = not is_non_answer(completion.text, completion.answered)
    return completion if completion.answered is answered else replace(completion, answered=answered)


def _cached_row(completion: Completion, backend: str, attempts: int) -> CachedRow:
    return CachedRow(
        text=completion.text,
        seed=completion.seed,
        latency_s=completion.latency_s,
        requested_at=completion.requested_at,
        completed_at=completion.completed_at,
        backend=backend,
        answered=completion.answered,
        attempts=attempts,
        label_probs=encode_label_probs(completion.label_probs),
    )


@dataclass
class _Call:
    """One call of :func:`judge_incrementally`: its scope, its claims' owner and its steps."""

    judge: Judge
    model: str
    sampling: SamplingParams
    cache: JudgmentStore
    policy: JudgingPolicy
    representative: dict[str, ChatRequest]
    work: _Work
    progress: _Progress
    sampling_key: str = field(init=False)
    backend: str = field(init=False)
    owner: str = field(init=False, default_factory=new_owner_id)

    def __post_init__(self) -> None:
        self.sampling_key = self.sampling.key()
        self.backend = getattr(self.judge, "backend", type(self.judge).__name__)

    def claim(self, shas: Sequence[str], runs: Sequence[int]) -> tuple[dict[str, list[int]], bool]:
        """Claim a batch's keys: what this call may send (by prompt, batch order), and whether
        anything moved (claimed here, or found stored by another writer)."""
        items = [(sha, run) for sha in shas for run in runs]
        outcome = self.cache.claim(
            self.model, self.sampling_key, items, self.owner, self.policy.lease_s, self.work.again
        )
        found = self.work.settle(outcome.stored)
        self.progress.done += found
        claimed: dict[str, list[int]] = {}
        for sha, run in outcome.claimed:
            claimed.setdefault(sha, []).append(run)
        return {sha: claimed[sha] for sha in shas if sha in claimed}, bool(found or outcome.claimed)

    def send(self, shas: Sequence[str], runs: Sequence[int]) -> list[tuple[str, Completion]]:
        """Ask the judge for ``runs`` of each prompt; a partial batch is stored before it raises."""
        batch = [self.representative[sha] for sha in shas]
        try:
            answers = self.judge.complete(batch, self.sampling, list(runs))
        except PartialBatchError as exc:
            partial = _checked(
                (shas[i], completion) for i, completions in exc.completed.items() for completion in completions
            )
            self.cache.store(self.model, self.sampling_key, self.backend, partial, self.owner, self.work.again)
            _emit(self.progress.log, f"{self.model}: batch failed, stored {len(partial)} finished completions")
            raise
        if len(answers) != len(batch):
            raise RuntimeError(f"judge '{self.backend}' returned {len(answers)} answers for {len(batch)} requests")
        items: list[tuple[str, Completion]] = []
        for sha, completions in zip(shas, answers, strict=True):
            got = [c.run for c in completions]
            if got != list(runs):
                raise RuntimeError(
                    f"judge '{self.backend}' returned runs {got} for prompt {sha[:12]}, expected {list(runs)}"
                )
            items.extend((sha, completion) for completion in completions)
        return _checked(items)

    def store(self, items: list[tuple[str, Completion]]) -> None:
        """Store a finished batch; where another writer stored a key first, take its answer."""
        written = self.cache.store(self.model, self.sampling_key, self.backend, items, self.owner, self.work.again)
        self.work.mine.update(written)
        sent_now = {(sha, c.run): c for sha, c in items}
        attempts = {item: self.work.again.get(item, 0) + 1 for item in written}
        self.work.settle({item: _cached_row(sent_now[item], self.backend, attempts[item]) for item in written})
        lost = [item for item in sent_now if item not in written]
        if lost:
            # Another writer stored these first (our lease had run out): theirs stand.
            self.work.settle(self.cache.fetch(self.model, self.sampling_key, lost))
        self.progress.stored(len(items))

    def round(self, batch_size: int) -> bool:
        """Claim, send and store every pending key once; whether anything moved."""
        progressed = False
        for runs, group in _by_runs(self.work.pending).items():
            for start in range(0, len(group), batch_size):
                to_send, moved = self.claim(group[start : start + batch_size], runs)
                progressed = progressed or moved
                for sub_runs, sub_shas in _by_runs(to_send).items():
                    self.store(self.send(sub_shas, sub_runs))
        return progressed

    def report(self, requests: Sequence[ChatRequest], n_runs: int) -> list[CachedCompletion]:
        """What the cache holds for every request and run, in request order then run order."""
        return [self._cached(request, run) for request in requests for run in range(n_runs)]

    def _cached(self, request: ChatRequest, run: int) -> CachedCompletion:
        sha = request.prompt_sha256
        row = self.work.stored[(sha, run)]
        return CachedCompletion(
            key=request.key,
            run=run,
            model=self.model,
            prompt_sha256=sha,
            sampling_key=self.sampling_key,
            text=row["text"],
            seed=row["seed"],
            latency_s=row["latency_s"],
            requested_at=row["requested_at"],
            completed_at=row["completed_at"],
            backend=row["backend"],
            from_cache=(sha, run) not in self.work.mine,
            answered=bool(row["answered"]),
            attempts=int(row["attempts"]),
            label_probs=decode_label_probs(row["label_probs"]),
        )


def _open_call(
    judge: Judge,
    model_name: str,
    requests: Sequence[ChatRequest],
    sampling: SamplingParams,
    n_runs: int,
    cache: JudgmentStore,
    policy: JudgingPolicy,
    log: Log,
) -> _Call:
    """Look the scope up in the cache, plan the missing work and say how much there is."""
    stored = cache.lookup(model_name, sampling.key())
    # One representative request per prompt hash (identical prompts are sent once), in prefix order:
    # batches, and the requests within a batch, go out with shared prefixes adjacent. A judge that
    # computes no prompt (baselines, imports: prefix_order = False) keeps the table's order, unsorted.
    representative = distinct_in_prefix_order(requests, sort=getattr(judge, "prefix_order", True))
    work = _Work.plan(representative, n_runs, stored, policy.max_attempts)
    total = len(representative) * n_runs
    already = total - work.left()
    progress = _Progress(model_name, total, already, log)
    _emit(
        log,
        f"{model_name}: {total} completions needed ({len(requests)} requests x {n_runs} runs, "
        f"{len(representative)} distinct prompts), {already} in the cache, {total - already} to send"
        + (f" ({len(work.again)} of them non-answers asked again)" if work.again else ""),
    )
    return _Call(judge, model_name, sampling, cache, policy, representative, work, progress)


def judge_incrementally(
    judge: Judge,
    model_name: str,
    requests: Sequence[ChatRequest],
    sampling: SamplingParams,
    n_runs: int,
    cache: JudgmentStore,
    batch_size: int = 256,
    log: Log = None,
    policy: JudgingPolicy = DEFAULT_POLICY,
) -> list[CachedCompletion]:
    """Judge every request ``n_runs`` times, sending only what the cache does not hold yet.

    Missing work goes out in prefix order, in batches of ``batch_size`` requests, each claimed in
    ``cache`` before it is sent and stored before the next; the result is what the cache holds, one
    :class:`CachedCompletion` per ``(request, run)`` in request order then run order. The guarantees
    (resume, concurrent writers, non-answers asked again) are in docs/judgments.md, "The judgment
    cache". ``policy`` sets leases, polling and attempts; ``log`` gets one progress line per batch.
    """
    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1, got {n_runs}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    call = _open_call(judge, model_name, requests, sampling, n_runs, cache, policy, log)
    with cache.waits_told_to(lambda message: _emit(log, message)), cache.lease(call.owner, policy.lease_s):
        while call.work.pending:
            if not call.round(batch_size) and call.work.pending:
                # Everything left is claimed by live writers: wait for their batches, or their leases.
                call.progress.waiting(call.work.left())
                time.sleep(policy.poll)
    return call.report(requests, n_runs)
