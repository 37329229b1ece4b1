"""Judging through the cache: only what is missing is sent, in batches, each stored before the next.

Identical prompts (same SHA-256) asked under the same sampling parameters and run are sent once
and their completion is shared: the cache answers by prompt, not by caller key.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence

from argassets.platform.judging import (
    CachedCompletion,
    ChatRequest,
    Completion,
    Judge,
    PartialBatchError,
    SamplingParams,
    is_non_answer,
)
from argassets.platform.judgment_cache import JudgmentCache

Log = Callable[[str], None] | logging.Logger | None
#: Attempts per (model, prompt, sampling, run) before a non-answer is kept as final.
MAX_ATTEMPTS = 3


def _emit(log: Log, message: str) -> None:
    if log is None:
        return
    if isinstance(log, logging.Logger) or hasattr(log, "info"):
        log.info(message)
    else:
        log(message)


def judge_incrementally(
    judge: Judge,
    model_name: str,
    requests: Sequence[ChatRequest],
    sampling: SamplingParams,
    n_runs: int,
    cache: JudgmentCache,
    batch_size: int = 256,
    log: Log = None,
    max_attempts: int = MAX_ATTEMPTS,
) -> list[CachedCompletion]:
    """Judge every request ``n_runs`` times, sending only what the cache does not hold yet.

    The cache key is ``(model_name, request.prompt_sha256, sampling.key(), run)``. Missing work is
    grouped by request (all of a request's missing runs go out together, so a backend can draw them
    as ``n`` samples of one prompt), chunked into batches of ``batch_size`` requests, and each
    finished batch is stored in one transaction before the next is sent: a run that is interrupted
    and started again resumes where it stopped, re-sending at most the batch that was in flight.
    If the judge raises :class:`PartialBatchError`, the completions it did finish are stored
    before the error propagates.

    A non-answer in the cache (an empty or unparsable body, no choices: see
    :func:`argassets.platform.judging.is_non_answer`) is not final: it is asked again, up to
    ``max_attempts`` attempts per key over all materialisations, then left as it is (invalid).

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
        Where completions are looked up and stored.
    batch_size
        Requests per call to ``judge.complete``.
    max_attempts
        Attempts per key before a non-answer is kept as final.
    log
        A logger (``.info``) or a callable receiving one progress line per batch.

    Returns
    -------
    list of CachedCompletion
        One per ``(request, run)``, in request order then run order; ``from_cache`` tells whether
        it was answered from the cache (``True``) or sent during this call (``False``).
    """
    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1, got {n_runs}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    runs = list(range(n_runs))
    sampling_key = sampling.key()
    backend = getattr(judge, "backend", type(judge).__name__)
    stored = cache.lookup(model_name, sampling_key)
    shas = [request.prompt_sha256 for request in requests]

    # One representative request per prompt hash; identical prompts are sent once.
    representative: dict[str, ChatRequest] = {}
    for request, sha in zip(requests, shas, strict=True):
        representative.setdefault(sha, request)
    missing: dict[tuple[int, ...], list[str]] = {}

    def wanted(sha: str, run: int) -> bool:
        row = stored.get((sha, run))
        if row is None:
            return True
        return bool(is_non_answer(row["text"], row["answered"]) and row["attempts"] < max_attempts)

    asked_again = 0
    for sha in representative:
        todo = tuple(run for run in runs if wanted(sha, run))
        asked_again += sum((sha, run) in stored for run in todo)
        if todo:
            missing.setdefault(todo, []).append(sha)

    total = len(representative) * n_runs
    already = total - sum(len(todo) * len(group) for todo, group in missing.items())
    fresh: dict[tuple[str, int], Completion] = {}
    done = already
    started = time.perf_counter()
    sent = 0
    _emit(
        log,
        f"{model_name}: {total} completions needed ({len(requests)} requests x {n_runs} runs, "
        f"{len(representative)} distinct prompts), {already} in the cache, {total - already} to send"
        + (f" ({asked_again} non-answers asked again)" if asked_again else ""),
    )
    for todo, group in missing.items():
        for start in range(0, len(group), batch_size):
            batch_shas = group[start : start + batch_size]
            batch = [representative[sha] for sha in batch_shas]
            try:
                answers = judge.complete(batch, sampling, list(todo))
            except PartialBatchError as exc:
                partial = [
                    (batch_shas[i], completion)
                    for i, completions in exc.completed.items()
                    for completion in completions
                ]
                cache.put_many(model_name, sampling_key, backend, partial)
                _emit(log, f"{model_name}: batch failed, stored {len(partial)} finished completions")
                raise
            if len(answers) != len(batch):
                raise RuntimeError(f"judge '{backend}' returned {len(answers)} answers for {len(batch)} requests")
            items: list[tuple[str, Completion]] = []
            for sha, completions in zip(batch_shas, answers, strict=True):
                got = [c.run for c in completions]
                if got != list(todo):
                    raise RuntimeError(
                        f"judge '{backend}' returned runs {got} for prompt {sha[:12]}, expected {list(todo)}"
                    )
                for completion in completions:
                    items.append((sha, completion))
                    fresh[(sha, completion.run)] = completion
            cache.put_many(model_name, sampling_key, backend, items)
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

    results: list[CachedCompletion] = []
    for request, sha in zip(requests, shas, strict=True):
        for run in runs:
            if (sha, run) in fresh:
                c = fresh[(sha, run)]
                results.append(
                    CachedCompletion(
                        key=request.key,
                        run=run,
                        model=model_name,
                        prompt_sha256=sha,
                        sampling_key=sampling_key,
                        text=c.text,
                        seed=c.seed,
                        latency_s=c.latency_s,
                        requested_at=c.requested_at,
                        completed_at=c.completed_at,
                        backend=backend,
                        from_cache=False,
                        answered=c.is_answer,
                        attempts=int(stored[(sha, run)]["attempts"]) + 1 if (sha, run) in stored else 1,
                    )
                )
            else:
                row = stored[(sha, run)]
                results.append(
                    CachedCompletion(
                        key=request.key,
                        run=run,
                        model=model_name,
                        prompt_sha256=sha,
                        sampling_key=sampling_key,
                        text=row["text"],
                        seed=row["seed"],
                        latency_s=row["latency_s"],
                        requested_at=row["requested_at"],
                        completed_at=row["completed_at"],
                        backend=row["backend"],
                        from_cache=True,
                        answered=not is_non_answer(row["text"], row["answered"]),
                        attempts=int(row["attempts"]),
                    )
                )
    return results
