"""Do an engine's seeded draws follow its own label probabilities? (marker ``sampling_distribution``)

Shared by the distribution tests of every real engine: the real Study A zero-shot prompts, the
label a one-token draw starts, and one chi-square test over several prompts (``scipy.stats.chisquare``
on the prompts' label counts side by side, one degree of freedom per prompt and label beyond the
first). A category expected fewer than 5 times is pooled with the next smallest of its prompt, as
the test's approximation asks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import chisquare

from argassets.argument_quality.corpus import find_corpus_files, load_corpus
from argassets.argument_quality.prompts import render_prompts
from argassets.platform.judging.interface import ChatRequest
from argassets.platform.pairwise.labels import LABELS

#: Prompts and draws per prompt of a distribution test: 2,000 draws in all.
N_PROMPTS = 4
DRAWS_PER_PROMPT = 500
#: The test's level: the draws follow the probabilities unless p < ALPHA.
ALPHA = 0.001
#: vLLM's KV-cache block on its CPU build (the CPU platform's default block size, in tokens).
VLLM_CPU_BLOCK_TOKENS = 128


def zero_shot_requests(data_dir: Path, n: int = N_PROMPTS) -> list[ChatRequest]:
    """The first ``n`` zero-shot Study A prompts of the logic dimension, as label requests."""
    arguments, comparisons = load_corpus(find_corpus_files(data_dir / "webis-argquality20"))
    chosen = comparisons[comparisons["dimension"] == "logic"].head(n)
    rendered = render_prompts(chosen, arguments, strategies=("zero",))
    return [ChatRequest(row.prompt_id, row.system, row.user, choices=LABELS) for row in rendered.itertuples()]


def block_aligned_requests(
    data_dir: Path,
    prompt_tokens: Callable[[ChatRequest], int],
    block: int = VLLM_CPU_BLOCK_TOKENS,
    n: int = N_PROMPTS,
    among: int = 200,
) -> list[ChatRequest]:
    """The first ``n`` zero-shot logic prompts (of the first ``among``) that end 1 or 2 tokens past a KV block.

    vLLM draws the ``n`` samples of a request as ``n`` child requests, and its prefix cache reuses
    whole blocks only: every child computes again the prompt's tokens past its last whole block (up
    to 127 on the CPU build). For these prompts that is 1 or 2 tokens, so 500 draws cost about one
    prefill. Chosen by token count alone, never by what the model answers.
    """
    chosen = [r for r in zero_shot_requests(data_dir, among) if 1 <= prompt_tokens(r) % block <= 2][:n]
    if len(chosen) < n:
        raise AssertionError(f"only {len(chosen)} of the first {among} zero-shot prompts end 1-2 tokens past a block")
    return chosen


def drawn_label(text: str) -> str:
    """The label a (possibly one-token) guided answer starts: ``T`` and ``Ti`` start ``Tie``."""
    matches = [label for label in LABELS if text and label.startswith(text)]
    if len(matches) != 1:
        raise AssertionError(f"draw {text!r} starts no single label")
    return matches[0]


@dataclass(frozen=True)
class DistributionTest:
    """The chi-square test of one engine's draws against its probabilities."""

    statistic: float
    p_value: float
    dof: int
    observed: list[list[int]]
    expected: list[list[float]]

    def describe(self) -> str:
        rows = [
            f"prompt {i}: drawn {o}, expected {[round(e, 1) for e in x]}"
            for i, (o, x) in enumerate(zip(self.observed, self.expected, strict=True))
        ]
        return f"chi2 = {self.statistic:.2f}, dof = {self.dof}, p = {self.p_value:.3g}; " + "; ".join(rows)


def _pooled(observed: np.ndarray, expected: np.ndarray) -> tuple[list[float], list[float]]:
    """Categories expected fewer than 5 times merged into the next smallest, smallest first."""
    obs, exp = list(map(float, observed)), list(map(float, expected))
    while len(exp) > 1 and min(exp) < 5.0:
        order = np.argsort(exp)
        small, other = int(order[0]), int(order[1])
        obs[other] += obs[small]
        exp[other] += exp[small]
        del obs[small], exp[small]
    return obs, exp


def distribution_test(draws: Sequence[Sequence[str]], probabilities: Sequence[Sequence[float]]) -> DistributionTest:
    """Chi-square of the labels drawn per prompt against ``n`` times each prompt's label probabilities."""
    observed_all, expected_all, categories = [], [], 0
    observed_rows, expected_rows = [], []
    for labels, p in zip(draws, probabilities, strict=True):
        counts = np.array([sum(label == name for label in labels) for name in LABELS], dtype=float)
        expected = np.asarray(p, dtype=float) / float(np.sum(p)) * len(labels)
        observed_rows.append([int(c) for c in counts])
        expected_rows.append([float(e) for e in expected])
        if np.any((expected < 1e-9) & (counts > 0)):
            # A label drawn that the probabilities rule out: no pooling may hide it.
            return DistributionTest(float("inf"), 0.0, 0, observed_rows, expected_rows)
        obs, exp = _pooled(counts, expected)
        observed_all += obs
        expected_all += exp
        categories += len(obs) - 1
    if categories < 1:
        raise AssertionError(f"every prompt has one label only: nothing to test ({expected_rows})")
    # chisquare's dof is k - 1 - ddof; the prompts' counts are fixed separately: dof = sum(k_i - 1).
    result = chisquare(observed_all, expected_all, ddof=len(observed_all) - 1 - categories)
    return DistributionTest(float(result.statistic), float(result.pvalue), categories, observed_rows, expected_rows)
