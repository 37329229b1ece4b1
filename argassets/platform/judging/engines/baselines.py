"""Baseline judges: answers that need no model, labelled as baselines in every report."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from typing import Any

from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, utc_now
from argassets.platform.pairwise.labels import LABELS

__all__ = ["LongerWinsJudge", "RandomJudge", "random_instance"]


def random_instance(schema: dict[str, Any], rng: random.Random) -> Any:
    """A random value that satisfies a (small subset of) JSON schema.

    Supported: ``const``, ``enum``, ``anyOf``/``oneOf`` (a branch drawn uniformly), ``type`` as
    ``object`` (every property listed in ``required``, or every property when there is no
    ``required``), ``integer`` and ``number`` (``minimum``/``maximum``, default 0..100), ``string``,
    ``boolean``, ``null``, and a list of types (one drawn uniformly).
    """
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(list(schema["enum"]))
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            return random_instance(rng.choice(list(schema[combinator])), rng)
    kind = schema.get("type")
    if isinstance(kind, list):
        return random_instance({**schema, "type": rng.choice(kind)}, rng)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties", {})
        names = schema.get("required", list(properties))
        return {name: random_instance(properties.get(name, {}), rng) for name in names}
    if kind == "integer":
        low = int(schema.get("minimum", 0))
        high = int(schema.get("maximum", 100))
        return rng.randint(low, high)
    if kind == "number":
        low_f = float(schema.get("minimum", 0.0))
        high_f = float(schema.get("maximum", 100.0))
        return rng.uniform(low_f, high_f)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "string" or kind is None:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
    raise ValueError(f"random baseline: unsupported JSON schema type {kind!r}")


class RandomJudge:
    """Uniform random answers, deterministic per (seed, request key, run).

    A request with ``choices`` gets one of them; a request with a ``json_schema`` gets a random JSON
    instance of it (e.g. ``{"Score": 37}`` or ``{"Score": "NA"}``).
    """

    backend = "random"
    is_baseline = True
    #: Reads no prompt: the order it gets them in saves nothing (judging/prefix_order.py).
    prefix_order = False

    def __init__(self, seed: int = 0):
        self.seed = int(seed)

    def answer(self, request: ChatRequest, run: int) -> str:
        rng = random.Random(f"{self.seed}:{request.key}:{run}")
        if request.choices:
            return rng.choice(list(request.choices))
        if request.json_schema is not None:
            return json.dumps(random_instance(request.json_schema, rng), ensure_ascii=False)
        raise ValueError(f"random baseline: request {request.key!r} has neither choices nor a json_schema to draw from")

    def label_probabilities(self, request: ChatRequest) -> dict[str, float] | None:
        """The distribution every run is drawn from: uniform over the choices (``None`` without choices).

        Its label mass is 1: no probability goes to text outside the labels.
        """
        if not request.choices:
            return None
        return {choice: 1.0 / len(request.choices) for choice in request.choices}

    def close(self) -> None:
        """Nothing to free."""

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        out = []
        for request in requests:
            row = []
            probabilities = self.label_probabilities(request)
            for run in runs:
                started = time.perf_counter()
                at = utc_now()
                text = self.answer(request, run)
                latency = time.perf_counter() - started
                row.append(Completion(text, int(run), self.seed, latency, at, utc_now(), label_probs=probabilities))
            out.append(row)
        return out


class LongerWinsJudge:
    """The argument with more words wins; ``Tie`` on equal word counts (renamed options by position).

    Reads ``text_a`` and ``text_b`` from ``ChatRequest.context`` (the texts as presented, so a
    swapped presentation gets the swapped answer). Word count = whitespace-separated tokens, the
    corpus's own ``Text Length`` definition.
    """

    backend = "longer-wins"
    is_baseline = True
    #: Reads no prompt: the order it gets them in saves nothing (judging/prefix_order.py).
    prefix_order = False

    def answer(self, request: ChatRequest) -> str:
        try:
            text_a = request.context["text_a"]
            text_b = request.context["text_b"]
        except KeyError:
            raise ValueError(
                f"longer-wins baseline: request {request.key!r} has no text_a/text_b in its context"
            ) from None
        words_a, words_b = len(str(text_a).split()), len(str(text_b).split())
        answer = "A" if words_a > words_b else "B" if words_b > words_a else "Tie"
        if request.choices and len(request.choices) == len(LABELS) and answer not in request.choices:
            # Renamed options (e.g. 1/2/Tie) are given in the order first slot, second slot, tie.
            answer = request.choices[LABELS.index(answer)]
        if request.choices and answer not in request.choices:
            raise ValueError(f"longer-wins baseline: {answer!r} is not among the choices {request.choices}")
        return answer

    def label_probabilities(self, request: ChatRequest) -> dict[str, float] | None:
        """One-hot on :meth:`answer` over the choices (``None`` without choices); label mass 1."""
        return self._one_hot(request, self.answer(request))

    @staticmethod
    def _one_hot(request: ChatRequest, answer: str) -> dict[str, float] | None:
        if not request.choices:
            return None
        return {choice: float(choice == answer) for choice in request.choices}

    def close(self) -> None:
        """Nothing to free."""

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        out = []
        for request in requests:
            started = time.perf_counter()
            at = utc_now()
            text = self.answer(request)
            latency = time.perf_counter() - started
            done = utc_now()
            probabilities = self._one_hot(request, text)
            out.append([Completion(text, int(run), None, latency, at, done, label_probs=probabilities) for run in runs])
        return out
