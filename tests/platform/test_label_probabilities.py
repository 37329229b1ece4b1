"""Label probabilities read at the label position (argassets/platform/label_probabilities.py)."""

from __future__ import annotations

import math

import pytest

from argassets.platform.label_probabilities import (
    TokenCandidates,
    choice_probabilities,
    label_candidates,
    label_distribution,
)
from argassets.platform.pairwise.labels import LABELS


def _log(p: float) -> float:
    return math.log(p)


def test_a_bare_label_counts_every_token_that_starts_a_label() -> None:
    top = {"A": _log(0.5), "B": _log(0.2), "T": _log(0.1), "Tie": _log(0.05), "The": _log(0.1), "Ti": _log(0.01)}
    raw = label_candidates(top, LABELS)
    assert raw == pytest.approx({"A": 0.5, "B": 0.2, "Tie": 0.16})
    distribution = label_distribution(raw, LABELS)
    assert distribution is not None
    assert distribution.mass == pytest.approx(0.86)
    assert distribution.probabilities == pytest.approx((0.5 / 0.86, 0.2 / 0.86, 0.16 / 0.86))


def test_the_label_inside_json_is_read_after_the_emitted_tokens_prefix() -> None:
    steps = [
        TokenCandidates('{"', {'{"': 0.0}),
        TokenCandidates("label", {"label": 0.0}),
        TokenCandidates('":', {'":': 0.0}),
        TokenCandidates(' "B', {' "B': _log(0.6), ' "A': _log(0.3), ' "': _log(0.05), "B": _log(0.05)}),
        TokenCandidates('"}', {'"}': 0.0}),
    ]
    assert choice_probabilities(steps, LABELS) == pytest.approx({"A": 0.3, "B": 0.6, "Tie": 0.0})


def test_after_a_reasoning_the_last_label_is_read_and_words_are_not_labels() -> None:
    steps = [
        TokenCandidates("Both", {"Both": 0.0}),
        TokenCandidates(" are", {" are": 0.0}),
        TokenCandidates(" fine", {" fine": 0.0}),
        TokenCandidates(":", {":": 0.0}),
        TokenCandidates(" Tie", {" Tie": _log(0.7), " B": _log(0.2), " But": _log(0.05), " A.": _log(0.05)}),
    ]
    assert choice_probabilities(steps, LABELS) == pytest.approx({"A": 0.05, "B": 0.2, "Tie": 0.7})


def test_no_label_or_no_mass_gives_none() -> None:
    assert choice_probabilities([TokenCandidates("maybe", {"maybe": 0.0})], LABELS) is None
    assert label_distribution(None, LABELS) is None
    assert label_distribution({"A": 0.0, "B": 0.0, "Tie": 0.0}, LABELS) is None
