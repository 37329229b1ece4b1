"""``argassets estimate`` from the floor: the prefill the engine must compute, not the raw prompt tokens."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from argassets.argument_quality.corpus import find_corpus_files, load_corpus
from argassets.argument_quality.prompts import render_prompts, select_few_shot_examples
from argassets.platform.judging.engines.llama_cpp_backend import find_gguf
from argassets.platform.judging.engines.vllm_model import ensure_converted
from argassets.platform.judging.interface import ChatRequest
from argassets.platform.judging.prefill_estimate import PrefillEstimate, estimate_prefill
from argassets.platform.judging.prefill_floor import PromptPrefixes, ReuseModel, prefill_tokens
from argassets.platform.judging.prefix_order import prefix_order
from argassets.platform.judging.prompt_token_ids import llama_cpp_tokenizer, tokenize_prompts
from argassets.platform.operations.estimate import estimate_partition, measured_prefill_rate
from argassets.platform.registry.model_entry import model_entry
from argassets.studies import load_registry


def _requests(data_dir: Path) -> list[ChatRequest]:
    arguments, comparisons = load_corpus(find_corpus_files(data_dir / "webis-argquality20"))
    chosen = comparisons[comparisons["topic_id"] == 1].groupby("dimension").head(3)
    rendered = render_prompts(chosen, arguments, examples=select_few_shot_examples(comparisons, arguments))
    return [ChatRequest(r.prompt_id, r.system, r.user) for r in rendered.itertuples()]


def test_the_reuse_model_follows_the_engine() -> None:
    registry = load_registry()
    assert registry.get("smollm2-135m").prefix_reuse() == ReuseModel("previous_prompt")
    assert registry.get("smollm2-135m-vllm").prefix_reuse() == ReuseModel("blocks", 128)
    gpu = next(e for e in registry.models if e.backend == "vllm" and getattr(e, "device", "") == "gpu")
    assert gpu.prefix_reuse() == ReuseModel("blocks", 16)
    assert registry.get("random").prefix_reuse() is None


def test_the_floor_of_the_prompts_to_send_in_prefix_order(shared_data_dir: Path) -> None:
    requests = _requests(shared_data_dir)  # 3 comparisons x 3 dimensions x 3 strategies
    entry = load_registry().get("smollm2-135m")
    estimate = estimate_prefill(entry, requests, 3)
    assert estimate is not None
    gguf = find_gguf(entry.gguf_path, entry.gguf_package)
    tokenizer = llama_cpp_tokenizer(gguf)
    tokenized = tokenize_prompts(tokenizer, requests)
    tokenizer.close()
    order = np.asarray(prefix_order(requests))
    assert estimate.counts == tokenized.lengths.tolist() and estimate.prompt_tokens == 3 * sum(estimate.counts)
    # llama.cpp decodes a prompt once for all its runs: the floor is one pass in prefix order.
    assert estimate.floor == prefill_tokens(PromptPrefixes(tokenized), order, ReuseModel("previous_prompt"))
    assert estimate.floor < 0.5 * estimate.prompt_tokens
    ensure_converted(gguf)
    blocks = estimate_prefill(load_registry().get("smollm2-135m-vllm"), requests, 3)
    assert blocks is not None and "every block of 128 tokens" in blocks.describe()
    assert (
        estimate_prefill(model_entry(name="g", backend="openai", model_id="g", studies=["political"]), requests, 3)
        is None
    )


def test_time_comes_from_the_floor_when_a_prefill_rate_was_measured() -> None:
    requests = [ChatRequest(f"k{i}", "s", f"u{i}") for i in range(4)]
    entry = load_registry().get("smollm2-135m")
    floor = PrefillEstimate([100] * 4, 1200, 300, "only the previous prompt's prefix", "tok")
    rate = measured_prefill_rate(
        [{"prefill_computed": 500.0, "elapsed_s": 10.0}, {"completions_sent": 3.0, "elapsed_s": 5.0}]
    )
    assert rate == pytest.approx(50.0)
    cached = (12, 0, requests)
    timed = estimate_partition(entry, "argument_quality", requests, 3, cached, (2.0, "declared"), 8, (floor.counts, "tok"), (floor, rate, "measured"))  # fmt: skip
    assert timed.seconds == pytest.approx(300 / 50.0) and timed.prefill_floor == 300
    text = timed.describe()
    assert (
        "time from the floor, not the raw prompt tokens" in text and "prefill the engine computes at least: 300" in text
    )
    untimed = estimate_partition(entry, "argument_quality", requests, 3, cached, (2.0, "declared"), 8, (floor.counts, "tok"), (floor, None, "none"))  # fmt: skip
    assert untimed.seconds == pytest.approx(12 / 2.0) and "completions/s (declared)" in untimed.describe()
