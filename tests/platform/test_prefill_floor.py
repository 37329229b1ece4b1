"""The prefill floor: the fast computation against a direct simulation, the fast tokenization against
tokenizing whole prompts, and the issue's table on Study A's full ``aq_prompts`` (marker ``slow``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from argassets.argument_quality.corpus import find_corpus_files, load_corpus
from argassets.argument_quality.prompts import render_prompts
from argassets.platform.judging.engines.llama_cpp_backend import find_gguf
from argassets.platform.judging.engines.vllm_model import ensure_converted
from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, utc_now
from argassets.platform.judging.prefill_floor import PromptPrefixes, ReuseModel, prefill_tokens
from argassets.platform.judging.prefill_meter import PrefillCounts, PrefillMeter, prefill_metadata
from argassets.platform.judging.prefix_order import prefix_order
from argassets.platform.judging.prompt_token_ids import (
    ChatTokenizer,
    TokenizedPrompts,
    llama_cpp_tokenizer,
    tokenize_prompts,
    transformers_tokenizer,
)
from argassets.studies import load_registry

MODELS = [ReuseModel("previous_prompt"), ReuseModel("blocks", 1), ReuseModel("blocks", 2), ReuseModel("blocks", 4)]


def _simulated(prompts: list[list[int]], order: Sequence[int], model: ReuseModel, copies: int) -> int:
    """Prompt tokens computed, prompt by prompt: a set of every cached block prefix, or the previous prompt."""
    computed, blocks, previous = 0, set(), None
    for index in order:
        tokens = prompts[index]
        n = len(tokens)
        if model.kind == "previous_prompt":
            shared = 0
            for a, b in zip(previous or [], tokens, strict=False):
                if a != b:
                    break
                shared += 1
            computed += n - min(shared, n - 1)
            previous = tokens
            continue
        size, hits = model.block, 0
        while hits < (n - 1) // size and tuple(tokens[: (hits + 1) * size]) in blocks:
            hits += 1
        computed += n - size * hits + (copies - 1) * (n - size * ((n - 1) // size))
        blocks.update(tuple(tokens[: (k + 1) * size]) for k in range(n // size))
    return computed


@pytest.mark.parametrize("seed", range(40))
def test_fast_floor_equals_a_direct_simulation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Heads end in a special token (99) that no tail holds, as after a chat template's system text.
    heads = [np.append(rng.integers(0, 3, rng.integers(0, 6)), 99).astype(np.int32) for _ in range(3)]
    tails = [rng.integers(0, 3, rng.integers(1, 14)).astype(np.int32) for _ in range(7)]
    n = int(rng.integers(2, 16))
    pairs = np.stack([rng.integers(0, 3, n), rng.integers(0, 7, n)], axis=1)
    prompts = TokenizedPrompts(heads, tails, pairs, "synthetic")
    prefixes = PromptPrefixes(prompts)
    tokens = [prompts.tokens(i).tolist() for i in range(n)]
    # A permutation, and an order that sends some prompts again.
    for order in (rng.permutation(n), rng.integers(0, n, 2 * n)):
        for model in MODELS:
            for copies in (1, 3):
                assert prefill_tokens(prefixes, order, model, copies) == _simulated(tokens, order, model, copies)
    # Sorted by tokens, only the previous prompt is needed: the previous-prompt floor reaches block size 1's.
    best = prefill_tokens(prefixes, prefixes.sorted, ReuseModel("previous_prompt"))
    assert best == prefill_tokens(prefixes, prefixes.sorted, ReuseModel("blocks", 1))


def test_a_control_the_simulation_can_tell_apart() -> None:
    prompts = TokenizedPrompts([np.array([9], np.int32)], [np.array([1, 2, 3, 4], np.int32), np.array([1, 2, 3, 5], np.int32)], np.array([[0, 0], [0, 1], [0, 0]]), "t")  # fmt: skip
    prefixes = PromptPrefixes(prompts)
    order = np.array([0, 1, 2])
    # 5 + (5 - 4) + (5 - 4): the second shares 4 tokens with the first; the third is the first again.
    assert prefill_tokens(prefixes, order, ReuseModel("previous_prompt")) == 7
    # Blocks of 2: whole blocks before the last token only (2 of 5), so 5 + 3 + 1 in prompts' terms.
    assert prefill_tokens(prefixes, order, ReuseModel("blocks", 2)) == 5 + 1 + 1
    assert prefill_tokens(prefixes, order, ReuseModel("blocks", 2), copies=3) == 7 + 3 * 2 * 1
    assert prefill_tokens(prefixes, order, ReuseModel("none"), copies=2) == 30


def _study_a_requests(data_dir: Path, per_dimension: int | None) -> list[ChatRequest]:
    arguments, comparisons = load_corpus(find_corpus_files(data_dir / "webis-argquality20"))
    chosen = comparisons if per_dimension is None else comparisons.groupby("dimension").head(per_dimension)
    from argassets.argument_quality.prompts import select_few_shot_examples

    rendered = render_prompts(chosen, arguments, examples=select_few_shot_examples(comparisons, arguments))
    return [ChatRequest(r.prompt_id, r.system, r.user) for r in rendered.itertuples()]


def _whole(tokenizer: ChatTokenizer, requests: Sequence[ChatRequest]) -> list[list[int]]:
    texts = [tokenizer.render(r.messages) for r in requests]
    return [list(ids) for ids in tokenizer.encode(texts, True)]


@pytest.fixture(scope="module")
def tokenizers() -> dict[str, ChatTokenizer]:
    registry = load_registry()
    gguf_entry, vllm_entry = registry.get("smollm2-135m"), registry.get("smollm2-135m-vllm")
    gguf = find_gguf(gguf_entry.gguf_path, gguf_entry.gguf_package)
    folder = ensure_converted(find_gguf(vllm_entry.gguf_path, vllm_entry.gguf_package))
    return {"llama_cpp": llama_cpp_tokenizer(gguf), "transformers": transformers_tokenizer(folder)}


@pytest.mark.parametrize("kind", ["llama_cpp", "transformers"])
def test_per_text_tokenization_equals_tokenizing_every_prompt_whole(
    kind: str, tokenizers: dict[str, ChatTokenizer], shared_data_dir: Path
) -> None:
    requests = _study_a_requests(shared_data_dir, 4)  # 4 comparisons x 3 dimensions x 3 strategies
    tokenizer = tokenizers[kind]
    prompts = tokenize_prompts(tokenizer, requests)
    assert prompts.method.endswith("per system and user text")
    assert len(prompts.heads) == 3 + 3 + len({r.system for r in requests if r.key.endswith(":few")})
    whole = _whole(tokenizer, requests)
    assert [prompts.tokens(i).tolist() for i in range(len(requests))] == whole
    assert prompts.lengths.tolist() == [len(ids) for ids in whole]


class _NoSpecialTemplate:
    """A template that joins the texts with a blank line: nothing splits them, so prompts go whole."""

    description = "characters"
    special_texts = ("<s>",)

    def render(self, messages: list[dict[str, str]]) -> str:
        return "<s>" + "\n\n".join(m["content"] for m in messages)

    def encode(self, texts: list[str], at_start: bool) -> list[list[int]]:
        return [[0 if text.startswith("<s>") else ord(text[0])] + [ord(c) for c in text[3 if text.startswith("<s>") else 1 :]] for text in texts]  # fmt: skip

    def close(self) -> None:
        """Nothing held."""


def test_a_template_without_a_special_token_between_the_texts_is_tokenized_whole() -> None:
    requests = [ChatRequest("a", "sys", "one"), ChatRequest("b", "sys", "two"), ChatRequest("c", "sys", "one")]
    tokenizer = _NoSpecialTemplate()
    prompts = tokenize_prompts(tokenizer, requests)
    assert prompts.method.endswith("whole prompts") and len(prompts.tails) == 2
    assert [prompts.tokens(i).tolist() for i in range(3)] == _whole(tokenizer, requests)


class _CountingJudge:
    backend = "counting"
    reuse_model = ReuseModel("previous_prompt")

    def __init__(self) -> None:
        self.prefill_counts = PrefillCounts(source="test")

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        self.prefill_counts = self.prefill_counts + PrefillCounts(10 * len(requests), 0)
        now = utc_now()
        return [[Completion("A", run, None, 0.0, now, now) for run in runs] for _ in requests]

    def close(self) -> None:
        """Nothing held."""


def test_meter_sets_the_engines_count_beside_the_floor_and_is_silent_for_judges_that_count_nothing(
    tokenizers: dict[str, ChatTokenizer], shared_data_dir: Path
) -> None:
    requests = _study_a_requests(shared_data_dir, 2)
    judge = _CountingJudge()
    meter = PrefillMeter(judge)
    meter.complete(requests[:5], SamplingParams(1.0), [0, 1, 2])
    meter.complete(requests[5:], SamplingParams(1.0), [0, 1, 2])
    metadata = prefill_metadata(meter, tokenizers["llama_cpp"])
    prefixes = PromptPrefixes(tokenize_prompts(tokenizers["llama_cpp"], requests))
    assert metadata["prefill_computed"] == 10 * len(requests)
    assert metadata["prefill_floor"] == prefill_tokens(
        prefixes, np.arange(len(requests)), ReuseModel("previous_prompt")
    )
    assert metadata["prefill_floor_best"] < metadata["prefill_floor"] < metadata["prefill_prompt_tokens"]
    silent = PrefillMeter(type("Plain", (), {"backend": "x", "complete": judge.complete, "close": judge.close})())
    silent.complete(requests, SamplingParams(1.0), [0])
    assert prefill_metadata(silent, tokenizers["llama_cpp"]) == {}


def _issue_row(prefixes: PromptPrefixes, requests: list[ChatRequest], rows: np.ndarray) -> list[float]:
    """Block 16, block 128 and previous prompt in table order, then the previous prompt in prefix order, in %."""
    raw = prefixes.lengths[rows].sum()
    text = rows[prefix_order([requests[i] for i in rows])]
    models = [ReuseModel("blocks", 16), ReuseModel("blocks", 128), ReuseModel("previous_prompt")]
    shares = [prefill_tokens(prefixes, rows, model) for model in models]
    shares.append(prefill_tokens(prefixes, text, ReuseModel("previous_prompt")))
    return [round(100.0 * s / raw, 1) for s in shares]


@pytest.mark.slow
def test_the_issues_floor_table_on_study_as_full_prompts(
    tokenizers: dict[str, ChatTokenizer], shared_data_dir: Path
) -> None:
    requests = _study_a_requests(shared_data_dir, None)
    assert len(requests) == 125_568
    started = time.perf_counter()
    prompts = tokenize_prompts(tokenizers["transformers"], requests)
    prefixes = PromptPrefixes(prompts)
    elapsed = time.perf_counter() - started
    strategy = np.array([r.key.rsplit(":", 1)[1] for r in requests])
    lengths = prompts.lengths
    assert round(lengths.sum() / 1e6, 1) == 104.1
    assert [round(lengths[strategy == s].sum() / 1e6, 1) for s in ("zero", "few", "cot")] == [17.6, 63.2, 23.3]
    # Every row sent, as the issue counted: block 16, block 128, previous prompt; previous prompt sorted.
    assert _issue_row(prefixes, requests, np.arange(len(requests))) == [24.4, 31.1, 44.6, 23.5]
    assert _issue_row(prefixes, requests, np.flatnonzero(strategy == "few")) == [13.5, 17.1, 24.6, 13.0]
    assert _issue_row(prefixes, requests, np.flatnonzero(strategy == "zero")) == [47.8, 61.1, 87.8, 46.1]
    print(f"tokenized {len(requests)} prompts ({lengths.sum()} tokens) and sorted them in {elapsed:.1f} s")
