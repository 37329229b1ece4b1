"""A partition's work before it runs: cache state, tokens, time, Slurm time limit, budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from argassets.platform.judging.engines.llama_cpp_backend import find_gguf
from argassets.platform.judging.engines.vllm_model import ensure_converted
from argassets.platform.judging.interface import ChatRequest, Completion
from argassets.platform.judging.prompt_tokens import APPROXIMATION, approx_tokens, prompt_token_counts
from argassets.platform.operations.estimate import (
    STARTUP_S,
    BudgetExceeded,
    check_budget,
    estimate_partition,
    measured_throughput,
    missing_completions,
    time_limit_minutes,
)
from argassets.platform.registry.entries import load_registry
from argassets.platform.registry.model_entry import model_entry
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache


def _requests() -> list[ChatRequest]:
    # Four requests, one of them a duplicate prompt (sent once): 3 distinct prompts.
    texts = ["a" * 400, "b" * 800, "c" * 1200, "a" * 400]
    return [ChatRequest(key=f"k{i}", system="s" * 4, user=text) for i, text in enumerate(texts)]


def _completion(run: int, text: str = "A") -> Completion:
    return Completion(text=text, run=run, seed=run, latency_s=0.1, requested_at="t", completed_at="t")


def test_cached_answers_are_counted_and_non_answers_are_still_to_send(tmp_path: Path) -> None:
    requests = _requests()
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    sha_a, sha_b = requests[0].prompt_sha256, requests[1].prompt_sha256
    cache.store(
        "m@1", "samp", "openai", [(sha_a, _completion(0)), (sha_a, _completion(1)), (sha_b, _completion(0, ""))]
    )
    cache.store("other@1", "samp", "openai", [(requests[2].prompt_sha256, _completion(0))])
    needed, cached, todo = missing_completions(cache, "m@1", "samp", requests, n_runs=2)
    cache.close()
    assert (needed, cached) == (6, 2)  # 3 distinct prompts x 2 runs; b's empty text is a non-answer
    assert [r.key for r in todo] == ["k1", "k2"]  # a is complete; b and c have runs to send


def test_estimate_from_a_declared_throughput_with_time_limit_gpu_hours_and_cost() -> None:
    requests = _requests()
    entry = model_entry(
        name="gpt", backend="openai", model_id="g", studies=["argument_quality"], throughput=2.0,
        price={"input_per_mtok": 1.0, "output_per_mtok": 4.0},
    )  # fmt: skip
    estimate = estimate_partition(entry, "argument_quality", requests, 2, (6, 2, requests[1:3]), (2.0, "declared"), 16)
    assert estimate.to_send == 4 and estimate.seconds == pytest.approx(2.0)
    # (4 + 800) / 4 = 201 and (4 + 1200) / 4 = 301 tokens per prompt, two runs each.
    assert estimate.prompt_tokens == (201 + 301) * 2
    assert estimate.usd == pytest.approx((1004 * 1.0 + 4 * 16 * 4.0) / 1e6)
    assert estimate.gpu_hours is None  # no GPUs
    assert estimate.time_limit_minutes == time_limit_minutes(2.0) == int((2.0 * 1.5 + STARTUP_S) // 60) + 1
    tags = estimate.as_tags()
    assert tags["argassets/estimate-cached"] == "2" and tags["argassets/estimate-completions"] == "6"
    assert "characters / 4" in estimate.describe()


def test_without_any_throughput_there_is_no_time_and_no_limit() -> None:
    entry = model_entry(name="r", backend="random", studies=["argument_quality"])
    estimate = estimate_partition(entry, "argument_quality", _requests(), 3, (9, 0, _requests()[:3]), (None, "none"), 8)
    assert estimate.seconds is None and estimate.time_limit_minutes is None
    assert "time: unknown (none)" in estimate.describe()


def test_measured_throughput_ignores_runs_that_sent_nothing() -> None:
    history = [
        {"completions_sent": 100, "elapsed_s": 50},
        {"completions_sent": 0, "elapsed_s": 3},
        {"completions_sent": 20, "elapsed_s": 10},
    ]
    assert measured_throughput(history) == pytest.approx(120 / 60)
    assert measured_throughput([{"completions_sent": 0, "elapsed_s": 1}]) is None


def test_a_budget_refuses_an_estimate_above_it_and_names_the_variable() -> None:
    entry = model_entry(name="big", backend="vllm", model_id="m", gpus=4, studies=["argument_quality"])
    estimate = estimate_partition(entry, "argument_quality", _requests(), 1, (3, 0, _requests()[:3]), (0.001, "m"), 8)
    assert estimate.gpu_hours == pytest.approx(4 * 3 / 0.001 / 3600)
    check_budget(estimate, {})
    check_budget(estimate, {"ARGASSETS_BUDGET_GPU_HOURS": "4"})
    with pytest.raises(
        BudgetExceeded, match=r"big / argument_quality: estimated 3.33 GPU-hours exceeds the budget of 3"
    ):
        check_budget(estimate, {"ARGASSETS_BUDGET_GPU_HOURS": "3"})
    with pytest.raises(ValueError, match="ARGASSETS_BUDGET_GPU_HOURS='lots' is not a number"):
        check_budget(estimate, {"ARGASSETS_BUDGET_GPU_HOURS": "lots"})


def test_price_only_for_openai_entries() -> None:
    with pytest.raises(ValueError, match="'price' only applies to backend 'openai'"):
        model_entry(
            name="x", backend="random", studies=["political"], price={"input_per_mtok": 1, "output_per_mtok": 1}
        )


def _prompts() -> list[ChatRequest]:
    return [
        ChatRequest(key="p0", system="You judge arguments.", user="Which is more logical? A: tax. B: no tax."),
        ChatRequest(key="p1", system="", user="Give a left-right score from 0 to 100, or NA: 'Rich people pay more.'"),
    ]


def test_gguf_and_vllm_prompts_are_counted_with_the_models_own_tokenizer() -> None:
    registry = load_registry()
    gguf_entry, vllm_entry = registry.get("smollm2-135m"), registry.get("smollm2-135m-vllm")
    assert (gguf_entry.backend, vllm_entry.backend) == ("llama_cpp", "vllm")
    ensure_converted(find_gguf(vllm_entry.gguf_path, vllm_entry.gguf_package))  # what the vLLM entry loads
    by_llama, llama_method = prompt_token_counts(gguf_entry, _prompts())
    by_folder, folder_method = prompt_token_counts(vllm_entry, _prompts())
    assert "llama.cpp, vocab only" in llama_method and "(transformers)" in folder_method
    # One model, two tokenizer implementations, the same chat template: the same counts.
    assert by_llama == by_folder
    # The template's tokens are counted: more than the message text alone, and not chars / 4.
    assert all(n > 10 for n in by_llama) and by_llama != [approx_tokens(r) for r in _prompts()]
    estimate = estimate_partition(
        gguf_entry, "political", _prompts(), 5, (10, 0, _prompts()), (None, "none"), 32, (by_llama, llama_method)
    )
    assert estimate.prompt_tokens == sum(by_llama) * 5 and "llama.cpp" in estimate.describe()


def test_endpoints_fall_back_to_the_stated_approximation() -> None:
    entry = model_entry(name="gpt", backend="openai", model_id="g", studies=["political"])
    counts, method = prompt_token_counts(entry, _prompts())
    assert counts == [approx_tokens(r) for r in _prompts()] and method == APPROXIMATION
    with pytest.raises(ValueError, match="1 token counts for 2 requests"):
        estimate_partition(entry, "political", _prompts(), 1, (2, 0, _prompts()), (None, "none"), 8, ([3], method))
