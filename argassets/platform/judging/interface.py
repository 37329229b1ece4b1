"""Judging, independent of Dagster and of any engine: chat requests, sampling, completions, judges."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from argassets.platform.study import ImportKeys


def utc_now() -> str:
    """The current time as an ISO-8601 UTC timestamp with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def request_seed(base_seed: int | None, prompt_sha256: str) -> int | None:
    """A per-prompt seed derived from the base seed and the prompt hash (reproducible, < 2**31).

    Every prompt gets its own: with one seed for all prompts, every prompt of a run would draw the
    same random number and their labels would move together.
    """
    if base_seed is None:
        return None
    digest = hashlib.sha256(f"{base_seed}:{prompt_sha256}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def run_seed(base_seed: int | None, prompt_sha256: str, run: int) -> int | None:
    """The seed run ``run`` of a prompt is drawn with: :func:`request_seed` ``+ run``."""
    seed = request_seed(base_seed, prompt_sha256)
    return None if seed is None else seed + int(run)


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

    @cached_property
    def prompt_sha256(self) -> str:
        """SHA-256 of the canonical JSON of the chat messages (see :func:`messages_sha256`).

        Computed once per request (the judging path asks for it several times per request); a
        frozen request's messages never change, so the cached digest stays right.
        """
        return messages_sha256(self.system, self.user)


#: The sampling knobs that leave the model's distribution whole, each engine's "off" value aside:
#: no top-k (``-1``; llama.cpp spells it ``0``), no min-p, neutral penalties.
FULL_DISTRIBUTION_KNOBS: dict[str, float | int] = {
    "top_k": -1,
    "min_p": 0.0,
    "repetition_penalty": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
}


@dataclass(frozen=True)
class SamplingParams:
    """Decoding parameters shared by every request of one judging call.

    ``seed`` is the base seed; backends draw run ``r`` of a prompt with :func:`run_seed` (a seed
    per prompt and run) and report it in :attr:`Completion.seed`. Every backend sends every
    knob, so no engine default (vLLM's generation config, llama.cpp's ``top_k`` 40 and ``min_p``
    0.05) truncates the distribution; the defaults are the full distribution
    (:data:`FULL_DISTRIBUTION_KNOBS`). ``logprobs``: how many top log-probabilities per generated
    token a backend asks for, to keep the label probabilities (``None``: none); it changes no draw.
    """

    temperature: float
    top_p: float = 1.0
    seed: int | None = None
    max_tokens: int = 8
    top_k: int = -1
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logprobs: int | None = None

    def __post_init__(self) -> None:
        if self.top_k == 0 or self.top_k < -1:
            raise ValueError(f"top_k must be -1 (off) or >= 1, got {self.top_k}")
        if not 0.0 <= self.min_p < 1.0:
            raise ValueError(f"min_p must be in [0, 1), got {self.min_p}")
        if self.repetition_penalty <= 0.0:
            raise ValueError(f"repetition_penalty must be > 0, got {self.repetition_penalty}")
        if self.logprobs is not None and self.logprobs < 1:
            raise ValueError(f"logprobs must be >= 1 or None, got {self.logprobs}")

    def knobs(self) -> dict[str, float | int]:
        """The truncation and penalty knobs, as sent (:data:`FULL_DISTRIBUTION_KNOBS` by default)."""
        return {
            "top_k": int(self.top_k),
            "min_p": float(self.min_p),
            "repetition_penalty": float(self.repetition_penalty),
            "presence_penalty": float(self.presence_penalty),
            "frequency_penalty": float(self.frequency_penalty),
        }

    def truncated_knobs(self) -> dict[str, float | int]:
        """The knobs that differ from the full distribution (empty for the protocol's sampling)."""
        return {name: value for name, value in self.knobs().items() if value != FULL_DISTRIBUTION_KNOBS[name]}

    def key(self) -> str:
        """A stable short hash (16 hex characters) of the parameters, part of the cache key.

        Knobs at their full-distribution value are left out, so the key of the protocol's sampling
        is the one it had before the knobs were named (docs/judgments.md, "Sampling knobs"); a
        truncated configuration has a key of its own. ``logprobs`` changes no draw and is left out.
        """
        payload = _canonical_json(
            {
                "temperature": float(self.temperature),
                "top_p": float(self.top_p),
                "seed": self.seed,
                "max_tokens": int(self.max_tokens),
                **self.truncated_knobs(),
            }
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    def as_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            **self.knobs(),
        }


@dataclass(frozen=True)
class Completion:
    """One answer of a judge to one request in one run.

    ``answered`` is ``False`` when the backend got no answer at all (an empty or unparsable
    response body, no choices); ``text`` then keeps what came back, for diagnosis. Such a
    completion, or one with empty text, is a non-answer (:func:`is_non_answer`): the cache keeps it
    (invalid in the table) with its attempt count and it is asked again at the next
    materialisation, until an answer arrives or the attempts run out (docs/judgments.md). Text the
    study cannot parse (prose, two labels, a score out of range) is an answer, never asked again:
    it is the model's judgment, counted as invalid, and re-asking until it parses would bias the
    labels and hide the invalid rate.
    """

    text: str
    run: int
    seed: int | None
    latency_s: float
    requested_at: str
    completed_at: str
    answered: bool = True
    #: Raw probability of each allowed label at the label position
    #: (:func:`argassets.platform.judging.label_probabilities.choice_probabilities`); ``None`` when the
    #: backend gave no log-probabilities or the answer holds no label.
    label_probs: Mapping[str, float] | None = None


def is_non_answer(text: str | None, answered: bool = True) -> bool:
    """Whether a completion is a non-answer: no judgment at all, so never a final one.

    The one definition. A non-answer is a completion flagged by its backend (``answered=False``:
    an empty or unparsable response body, no choices) or one with empty or whitespace-only text.
    Text the study cannot parse is not a non-answer: it is the model's (invalid) judgment.
    """
    return not answered or text is None or not text.strip()


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

    def close(self) -> None:
        """Free what the judge holds (an engine, a model, HTTP connections); safe to call twice."""
        ...


@dataclass(frozen=True)
class JudgeSettings:
    """A deployment's run-time settings of the judges; each engine reads those that concern it.

    ``environ`` (default ``os.environ``) is where endpoint URLs and keys are looked up when the judge
    is built; ``data_dir`` (default the published-data folder) is where relative import paths resolve;
    ``import_keys`` are the key columns of the entry's studies (what a tidy import file may hold).
    """

    openai_structured_output: str = "json_schema"
    openai_timeout_s: float = 120.0
    openai_max_retries: int = 6
    llama_threads: int | None = None
    environ: Mapping[str, str] | None = None
    data_dir: Path | None = None
    import_keys: Sequence[ImportKeys] = ()


@runtime_checkable
class PromptTokenizer(Protocol):
    """Counts the prompt tokens of requests as a model sees them (its chat template included)."""

    @property
    def description(self) -> str:
        """How the counts were made, for the estimate's report (e.g. ``tokenizer of x.gguf (llama.cpp)``)."""
        ...

    def count(self, requests: Sequence[ChatRequest]) -> list[int]:
        """Tokens of each request's prompt, in request order."""
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
    #: ``False`` for a non-answer (:func:`is_non_answer`); ``attempts``: how often its key was asked.
    answered: bool = True
    attempts: int = 1
    #: As :attr:`Completion.label_probs`, as stored.
    label_probs: Mapping[str, float] | None = None
