"""A judge's free text read as one of the allowed labels (by default a pairwise verdict: A, B or Tie), or nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from argassets.platform.pairwise.labels import LABELS

_QUOTES = "\"'`*"


def parse_choice(text: str | None, choices: Sequence[str] = LABELS) -> str | None:
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
