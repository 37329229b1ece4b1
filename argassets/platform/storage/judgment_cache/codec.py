"""How a judgment is stored: the cache's columns (the key defined once for both backends) and the
encoding of a completion into a row and back."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from argassets.platform.judging.interface import Completion, is_non_answer, utc_now

#: The cache key: ``(name, SQLite type, PostgreSQL type)``. A lookup is per *scope* (the columns of
#: :data:`SCOPE_COLUMNS`); within a scope an *item* is :data:`ITEM_COLUMNS`. Change the key here.
KEY_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("model", "TEXT", "TEXT"),
    ("prompt_sha256", "TEXT", "TEXT"),
    ("sampling_key", "TEXT", "TEXT"),
    ("run", "INTEGER", "INTEGER"),
)
SCOPE_COLUMNS: tuple[str, ...] = ("model", "sampling_key")
ITEM_COLUMNS: tuple[str, ...] = ("prompt_sha256", "run")
#: What is stored for a key, in the order of :meth:`JudgmentStore.lookup`'s dictionaries.
VALUE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("text", "TEXT NOT NULL", "TEXT NOT NULL"),
    ("seed", "INTEGER", "BIGINT"),
    ("latency_s", "REAL NOT NULL", "DOUBLE PRECISION NOT NULL"),
    ("requested_at", "TEXT NOT NULL", "TEXT NOT NULL"),
    ("completed_at", "TEXT NOT NULL", "TEXT NOT NULL"),
    ("backend", "TEXT NOT NULL", "TEXT NOT NULL"),
    ("answered", "INTEGER NOT NULL", "BOOLEAN NOT NULL"),
    ("attempts", "INTEGER NOT NULL", "INTEGER NOT NULL"),
    ("label_probs", "TEXT", "TEXT"),
)
#: Columns added after the first release, with the value existing rows get: ``(SQLite, PostgreSQL)``.
#: ``answered`` is then set from the stored text (empty means non-answer; whether the backend
#: flagged a row was not kept, so :func:`is_non_answer` can judge only that); others are answers.
#: ``label_probs`` (JSON of label -> raw probability) is NULL for rows stored before it existed.
ADDED_COLUMNS: dict[str, tuple[str, str]] = {
    "answered": ("1", "TRUE"),
    "attempts": ("1", "1"),
    "label_probs": ("NULL", "NULL"),
}
VALUE_NAMES = tuple(name for name, _, _ in VALUE_COLUMNS)
KEY_NAMES = tuple(name for name, _, _ in KEY_COLUMNS)
assert set(SCOPE_COLUMNS) | set(ITEM_COLUMNS) == set(KEY_NAMES)
#: The columns of a stored row, in the order of ``NewRow.values``.
STORED_COLUMNS: tuple[str, ...] = (*KEY_NAMES, *VALUE_NAMES, "stored_at")


class CachedRow(TypedDict):
    """A stored completion, by value column (see :data:`VALUE_COLUMNS`)."""

    text: str
    seed: int | None
    latency_s: float
    requested_at: str
    completed_at: str
    backend: str
    answered: bool
    attempts: int
    label_probs: str | None


assert tuple(CachedRow.__annotations__) == VALUE_NAMES
Row = CachedRow
#: ``(prompt_sha256, run)``.
Item = tuple[str, int]
#: Keys asked again, each with the attempts of the non-answer the caller saw.
Again = Mapping[Item, int]


#: Recent encodings and decodings of label probabilities: a baseline's few distributions repeat on
#: every one of its hundreds of thousands of rows, and JSON each time cost a quarter of its judging.
_ENCODED: dict[tuple[tuple[str, str], ...], str] = {}
_DECODED: dict[str, dict[str, float]] = {}
_MEMO_SIZE = 4096


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[key] = value


def encode_label_probs(label_probs: Mapping[str, float] | None) -> str | None:
    """The stored form of :attr:`Completion.label_probs`: canonical JSON, or ``None``."""
    if label_probs is None:
        return None
    # Keyed by each value's repr, what JSON writes: equal keys give the very same text (even -0.0, nan).
    key = tuple((str(k), repr(float(v))) for k, v in label_probs.items())
    encoded = _ENCODED.get(key)
    if encoded is None:
        encoded = json.dumps({str(k): float(v) for k, v in label_probs.items()}, sort_keys=True, separators=(",", ":"))
        _remember(_ENCODED, key, encoded)
    return encoded


def decode_label_probs(stored: str | None) -> dict[str, float] | None:
    """:attr:`Completion.label_probs` from its stored form (a fresh dictionary every call)."""
    if stored is None:
        return None
    decoded = _DECODED.get(stored)
    if decoded is None:
        decoded = {str(k): float(v) for k, v in json.loads(stored).items()}
        _remember(_DECODED, stored, decoded)
    return dict(decoded)


def is_final(row: Row, seen: int) -> bool:
    """Whether a stored row is final for a caller: anything but the very non-answer it asks again."""
    return bool(row["answered"]) or int(row["attempts"]) != seen


def typed_row(values: Sequence[Any]) -> Row:
    text, seed, latency_s, requested_at, completed_at, backend, answered, attempts, label_probs = values
    return CachedRow(
        text=text,
        seed=seed,
        latency_s=latency_s,
        requested_at=requested_at,
        completed_at=completed_at,
        backend=backend,
        answered=bool(answered),
        attempts=int(attempts),
        label_probs=label_probs,
    )


#: Whitespace as ``str.strip`` sees it in ASCII: text made only of these is empty.
BLANK_CODES = (32, 9, 10, 11, 12, 13)


@dataclass(frozen=True)
class NewRow:
    """A completion about to be stored: its key, its value and when it was stored."""

    model: str
    prompt_sha256: str
    sampling_key: str
    run: int
    value: CachedRow
    stored_at: str

    @property
    def item(self) -> Item:
        return (self.prompt_sha256, self.run)

    def column(self, name: str) -> Any:
        """The value of one column of the ``completions`` table."""
        if name in VALUE_NAMES:
            return cast(Mapping[str, Any], self.value)[name]
        return getattr(self, name)

    def values(self) -> tuple[Any, ...]:
        """Every column of the ``completions`` table: :data:`STORED_COLUMNS`, in that order."""
        value = cast(Mapping[str, Any], self.value)
        return (
            self.model,
            self.prompt_sha256,
            self.sampling_key,
            self.run,
            *(value[name] for name in VALUE_NAMES),
            self.stored_at,
        )


def new_rows(
    model: str, sampling_key: str, backend: str, items: Iterable[tuple[str, Completion]], again: Again | None
) -> list[NewRow]:
    again = again or {}
    stored_at = utc_now()
    seen: set[Item] = set()
    rows = []
    for sha, c in items:
        item = (sha, int(c.run))
        if item in seen:
            continue
        seen.add(item)
        value = CachedRow(
            text=c.text,
            seed=None if c.seed is None else int(c.seed),
            latency_s=float(c.latency_s),
            requested_at=c.requested_at,
            completed_at=c.completed_at,
            backend=backend,
            answered=not is_non_answer(c.text, c.answered),
            attempts=again.get(item, 0) + 1,
            label_probs=encode_label_probs(c.label_probs),
        )
        rows.append(NewRow(model, sha, sampling_key, int(c.run), value, stored_at))
    # One order for every writer: concurrent transactions lock rows in the same sequence.
    rows.sort(key=lambda row: row.item)
    return rows
