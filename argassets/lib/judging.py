"""The judging library: chat requests, sampling, judges, and an incremental, resume-safe cache.

Everything an LLM judge needs, independent of Dagster and of any backend:

- :class:`ChatRequest` is one system + user chat with an optional restriction of the output
  (``choices`` for guided choice, ``json_schema`` for structured output) and free ``context``
  for baselines that look at the items rather than the prompt.
- :class:`SamplingParams` are the decoding parameters; :meth:`SamplingParams.key` is a stable
  short hash of them, part of the cache key.
- :class:`Judge` is the one interface every backend implements: ``complete`` answers a batch of
  requests with one :class:`Completion` per requested run.
- :class:`JudgmentCache` stores completions in SQLite (WAL mode) keyed by
  ``(model, prompt_sha256, sampling_key, run)``. Several processes may write at once, and a process
  killed mid-run loses at most the batch in flight.
- :func:`judge_incrementally` consults the cache, sends only what is missing, in batches, and writes
  each finished batch to the cache before the next one starts.

Identical prompts (same SHA-256) asked under the same sampling parameters and run are sent once
and their completion is shared: a cache answers by prompt, not by caller key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "CACHE_ENV_VAR",
    "AQ_LABELS",
    "CachedCompletion",
    "ChatRequest",
    "Completion",
    "Judge",
    "JudgmentCache",
    "PartialBatchError",
    "SamplingParams",
    "default_cache_path",
    "judge_incrementally",
    "parse_choice",
    "utc_now",
]

#: Environment variable naming the judgment cache file.
CACHE_ENV_VAR = "ARGASSETS_CACHE"
#: The labels of the argument-quality protocol, in the order the prompts name them.
AQ_LABELS: tuple[str, ...] = ("A", "B", "Tie")


def utc_now() -> str:
    """The current time as an ISO-8601 UTC timestamp with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


_json_string = json.JSONEncoder(ensure_ascii=False).encode
#: JSON encodings of recent system messages (few per study, each long and repeated for every item).
_SYSTEM_JSON: dict[str, str] = {}


def messages_sha256(system: str, user: str) -> str:
    """SHA-256 (hex) of the canonical JSON of the chat messages ``[system, user]``.

    Canonical JSON: keys sorted, no insignificant whitespace, UTF-8, non-ASCII kept as is, i.e.
    ``[{"content":<system>,"role":"system"},{"content":<user>,"role":"user"}]``.
    """
    encoded_system = _SYSTEM_JSON.get(system)
    if encoded_system is None:
        encoded_system = _json_string(system)
        if len(_SYSTEM_JSON) > 4096:
            _SYSTEM_JSON.clear()
        _SYSTEM_JSON[system] = encoded_system
    digest = hashlib.sha256()
    digest.update(b'[{"content":')
    digest.update(encoded_system.encode("utf-8"))
    digest.update(b',"role":"system"},{"content":')
    digest.update(_json_string(user).encode("utf-8"))
    digest.update(b',"role":"user"}]')
    return digest.hexdigest()


#: Provenance of every stored completion, the same in aq_judgments and political_predictions.
PROVENANCE_COLUMNS: tuple[str, ...] = (
    "prompt_sha256",
    "temperature",
    "top_p",
    "seed",
    "max_tokens",
    "sampling_key",
    "latency_s",
    "requested_at",
    "completed_at",
    "backend",
    "is_baseline",
    "scope",
)


@dataclass(frozen=True)
class ChatRequest:
    """One chat (system + user message) to be judged.

    Parameters
    ----------
    key
        The caller's item id (e.g. a prompt id or an argument id); results are returned by it.
    system, user
        The two chat messages.
    choices
        Allowed outputs for guided choice (e.g. ``("A", "B", "Tie")``), or ``None``.
    json_schema
        A JSON schema the output must follow (structured output), or ``None``.
    context
        Extra fields for judges that look at the items instead of the prompt (baselines),
        e.g. ``text_a`` and ``text_b``. Not part of the prompt hash.
    """

    key: str
    system: str
    user: str
    choices: tuple[str, ...] | None = None
    json_schema: dict | None = None
    context: Mapping[str, Any] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, str]]:
        """The chat messages in the OpenAI format."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    @property
    def prompt_sha256(self) -> str:
        """SHA-256 of the canonical JSON of the chat messages (see :func:`messages_sha256`)."""
        return messages_sha256(self.system, self.user)


@dataclass(frozen=True)
class SamplingParams:
    """Decoding parameters shared by every request of one judging call.

    ``seed`` is the base seed; backends that draw several runs derive one seed per run from it
    (see :meth:`run_seed`) and report it in :attr:`Completion.seed`.
    """

    temperature: float
    top_p: float = 1.0
    seed: int | None = None
    max_tokens: int = 8

    def key(self) -> str:
        """A stable short hash (16 hex characters) of the parameters, part of the cache key."""
        payload = _canonical_json(
            {
                "temperature": float(self.temperature),
                "top_p": float(self.top_p),
                "seed": self.seed,
                "max_tokens": int(self.max_tokens),
            }
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    def run_seed(self, run: int) -> int | None:
        """The seed of one run: ``seed + run`` when a base seed is set, else ``None``."""
        return None if self.seed is None else int(self.seed) + int(run)

    def as_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }


@dataclass(frozen=True)
class Completion:
    """One answer of a judge to one request in one run."""

    text: str
    run: int
    seed: int | None
    latency_s: float
    requested_at: str
    completed_at: str


@runtime_checkable
class Judge(Protocol):
    """The one interface of every judge backend."""

    backend: str

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        """Answer every request once per run.

        Returns one list per request, in request order, holding one :class:`Completion` per
        entry of ``runs``, in the order of ``runs``.
        """
        ...


class PartialBatchError(RuntimeError):
    """A judge failed part-way through a batch.

    ``completed`` maps the index of each request that did finish to its completions, so that
    :func:`judge_incrementally` stores them before re-raising: what was paid for is kept.
    """

    def __init__(self, message: str, completed: Mapping[int, list[Completion]]):
        super().__init__(message)
        self.completed = dict(completed)


@dataclass(frozen=True)
class CachedCompletion:
    """A completion together with its cache key and the caller's request key."""

    key: str
    run: int
    model: str
    prompt_sha256: str
    sampling_key: str
    text: str
    seed: int | None
    latency_s: float
    requested_at: str
    completed_at: str
    backend: str
    from_cache: bool


def default_cache_path() -> Path:
    """``$ARGASSETS_CACHE``, else ``judgment_cache.sqlite`` next to the DuckDB file."""
    from_env = os.environ.get(CACHE_ENV_VAR)
    if from_env:
        return Path(from_env)
    from argassets.lib.paths import resolve_duckdb_path

    return resolve_duckdb_path().parent / "judgment_cache.sqlite"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    model TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    sampling_key TEXT NOT NULL,
    run INTEGER NOT NULL,
    text TEXT NOT NULL,
    seed INTEGER,
    latency_s REAL NOT NULL,
    requested_at TEXT NOT NULL,
    completed_at TEXT NOT NULL,
    backend TEXT NOT NULL,
    stored_at TEXT NOT NULL,
    PRIMARY KEY (model, prompt_sha256, sampling_key, run)
) WITHOUT ROWID
"""


class JudgmentCache:
    """Completions on disk, keyed by ``(model, prompt_sha256, sampling_key, run)``.

    SQLite in WAL mode: readers never block the writer, several processes (partitions running at
    once) can share one file, and every :meth:`put_many` is one transaction, so a process killed
    mid-run leaves only whole batches behind. The first completion stored for a key wins; storing
    it again is a no-op, so nothing is ever duplicated.

    Parameters
    ----------
    path
        The SQLite file (created with its folder when missing); default :func:`default_cache_path`.
    timeout_s
        How long a writer waits for another process's transaction.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, timeout_s: float = 120.0):
        self.path = Path(path) if path is not None else default_cache_path()
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), timeout=self.timeout_s, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={int(self.timeout_s * 1000)}")
            conn.execute(_SCHEMA)
            self._conn = conn
            self._pid = os.getpid()
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._pid = None

    def __enter__(self) -> JudgmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "timeout_s": self.timeout_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["timeout_s"])

    def lookup(self, model: str, sampling_key: str) -> dict[tuple[str, int], dict[str, Any]]:
        """Every stored completion of one model and sampling key, by ``(prompt_sha256, run)``."""
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    "SELECT prompt_sha256, run, text, seed, latency_s, requested_at, completed_at, "
                    "backend FROM completions WHERE model = ? AND sampling_key = ?",
                    (model, sampling_key),
                )
                .fetchall()
            )
        return {
            (row[0], int(row[1])): {
                "text": row[2],
                "seed": row[3],
                "latency_s": row[4],
                "requested_at": row[5],
                "completed_at": row[6],
                "backend": row[7],
            }
            for row in rows
        }

    def put_many(
        self,
        model: str,
        sampling_key: str,
        backend: str,
        items: Iterable[tuple[str, Completion]],
    ) -> int:
        """Store ``(prompt_sha256, completion)`` pairs in one transaction; returns rows written."""
        stored_at = utc_now()
        rows = [
            (
                model,
                sha,
                sampling_key,
                int(c.run),
                c.text,
                c.seed,
                float(c.latency_s),
                c.requested_at,
                c.completed_at,
                backend,
                stored_at,
            )
            for sha, c in items
        ]
        if not rows:
            return 0
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                before = conn.total_changes
                conn.executemany(
                    "INSERT OR IGNORE INTO completions (model, prompt_sha256, sampling_key, run, text, "
                    "seed, latency_s, requested_at, completed_at, backend, stored_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                written = conn.total_changes - before
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return written

    def count(self, model: str | None = None) -> int:
        """Number of stored completions (of one model, or all)."""
        with self._lock:
            conn = self._connection()
            if model is None:
                return int(conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
            return int(
                conn.execute("SELECT COUNT(*) FROM completions WHERE model = ?", (model,)).fetchone()[0]
            )


Log = Callable[[str], None] | logging.Logger | None


def _emit(log: Log, message: str) -> None:
    if log is None:
        return
    if isinstance(log, logging.Logger) or hasattr(log, "info"):
        log.info(message)  # type: ignore[union-attr]
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
) -> list[CachedCompletion]:
    """Judge every request ``n_runs`` times, sending only what the cache does not hold yet.

    The cache key is ``(model_name, request.prompt_sha256, sampling.key(), run)``. Missing work is
    grouped by request (all of a request's missing runs go out together, so a backend can draw them
    as ``n`` samples of one prompt), chunked into batches of ``batch_size`` requests, and each
    finished batch is stored in one transaction before the next is sent: a run that is interrupted
    and started again resumes where it stopped, re-sending at most the batch that was in flight.
    If the judge raises :class:`PartialBatchError`, the completions it did finish are stored
    before the error propagates.

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
    for sha in representative:
        todo = tuple(run for run in runs if (sha, run) not in stored)
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
        f"{len(representative)} distinct prompts), {already} in the cache, {total - already} to send",
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
                raise RuntimeError(
                    f"judge '{backend}' returned {len(answers)} answers for {len(batch)} requests"
                )
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
                    )
                )
    return results


_QUOTES = "\"'`*"


def parse_choice(text: str | None, choices: Sequence[str] = AQ_LABELS) -> str | None:
    """Strictly parse a constrained answer into one of ``choices``, or ``None``.

    Accepted: the choice itself, case-insensitively, after stripping whitespace, quotes, markdown
    emphasis and one trailing full stop; ``Argument A`` style answers; and a JSON object with one
    string value (what a JSON-schema restricted endpoint returns, e.g. ``{"label": "A"}``).
    Anything else (empty, several labels, prose) is ``None``: invalid, never guessed.
    """
    if text is None:
        return None
    candidate = text.strip()
    if candidate.startswith("{"):
        try:
            value = json.loads(candidate)
        except ValueError:
            return None
        if isinstance(value, dict) and len(value) == 1:
            (inner,) = value.values()
            return parse_choice(inner, choices) if isinstance(inner, str) else None
        return None
    candidate = candidate.strip(_QUOTES).strip()
    if candidate.endswith("."):
        candidate = candidate[:-1].strip()
    candidate = re.sub(r"^(argument|option)\s+", "", candidate, flags=re.IGNORECASE)
    lowered = {choice.lower(): choice for choice in choices}
    return lowered.get(candidate.lower())
