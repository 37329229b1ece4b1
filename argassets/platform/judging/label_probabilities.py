"""The probability a judge gave each allowed label, read from the log-probabilities at the label's position."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from argassets.platform.judging.choice_parsing import parse_choice

__all__ = [
    "LabelDistribution",
    "TokenCandidates",
    "choice_probabilities",
    "draw_label",
    "label_candidates",
    "label_distribution",
]


@dataclass(frozen=True)
class TokenCandidates:
    """One generated token: its text and the engine's top candidates there (text -> log-probability)."""

    token: str
    top: Mapping[str, float]


@dataclass(frozen=True)
class LabelDistribution:
    """Renormalised label probabilities (in the order of the labels) and their raw summed mass."""

    probabilities: tuple[float, ...]
    mass: float


def _counts_for(rest: str, labels: Sequence[str], bare: bool = False) -> str | None:
    """The label a candidate's text (after the emitted token's pre-label part) starts, or ``None``.

    ``bare``: the answer is a label alone, so a label followed by punctuation counts for nothing.
    """
    if not rest:
        return None
    matches = []
    for label in labels:
        followed = not bare and rest.startswith(label) and not rest[len(label) :][:1].isalnum()
        if label.startswith(rest) or followed:
            matches.append(label)
    return matches[0] if len(matches) == 1 else None


def label_candidates(
    top: Mapping[str, float], labels: Sequence[str], before: str = "", bare: bool = False
) -> dict[str, float]:
    """Raw probability of each label among the candidates ``top`` of one position.

    ``before`` is the text the emitted token holds before the label; candidates not starting with
    it start no label. A candidate that could start two labels is counted for neither. ``bare``: the
    answer is a label alone (``A.`` counts for nothing).
    """
    raw = dict.fromkeys(labels, 0.0)
    for text, logprob in top.items():
        if not text.startswith(before) or logprob is None or math.isnan(logprob):
            continue
        label = _counts_for(text[len(before) :], labels, bare)
        if label is not None:
            raw[label] += math.exp(logprob)
    return raw


def _last_offset(text: str, label: str) -> int:
    """Where the last occurrence of ``label`` as a word starts in ``text`` (any case), or -1."""
    found = list(re.finditer(rf"(?<![0-9A-Za-z]){re.escape(label)}(?![0-9A-Za-z])", text, flags=re.IGNORECASE))
    return found[-1].start() if found else -1


def _label_position(tokens: Sequence[str], text: str, label: str) -> tuple[int, str] | None:
    """The index of the token where the last occurrence of ``label`` in ``text`` starts, and its pre-label part."""
    offset = _last_offset(text, label)
    if offset < 0:
        return None
    start = 0
    for index, token in enumerate(tokens):
        end = start + len(token)
        if start <= offset < end:
            return index, token[: offset - start]
        start = end
    return None


def choice_probabilities(steps: Sequence[TokenCandidates], labels: Sequence[str]) -> dict[str, float] | None:
    """Raw probability of each label at the label position of one generated answer, or ``None``.

    ``None`` when the answer holds no label (:func:`~argassets.platform.judging.choice_parsing.parse_choice`
    of the text, else the last label the text names), or the label is not where a token starts it.
    """
    tokens = [step.token for step in steps]
    text = "".join(tokens)
    label = parse_choice(text, labels)
    if label is None:
        named = [(_last_offset(text, choice), choice) for choice in labels]
        offset, label = max(named)
        if offset < 0:
            # A label cut by the token limit (``T`` of ``Tie``, a one-token probe) starts at the first token.
            cut = bool(steps) and _counts_for(steps[0].token, labels) is not None
            return label_candidates(steps[0].top, labels, bare=True) if cut else None
    position = _label_position(tokens, text, label)
    if position is None:
        return None
    index, before = position
    return label_candidates(steps[index].top, labels, before, bare=text in labels)


def label_distribution(raw: Mapping[str, float] | None, labels: Sequence[str]) -> LabelDistribution | None:
    """The renormalised probabilities of ``labels`` and their mass, or ``None`` (no probabilities, or none on a label)."""
    if raw is None:
        return None
    values = [float(raw.get(label, 0.0)) for label in labels]
    mass = sum(values)
    if not mass > 0.0:
        return None
    return LabelDistribution(tuple(value / mass for value in values), mass)


def draw_label(probabilities: Sequence[float], labels: Sequence[str], seed: int | None) -> str:
    """One label drawn from ``probabilities`` by a numpy ``Generator`` seeded with ``seed`` (one uniform)."""
    import numpy as np

    cumulative = np.cumsum(np.asarray(probabilities, dtype=float))
    uniform = np.random.default_rng(seed).random() * cumulative[-1]
    return labels[min(int(np.searchsorted(cumulative, uniform, side="right")), len(labels) - 1)]
