"""Judging through the cache: only what is missing is sent, in batches, each stored before the next.

Before a batch is sent its keys are claimed in the cache, so that concurrent runs of the same model
and sampling (on one machine or many) never send a key twice; see
:mod:`argassets.platform.judgment_cache`.

Identical prompts (same SHA-256) asked under the same sampling parameters and run are sent once
and their completion is shared: the cache answers by prompt, not by caller key.

A non-answer (:func:`argassets.platform.judging.is_non_answer`) is never final: a later call asks
it again, up to :data:`MAX_ATTEMPTS` attempts per key in all, then keeps it (given up).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from argassets.platform.judging import (
    CachedCompletion,
    ChatRequest,
    Completion,
    Judge,
    PartialBatchError,
    SamplingParams,
    is_non_answer,
)
from argassets.platform.judgment_cache import JudgmentStore, new_owner_id

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


def _cached(
    request: ChatRequest, run: int, model: str, sha: str, sampling_key: str, row: Mapping[str, Any], fresh: bool
) -> CachedCompletion:
    return CachedCompletion(
        key=request.key,
        run=run,
        model=model,
        prompt_sha256=sha,
        sampling_key=sampling_key,
        text=row["text"],
        seed=row["seed"],
        latency_s=row["latency_s"],
        requested_at=row["requested_at"],
        completed_at=row["completed_at"],
        backend=row["backend"],
        from_cache=not fresh,
        answered=bool(row["answered"]),
        attempts=int(row["attempts"]),
    )


def _by_runs(pending: Mapping[str, Iterable[int]]) -> dict[tuple[int, ...], list[str]]:
    """Prompt hashes grouped by the tuple of runs they still need (first-seen order kept)."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for sha, runs in pending.items():
        todo = tuple(sorted(runs))
        if todo:
            groups.setdefault(todo, []).append(sha)
    return groups


def judge_incrementally(
    judge: Judge,
    model_name: str,
    requests: Sequence[ChatRequest],
    sampling: SamplingParams,
    n_runs: int,
    cache: JudgmentStore,
    batch_size: int = 256,
    log: Log = None,
    lease_s: float = DEFAULT_LEASE_S,
    poll_s: float | None = None,
    max_attempts: int = MAX_ATTEMPTS,
) -> list[CachedCompletion]:
    """Judge every request ``n_runs`` times, sending only what the cache does not hold yet.

    The cache key is ``(model_name, request.prompt_sha256, sampling.key(), run)``. Missing work is
    grouped by request (all of a request's missing runs go out together, so a backend can draw them
    as ``n`` samples of one prompt) and chunked into batches of ``batch_size`` requests. Before a
    batch is sent its keys are *claimed* in the cache; only claimed keys are sent, and each finished
    batch is stored, and its claims dropped, in one transaction before the next is sent. So:

    - a run that is interrupted and started again resumes where it stopped, re-sending at most the
      batch that was in flight;
    - two runs of the same model and sampling at once (two runs of one partition, on one machine or
      many) never send a key twice: each sends what it claimed and waits for the other's claims to
      be stored, or to expire when the other died (leases of ``lease_s`` seconds, renewed while this
      call runs);
    - the result is always what the cache holds: when two writers answered the same key (a lease
      expired under a slow writer), the first stored answer is the one returned, by both;
    - a non-answer (:func:`is_non_answer`: flagged by the backend, or empty text) is stored as
      such and is not final: a cached non-answer with fewer than ``max_attempts`` attempts is
      claimed and sent again (once per call: a non-answer this call stored waits for the next
      call), and the store replaces it only if nobody asked it again meanwhile. An answer is never
      sent again, even text the study cannot parse: that is the model's judgment, counted invalid.

    If the judge raises :class:`PartialBatchError`, the completions it did finish are stored
    before the error propagates; the claims left are released at once.

    Parameters
    ----------
    judge
        Any :class:`Judge`.
    model_name
        The registry name of the judge (first part of the cache key).
    requests
        The chats to judge; their ``key`` values identify the results.
    sampling
        Decoding parameters (``sampling.key()`` is part of the cache key).
    n_runs
        Runs per request: ``0 .. n_runs - 1``.
    cache
        Where completions are looked up, claimed and stored (:class:`JudgmentCache` or
        :func:`open_judgment_cache`).
    batch_size
        Requests per call to ``judge.complete``.
    log
        A logger (``.info``) or a callable receiving one progress line per batch.
    lease_s
        How long a claim lasts without renewal.
    poll_s
        Pause between two looks at keys claimed by another writer (default ``lease_s / 10``,
        at most 1 s).
    max_attempts
        Attempts per key before a non-answer is final.

    Returns
    -------
    list of CachedCompletion
        One per ``(request, run)``, in request order then run order; ``from_cache`` tells whether
        it was answered from the cache (``True``) or sent and stored by this call (``False``);
        ``answered`` and ``attempts`` say whether it is a non-answer and how often it was asked.
    """
    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1, got {n_runs}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if lease_s <= 0:
        raise ValueError(f"lease_s must be > 0, got {lease_s}")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    poll = min(1.0, lease_s / 10.0) if poll_s is None else float(poll_s)
    runs = list(range(n_runs))
    sampling_key = sampling.key()
    backend = getattr(judge, "backend", type(judge).__name__)
    stored = cache.lookup(model_name, sampling_key)
    shas = [request.prompt_sha256 for request in requests]

    # One representative request per prompt hash; identical prompts are sent once.
    representative: dict[str, ChatRequest] = {}
    for request, sha in zip(requests, shas, strict=True):
        representative.setdefault(sha, request)
    pending: dict[str, set[int]] = {}
    #: Cached non-answers asked again, with the attempts they had (see JudgmentStore.claim).
    again: dict[tuple[str, int], int] = {}
    for sha in representative:
        todo = set()
        for run in runs:
            row = stored.get((sha, run))
            if row is None:
                todo.add(run)
            elif not row["answered"] and int(row["attempts"]) < max_attempts:
                todo.add(run)
                again[(sha, run)] = int(row["attempts"])
        if todo:
            pending[sha] = todo

    total = len(representative) * n_runs
    already = total - sum(len(todo) for todo in pending.values())
    #: Keys this call stored itself (its answers are the cache's).
    mine: set[tuple[str, int]] = set()
    done = already
    started = time.perf_counter()
    sent = 0
    waited_since: float | None = None
    _emit(
        log,
        f"{model_name}: {total} completions needed ({len(requests)} requests x {n_runs} runs, "
        f"{len(representative)} distinct prompts), {already} in the cache, {total - already} to send"
        + (f" ({len(again)} of them non-answers asked again)" if again else ""),
    )

    def checked(completions: Iterable[tuple[str, Completion]]) -> list[tuple[str, Completion]]:
        """The completions with ``answered`` set by the one definition of a non-answer."""
        return [(sha, replace(c, answered=not is_non_answer(c.text, c.answered))) for sha, c in completions]

    def settle(items: Mapping[tuple[str, int], Mapping[str, Any]]) -> int:
        """Take completions found in the cache (stored by another writer) off the pending work."""
        for (sha, run), row in items.items():
            stored[(sha, run)] = dict(row)
            left = pending.get(sha)
            if left is not None:
                left.discard(run)
                if not left:
                    del pending[sha]
        return len(items)

    owner = new_owner_id()
    with cache.lease(owner, lease_s):
        while pending:
            progressed = False
            for batch_runs, group in _by_runs(pending).items():
                for start in range(0, len(group), batch_size):
                    batch_shas = group[start : start + batch_size]
                    outcome = cache.claim(
                        model_name,
                        sampling_key,
                        [(sha, run) for sha in batch_shas for run in batch_runs],
                        owner,
                        lease_s,
                        again,
                    )
                    found = settle(outcome.stored)
                    done += found
                    progressed = progressed or bool(found or outcome.claimed)
                    claimed_runs: dict[str, list[int]] = {}
                    for sha, run in outcome.claimed:
                        claimed_runs.setdefault(sha, []).append(run)
                    ordered = {sha: claimed_runs[sha] for sha in batch_shas if sha in claimed_runs}
                    for sub_todo, sub_shas in _by_runs(ordered).items():
                        batch = [representative[sha] for sha in sub_shas]
                        try:
                            answers = judge.complete(batch, sampling, list(sub_todo))
                        except PartialBatchError as exc:
                            partial = checked(
                                (sub_shas[i], completion)
                                for i, completions in exc.completed.items()
                                for completion in completions
                            )
                            cache.store(model_name, sampling_key, backend, partial, owner, again)
                            _emit(log, f"{model_name}: batch failed, stored {len(partial)} finished completions")
                            raise
                        if len(answers) != len(batch):
                            raise RuntimeError(
                                f"judge '{backend}' returned {len(answers)} answers for {len(batch)} requests"
                            )
                        items: list[tuple[str, Completion]] = []
                        for sha, completions in zip(sub_shas, answers, strict=True):
                            got = [c.run for c in completions]
                            if got != list(sub_todo):
                                raise RuntimeError(
                                    f"judge '{backend}' returned runs {got} for prompt {sha[:12]}, "
                                    f"expected {list(sub_todo)}"
                                )
                            items.extend((sha, completion) for completion in completions)
                        items = checked(items)
                        written = cache.store(model_name, sampling_key, backend, items, owner, again)
                        mine.update(written)
                        sent_now = {(sha, c.run): c for sha, c in items}
                        settle(
                            {item: _completion_row(sent_now[item], backend, again.get(item, 0) + 1) for item in written}
                        )
                        lost = [item for item in sent_now if item not in written]
                        if lost:
                            # Another writer stored these first (our lease had run out): theirs stand.
                            settle(cache.fetch(model_name, sampling_key, lost))
                        done += len(items)
                        sent += len(items)
                        elapsed = time.perf_counter() - started
                        rate = sent / elapsed if elapsed > 0 else math.inf
                        remaining = (total - done) / rate if rate > 0 and math.isfinite(rate) else 0.0
                        _emit(
                            log,
                            f"{model_name}: {done}/{total} completions ({100.0 * done / max(total, 1):.1f}%), "
                            f"{rate:.1f}/s, about {remaining:.0f} s left",
                        )
            if pending and not progressed:
                # Everything left is claimed by live writers: wait for their batches, or their leases.
                now = time.perf_counter()
                if waited_since is None or now - waited_since >= 60.0:
                    waited_since = now
                    _emit(
                        log,
                        f"{model_name}: waiting for {sum(len(r) for r in pending.values())} completions "
                        "claimed by another run of the same model and sampling",
                    )
                time.sleep(poll)

    results: list[CachedCompletion] = []
    for request, sha in zip(requests, shas, strict=True):
        for run in runs:
            results.append(_cached(request, run, model_name, sha, sampling_key, stored[(sha, run)], (sha, run) in mine))
    return results


def _completion_row(completion: Completion, backend: str, attempts: int) -> dict[str, Any]:
    return {
        "text": completion.text,
        "seed": completion.seed,
        "latency_s": completion.latency_s,
        "requested_at": completion.requested_at,
        "completed_at": completion.completed_at,
        "backend": backend,
        "answered": completion.answered,
        "attempts": attempts,
    }
