"""A partition's missing judgments as OpenAI-Batch JSONL files, and their results back into the cache.

docs/judgments.md, "Batch files".
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from argassets.platform.judging.incremental import MAX_ATTEMPTS
from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, is_non_answer
from argassets.platform.judging.prefix_order import distinct_in_prefix_order
from argassets.platform.storage.judgment_cache.interface import JudgmentStore

__all__ = [
    "ANTHROPIC_LIMITS",
    "OPENAI_LIMITS",
    "BatchFormat",
    "BatchKey",
    "BatchLimits",
    "BatchResultError",
    "BatchScope",
    "export_batch",
    "import_batch_results",
    "parse_result_line",
    "request_line",
]

CHAT_URL = "/v1/chat/completions"
PART_PATTERN = re.compile(r"^(?P<stem>.+)-(?P<number>\d{4,})\.jsonl$")


@dataclass(frozen=True)
class BatchLimits:
    """What one batch file may hold."""

    requests: int
    bytes: int


#: OpenAI's Batch API: 50,000 requests and 200 MB per input file (counted as 200 x 10^6 bytes).
OPENAI_LIMITS = BatchLimits(50_000, 200_000_000)
#: Anthropic's Message Batches: 100,000 requests or 256 MB per batch, custom_id at most 64 characters
#: of ``[a-zA-Z0-9_-]``, another body format (``params``): not written here, for reference.
ANTHROPIC_LIMITS = BatchLimits(100_000, 256_000_000)


class BatchResultError(ValueError):
    """Result lines that could not be stored; every other line of the files was."""

    def __init__(self, problems: Sequence[str], stored: int):
        shown = "\n".join(problems[:20]) + (f"\n... and {len(problems) - 20} more" if len(problems) > 20 else "")
        super().__init__(f"{len(problems)} result lines not stored ({stored} stored):\n{shown}")
        self.problems = list(problems)
        self.stored = stored


@dataclass(frozen=True)
class BatchKey:
    """A judgment cache key as a batch line's ``custom_id``."""

    model: str
    prompt_sha256: str
    sampling_key: str
    run: int

    @property
    def custom_id(self) -> str:
        return f"{self.model}:{self.prompt_sha256}:{self.sampling_key}:{self.run}"

    @classmethod
    def parse(cls, custom_id: object) -> BatchKey:
        parts = custom_id.rsplit(":", 3) if isinstance(custom_id, str) else []
        if len(parts) != 4 or not re.fullmatch(r"[0-9a-f]{64}", parts[1]) or not parts[3].isdigit():
            raise ValueError(f"custom_id {custom_id!r} is not <model>:<prompt_sha256>:<sampling_key>:<run>")
        return cls(parts[0], parts[1], parts[2], int(parts[3]))


class BatchFormat(Protocol):
    """How one engine's requests look in a batch file: the exact body bytes, and each run's seed."""

    #: Recorded as the ``backend`` of the completions imported from the results.
    backend: str

    def body(self, request: ChatRequest, sampling: SamplingParams, run: int) -> bytes: ...

    def seed(self, request: ChatRequest, sampling: SamplingParams, run: int) -> int | None: ...


@dataclass(frozen=True)
class BatchScope:
    """What a partition asks: its cache model key, sampling, runs and requests."""

    model: str
    sampling: SamplingParams
    n_runs: int
    requests: Sequence[ChatRequest]
    by_sha: dict[str, ChatRequest] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_sha", distinct_in_prefix_order(self.requests))

    def key(self, sha: str, run: int) -> BatchKey:
        return BatchKey(self.model, sha, self.sampling.key(), run)


def request_line(key: BatchKey, body: bytes, url: str = CHAT_URL) -> bytes:
    """One JSONL line holding ``body`` byte for byte."""
    head = json.dumps({"custom_id": key.custom_id, "method": "POST", "url": url}, separators=(",", ":"))
    return head[:-1].encode("utf-8") + b',"body":' + body + b"}\n"


@dataclass
class ExportReport:
    """What an export wrote and what it skipped."""

    written: int = 0
    already_exported: int = 0
    already_judged: int = 0
    files: list[Path] = field(default_factory=list)

    def describe(self) -> str:
        names = ", ".join(p.name for p in self.files) or "none"
        return (
            f"{self.written} requests written ({names}); skipped {self.already_exported} already exported "
            f"and {self.already_judged} already judged"
        )


def _parts(folder: Path, stem: str) -> list[Path]:
    found = []
    for path in folder.glob(f"{stem}-*.jsonl"):
        match = PART_PATTERN.match(path.name)
        if match is not None and match["stem"] == stem:
            found.append((int(match["number"]), path))
    return [path for _, path in sorted(found)]


def exported_ids(folder: Path, stem: str = "requests") -> set[str]:
    """The ``custom_id`` of every line of the finished parts in ``folder``."""
    ids: set[str] = set()
    for part in _parts(folder, stem):
        for number, line in enumerate(part.read_bytes().splitlines(), start=1):
            try:
                ids.add(str(json.loads(line)["custom_id"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{part}:{number}: not a batch request line ({exc})") from None
    return ids


def _to_export(scope: BatchScope, cache: JudgmentStore, exported: set[str], again: bool, report: ExportReport) -> Iterator[tuple[BatchKey, ChatRequest]]:  # fmt: skip
    """The keys to write, in prefix order, each prompt's runs together; counts what is skipped."""
    stored = cache.lookup(scope.model, scope.sampling.key())
    for sha, request in scope.by_sha.items():
        for run in range(scope.n_runs):
            row = stored.get((sha, run))
            if row is not None and (row["answered"] or int(row["attempts"]) >= MAX_ATTEMPTS):
                report.already_judged += 1
                continue
            key = scope.key(sha, run)
            if key.custom_id in exported and not again:
                report.already_exported += 1
                continue
            yield key, request


class _PartWriter:
    """Writes lines into numbered parts under the limits, each renamed into place when whole."""

    def __init__(self, folder: Path, stem: str, limits: BatchLimits, report: ExportReport):
        self.folder, self.stem, self.limits, self.report = folder, stem, limits, report
        existing = _parts(folder, stem)
        self.number = int(PART_PATTERN.match(existing[-1].name)["number"]) if existing else 0  # type: ignore[index]
        self.lines: list[bytes] = []
        self.size = 0

    def add(self, line: bytes) -> None:
        if len(line) > self.limits.bytes:
            raise ValueError(f"one request line is {len(line)} bytes, above the file limit of {self.limits.bytes}")
        if self.lines and (len(self.lines) >= self.limits.requests or self.size + len(line) > self.limits.bytes):
            self.flush()
        self.lines.append(line)
        self.size += len(line)

    def flush(self) -> None:
        if not self.lines:
            return
        self.number += 1
        final = self.folder / f"{self.stem}-{self.number:04d}.jsonl"
        partial = self.folder / f".{final.name}.partial"
        with partial.open("wb") as handle:
            handle.writelines(self.lines)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, final)
        self.report.written += len(self.lines)
        self.report.files.append(final)
        self.lines, self.size = [], 0


def export_batch(
    folder: Path,
    scope: BatchScope,
    cache: JudgmentStore,
    batch_format: BatchFormat,
    limits: BatchLimits = OPENAI_LIMITS,
    stem: str = "requests",
    again: bool = False,
) -> ExportReport:
    """Write the partition's missing ``(prompt, run)`` requests into ``folder/<stem>-NNNN.jsonl``.

    Skips keys the cache answered (or gave up on) and keys a finished part in ``folder`` already
    holds, so an interrupted or repeated export continues where it stopped; ``again`` exports the
    exported keys still unanswered once more (a result file's failed lines, non-answers).
    """
    folder.mkdir(parents=True, exist_ok=True)
    for leftover in folder.glob(f".{stem}-*.jsonl.partial"):
        leftover.unlink()  # an interrupted export's unfinished part
    report = ExportReport()
    writer = _PartWriter(folder, stem, limits, report)
    for key, request in _to_export(scope, cache, exported_ids(folder, stem), again, report):
        writer.add(request_line(key, batch_format.body(request, scope.sampling, key.run)))
    writer.flush()
    return report


def parse_result_line(
    line: bytes | str, scope: BatchScope, batch_format: BatchFormat
) -> tuple[BatchKey, Completion | None]:
    """The key and completion of one OpenAI-Batch result line (``None``: the provider's request failed).

    Raises ``ValueError`` (saying why) for a line that is not JSON, names another partition or an
    unknown prompt or run, or holds a successful response without a chat completion.
    """
    from argassets.platform.judging.engines.openai_compat import response_label_probs

    record = json.loads(line)
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    key = BatchKey.parse(record.get("custom_id"))
    if (key.model, key.sampling_key) != (scope.model, scope.sampling.key()):
        raise ValueError(f"custom_id belongs to {key.model} / sampling {key.sampling_key}, not this partition")
    request = scope.by_sha.get(key.prompt_sha256)
    if request is None or not 0 <= key.run < scope.n_runs:
        raise ValueError(f"custom_id names a prompt or run this partition does not ask ({key.custom_id})")
    response = record.get("response") or {}
    if record.get("error") or response.get("status_code") != 200:
        return key, None
    body: Any = response.get("body")
    try:
        text = body["choices"][0]["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ValueError("response body holds no chat completion (choices[0].message)") from None
    stamp = _timestamp(body.get("created"))
    seed = batch_format.seed(request, scope.sampling, key.run)
    answered = not is_non_answer(text)
    probs = response_label_probs(body, request.choices) if answered else None
    return key, Completion(text, key.run, seed, 0.0, stamp, stamp, answered=answered, label_probs=probs)


def _timestamp(created: Any) -> str:
    from datetime import UTC, datetime

    if isinstance(created, int | float):
        return datetime.fromtimestamp(created, UTC).isoformat(timespec="microseconds")
    return ""


@dataclass
class ImportReport:
    """What an import stored, and what it left."""

    stored: int = 0
    already_answered: int = 0
    failed_by_provider: int = 0

    def describe(self) -> str:
        return (
            f"{self.stored} completions stored, {self.already_answered} already answered in the cache (kept), "
            f"{self.failed_by_provider} failed at the provider (not stored: export with again to ask them)"
        )


def import_batch_results(
    files: Iterable[Path], scope: BatchScope, cache: JudgmentStore, batch_format: BatchFormat
) -> ImportReport:
    """Store every good result line of ``files`` in the cache, then raise on the bad ones.

    A key the cache holds an answer for keeps it (the first answer stands); a cached non-answer is
    replaced, with one more attempt. Raises :class:`BatchResultError` naming ``file:line`` of each
    line that does not parse (a cut-off last line, a line of another partition), after storing the rest.
    """
    report, problems = ImportReport(), []
    sampling_key = scope.sampling.key()
    for path in files:
        items: list[tuple[str, Completion]] = []
        with Path(path).open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    key, completion = parse_result_line(line, scope, batch_format)
                except ValueError as exc:
                    problems.append(f"{path}:{number}: {exc}")
                    continue
                if completion is None:
                    report.failed_by_provider += 1
                else:
                    items.append((key.prompt_sha256, completion))
        report.stored += _store(cache, scope.model, sampling_key, batch_format.backend, items, report)
    if problems:
        raise BatchResultError(problems, report.stored)
    return report


def _store(
    cache: JudgmentStore, model: str, sampling_key: str, backend: str, items: list[tuple[str, Completion]], report: ImportReport
) -> int:  # fmt: skip
    """Store one file's completions: new keys, and cached non-answers asked again."""
    items = list({(sha, c.run): (sha, c) for sha, c in reversed(items)}.values())  # a key twice: its first line
    stored = cache.fetch(model, sampling_key, [(sha, c.run) for sha, c in items])
    again = {item: int(row["attempts"]) for item, row in stored.items() if not row["answered"]}
    report.already_answered += sum(1 for row in stored.values() if row["answered"])
    fresh = [(sha, c) for sha, c in items if (sha, c.run) not in stored or (sha, c.run) in again]
    return len(cache.store(model, sampling_key, backend, fresh, None, again)) if fresh else 0
