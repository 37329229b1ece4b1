"""The judging path's shortcuts keep every stored and returned value what it was without them.

A baseline judges hundreds of thousands of completions in ``run-default``: the prompt hash is
computed once per request, label probabilities are encoded and decoded once per distinct value,
and a completion already marked right is not copied. None of this may change a value.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

from argassets.platform.judging.incremental import with_answered
from argassets.platform.judging.interface import ChatRequest, Completion, messages_sha256
from argassets.platform.storage.judgment_cache.codec import decode_label_probs, encode_label_probs


def _reference_encoding(label_probs: dict) -> str:
    return json.dumps({str(k): float(v) for k, v in label_probs.items()}, sort_keys=True, separators=(",", ":"))


def test_prompt_hash_is_computed_once_and_follows_a_replaced_message() -> None:
    request = ChatRequest(key="k", system="Judge.", user="A or B?")
    assert request.prompt_sha256 == messages_sha256("Judge.", "A or B?")
    assert "prompt_sha256" in vars(request)  # kept on the request after the first use
    changed = replace(request, user="B or A?")
    assert changed.prompt_sha256 == messages_sha256("Judge.", "B or A?") != request.prompt_sha256
    assert changed == ChatRequest(key="k", system="Judge.", user="B or A?")  # equality ignores the cached hash


def test_label_probabilities_encode_as_canonical_json_every_time() -> None:
    cases = [
        {"A": 1 / 3, "B": 1 / 3, "Tie": 1 / 3},
        {"Tie": 1.0, "A": 0.0, "B": 0.0},
        {"A": -0.0, "B": 1.0},  # equal to 0.0 but written differently: not mixed up in the memo
        {"A": 0.0, "B": 1.0},
        {"A": math.nan, "B": math.inf},
        {1: 0.5, "1": 0.25},
    ]
    for _ in range(2):  # the second pass answers from the memo
        for probs in cases:
            assert encode_label_probs(probs) == _reference_encoding(probs)
    assert encode_label_probs({"A": -0.0}) != encode_label_probs({"A": 0.0})
    assert encode_label_probs(None) is None


def test_decoded_label_probabilities_are_a_fresh_dictionary_each_time() -> None:
    stored = encode_label_probs({"A": 0.2, "B": 0.5, "Tie": 0.3})
    first = decode_label_probs(stored)
    assert first == {"A": 0.2, "B": 0.5, "Tie": 0.3}
    assert first is not None
    first["A"] = 99.0  # a caller changing its copy changes nobody else's
    assert decode_label_probs(stored) == {"A": 0.2, "B": 0.5, "Tie": 0.3}
    assert decode_label_probs(None) is None


def test_a_completion_is_copied_only_when_its_answered_flag_changes() -> None:
    answer = Completion("A", 0, 1, 0.0, "t0", "t1")
    assert with_answered(answer) is answer
    empty = Completion("  ", 0, 1, 0.0, "t0", "t1")
    marked = with_answered(empty)
    assert marked is not empty and marked.answered is False and marked.text == "  "
    flagged = Completion("A", 0, 1, 0.0, "t0", "t1", answered=False)
    assert with_answered(flagged) is flagged
    truthy = Completion("A", 0, 1, 0.0, "t0", "t1", answered=1)  # type: ignore[arg-type]
    assert with_answered(truthy).answered is True
