"""Label probabilities read at the label position (argassets/platform/judging/label_probabilities.py)."""

from __future__ import annotations

import math

import pytest

from argassets.platform.judging.interface import CachedCompletion, ChatRequest, SamplingParams, run_seed
from argassets.platform.judging.label_probabilities import (
    TokenCandidates,
    choice_probabilities,
    draw_label,
    label_candidates,
    label_distribution,
)
from argassets.platform.judging.partition import probe_sampling, runs_from_probabilities
from argassets.platform.pairwise.labels import LABELS
from tests.sampling_distribution import distribution_test


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


def test_a_bare_label_answer_counts_no_label_followed_by_punctuation() -> None:
    # Guided choice could not draw "A." after a bare "A": it is no start of the answer's label.
    top = {"A": _log(0.3), "A.": _log(0.2), "B": _log(0.4), "T": _log(0.1)}
    assert choice_probabilities([TokenCandidates("A", top)], LABELS) == pytest.approx({"A": 0.3, "B": 0.4, "Tie": 0.1})
    # The same candidates after a reasoning: there "A." is the label A, ending the verdict.
    steps = [TokenCandidates("So", {"So": 0.0}), TokenCandidates(": ", {": ": 0.0}), TokenCandidates("A", top)]
    assert choice_probabilities(steps, LABELS) == pytest.approx({"A": 0.5, "B": 0.4, "Tie": 0.1})


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
    # a label cut after its first token (a one-token probe) keeps its probabilities
    cut = [TokenCandidates("T", {"T": _log(0.5), "A": _log(0.5)})]
    assert choice_probabilities(cut, LABELS) == pytest.approx({"A": 0.5, "B": 0.0, "Tie": 0.5})
    assert label_distribution(None, LABELS) is None
    assert label_distribution({"A": 0.0, "B": 0.0, "Tie": 0.0}, LABELS) is None


def test_draws_from_probabilities_are_seeded_and_follow_them() -> None:
    assert draw_label((0.2, 0.3, 0.5), LABELS, 7) == draw_label((0.2, 0.3, 0.5), LABELS, 7)
    draws = [draw_label((0.2, 0.3, 0.5), LABELS, seed) for seed in range(3000)]
    assert distribution_test([draws], [(0.2, 0.3, 0.5)]).p_value >= 0.001
    # The test can fail: the same draws against other probabilities, and a one-label (top_k 1) draw.
    assert distribution_test([draws], [(0.3, 0.3, 0.4)]).p_value < 0.001
    assert distribution_test([["Tie"] * 100], [(0.2, 0.3, 0.5)]).p_value < 0.001
    assert draw_label((0.0, 1.0, 0.0), LABELS, 1) == "B"
    # A label drawn that the probabilities rule out fails at once, whatever pooling would do.
    assert distribution_test([["A"] * 99 + ["Tie"]], [(0.5, 0.5, 0.0)]).p_value == 0.0


def test_probabilities_mode_draws_each_run_with_its_recorded_seed() -> None:
    requests = [ChatRequest(f"r{i}", "s", f"u{i}", choices=LABELS) for i in range(2)]
    sampling = SamplingParams(1.0, seed=4, max_tokens=16)
    probe = probe_sampling(sampling, requests)
    assert probe.max_tokens == 1 and probe.logprobs == 20 and probe.key() != sampling.key()
    with pytest.raises(ValueError, match="needs label requests"):
        probe_sampling(sampling, [ChatRequest("j", "s", "u", json_schema={"type": "object"})])
    probes = [
        CachedCompletion(
            "r0",
            0,
            "m",
            requests[0].prompt_sha256,
            probe.key(),
            "A",
            None,
            0.1,
            "t",
            "t",
            "vllm",
            False,
            label_probs={"A": 0.45, "B": 0.45, "Tie": 0.0},
        ),
        CachedCompletion(
            "r1", 0, "m", requests[1].prompt_sha256, probe.key(), "", None, 0.1, "t", "t", "vllm", False, answered=False
        ),
    ]
    runs = runs_from_probabilities(probes, requests, sampling, 3)
    assert [(c.key, c.run) for c in runs] == [("r0", 0), ("r0", 1), ("r0", 2), ("r1", 0), ("r1", 1), ("r1", 2)]
    assert [c.seed for c in runs[:3]] == [run_seed(4, requests[0].prompt_sha256, run) for run in range(3)]
    assert all(c.text in ("A", "B") for c in runs[:3]) and all(c.label_probs == probes[0].label_probs for c in runs[:3])
    assert [c.text for c in runs[:3]] == [draw_label((0.5, 0.5, 0.0), LABELS, c.seed) for c in runs[:3]]
    assert all(not c.answered and c.text == "" for c in runs[3:])
