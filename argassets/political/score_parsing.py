"""Parsing a model's political-position answer into a score (0-100) or NA."""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ParsedScore:
    """One parsed answer: a score 0-100, NA, or invalid (see the module docstring)."""

    score: float | None
    is_na: bool
    is_valid: bool

    @classmethod
    def invalid(cls) -> ParsedScore:
        return cls(score=None, is_na=False, is_valid=False)

    @classmethod
    def na(cls) -> ParsedScore:
        return cls(score=None, is_na=True, is_valid=True)

    @classmethod
    def of(cls, value: int) -> ParsedScore:
        return cls(score=float(value), is_na=False, is_valid=True)


_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)
_OBJECT = re.compile(r"\{[^{}]*\}")
_INTEGER = re.compile(r"^[+]?\d+$")


def _value_to_parsed(value: object) -> ParsedScore:
    """A ``Score`` value: an integer 0-100 (int, integral float, or digit string), or ``"NA"``."""
    if isinstance(value, bool) or value is None:
        return ParsedScore.invalid()
    if isinstance(value, int):
        return ParsedScore.of(value) if 0 <= value <= 100 else ParsedScore.invalid()
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and 0 <= value <= 100:
            return ParsedScore.of(int(value))
        return ParsedScore.invalid()
    if isinstance(value, str):
        text = value.strip().strip("\"'\u201c\u201d\u2018\u2019").strip()
        if text.upper() == "NA":
            return ParsedScore.na()
        if _INTEGER.match(text):
            number = int(text)
            return ParsedScore.of(number) if 0 <= number <= 100 else ParsedScore.invalid()
    return ParsedScore.invalid()


def _object_to_parsed(text: str) -> ParsedScore | None:
    """Parse a JSON (or Python-literal, as in the prompt's template) object with a ``Score`` key."""
    value: object
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(value, dict):
        return None
    keys = [key for key in value if isinstance(key, str) and key.strip().lower() == "score"]
    if len(keys) != 1:
        return None
    return _value_to_parsed(value[keys[0]])


def parse_score(text: str | None) -> ParsedScore:
    """Parse one model answer into a score 0-100, NA, or invalid.

    Accepted, after stripping whitespace and one Markdown code fence:

    - a JSON object with one ``Score`` key (any case), also in the Python-literal spelling of the
      prompt's own template (``{'Score' : 45}``); its value an integer 0-100 (an integral float
      or a digit string count as that integer) or ``"NA"``;
    - exactly one such object inside other text (a model that adds a preamble);
    - the bare answer itself: ``45`` or ``NA``.

    Everything else is invalid: out-of-range or fractional numbers, several objects, prose,
    empty text, ``N/A`` and other spellings. Invalid answers are never guessed.

    Parameters
    ----------
    text
        The raw model output (``None`` is invalid).

    Returns
    -------
    ParsedScore
    """
    if text is None:
        return ParsedScore.invalid()
    candidate = text.strip()
    fenced = _FENCE.match(candidate)
    if fenced:
        candidate = fenced.group(1).strip()
    if not candidate:
        return ParsedScore.invalid()
    if candidate.startswith("{"):
        parsed = _object_to_parsed(candidate)
        if parsed is not None:
            return parsed
    bare = _value_to_parsed(candidate)
    if bare.is_valid:
        return bare
    objects = [found for found in (_object_to_parsed(m) for m in _OBJECT.findall(candidate)) if found is not None]
    if len(objects) == 1:
        return objects[0]
    return ParsedScore.invalid()
