"""The OpenAI-compatible judge against a scripted local server: bodies, concurrency, retries, secrets."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.incremental import judge_incrementally
from argassets.platform.judging.interface import ChatRequest, PartialBatchError, SamplingParams, run_seed
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache
from tests.judgments_http import Reply, ScriptedServer, chat_reply

SECRET = "sk-test-do-not-leak-123"


def _requests(n: int) -> list[ChatRequest]:
    return [
        ChatRequest(f"k{i}", "system text", f"Argument A: a{i}\nArgument B: b{i}", choices=LABELS) for i in range(n)
    ]


def _judge(server: ScriptedServer, **kwargs) -> OpenAIJudge:
    options = {"max_concurrency": 4, "backoff_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 5.0}
    options.update(kwargs)
    return OpenAIJudge("test-model", f"{server.url}/v1", api_key=SECRET, **options)


def test_request_bodies_and_headers():
    with ScriptedServer(lambda seen: chat_reply('{"label": "B"}')) as server:
        judge = _judge(server)
        requests = _requests(2)
        out = judge.complete(requests, SamplingParams(1.0, top_p=0.95, seed=10, max_tokens=16), [0, 1, 2])
    assert [[c.text for c in row] for row in out] == [['{"label": "B"}'] * 3] * 2
    # Each prompt's runs have seeds of their own: one seed per run for all prompts would make every
    # prompt of a run draw the same random number.
    for request, row in zip(requests, out, strict=True):
        assert [c.seed for c in row] == [run_seed(10, request.prompt_sha256, run) for run in range(3)]
    assert out[0][0].seed != out[1][0].seed
    assert len(server.seen) == 6
    seen = server.seen[0]
    assert seen.path == "/v1/chat/completions" and seen.method == "POST"
    assert seen.headers["authorization"] == f"Bearer {SECRET}"
    body = seen.json()
    assert body["model"] == "test-model"
    assert body["messages"][0] == {"role": "system", "content": "system text"}
    assert body["temperature"] == 1.0 and body["top_p"] == 0.95 and body["max_tokens"] == 16
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["label"]["enum"] == ["A", "B", "Tie"]
    bodies = {(b["messages"][1]["content"], b["seed"]) for b in (s.json() for s in server.seen)}
    assert len(bodies) == 6


@pytest.mark.parametrize(
    ("mode", "field", "value"),
    [
        ("guided_choice", "guided_choice", ["A", "B", "Tie"]),
        ("grammar", "grammar", 'root ::= "A" | "B" | "Tie"'),
        (
            "json_object",
            "response_format",
            {
                "type": "json_object",
                "schema": {
                    "type": "object",
                    "properties": {"label": {"type": "string", "enum": ["A", "B", "Tie"]}},
                    "required": ["label"],
                    "additionalProperties": False,
                },
            },
        ),
    ],
)
def test_structured_output_modes(mode, field, value):
    judge = OpenAIJudge("m", "http://127.0.0.1:9/v1", structured_output=mode)
    body = judge.request_body(_requests(1)[0], SamplingParams(1.0), 0)
    assert body[field] == value
    none = OpenAIJudge("m", "http://127.0.0.1:9/v1", structured_output="none").request_body(
        _requests(1)[0], SamplingParams(1.0), 0
    )
    assert not {"guided_choice", "grammar", "response_format"} & set(none)
    assert "seed" not in none


def test_bounded_concurrency():
    with ScriptedServer(lambda seen: Reply(**{**chat_reply("A").__dict__, "delay_s": 0.05})) as server:
        judge = _judge(server, max_concurrency=3)
        judge.complete(_requests(10), SamplingParams(1.0), [0, 1])
    assert len(server.seen) == 20
    assert 2 <= server.max_in_flight <= 3


def test_retries_on_429_500_and_timeouts(caplog: pytest.LogCaptureFixture):
    attempts: dict[str, int] = {}
    lock = threading.Lock()

    def handler(seen):
        key = seen.json()["messages"][1]["content"]
        with lock:
            attempts[key] = attempts.get(key, 0) + 1
            n = attempts[key]
        if key.endswith("a0\nArgument B: b0"):
            return Reply(429, b"slow down", {"Retry-After": "0"}) if n <= 2 else chat_reply("A")
        if key.endswith("a1\nArgument B: b1"):
            return Reply(500, f"internal error, token {SECRET}".encode()) if n == 1 else chat_reply("B")
        if key.endswith("a2\nArgument B: b2"):
            return Reply(**{**chat_reply("Tie").__dict__, "delay_s": 4.0}) if n == 1 else chat_reply("Tie")
        return chat_reply("A")

    caplog.set_level(logging.DEBUG)
    with ScriptedServer(handler) as server:
        judge = _judge(server, timeout_s=1.5)
        out = judge.complete(_requests(4), SamplingParams(1.0), [0])
    assert [row[0].text for row in out] == ["A", "B", "Tie", "A"]
    assert attempts == {
        "Argument A: a0\nArgument B: b0": 3,
        "Argument A: a1\nArgument B: b1": 2,
        "Argument A: a2\nArgument B: b2": 2,
        "Argument A: a3\nArgument B: b3": 1,
    }
    assert len(server.seen) == 8
    assert judge.requests_sent == 8 and judge.retries == 4
    assert "HTTP 429" in caplog.text and "HTTP 500" in caplog.text and "ReadTimeout" in caplog.text
    assert SECRET not in caplog.text


def test_gives_up_and_keeps_what_finished(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    def handler(seen):
        if seen.json()["messages"][1]["content"].endswith("b1"):
            return Reply(503, f"down {SECRET}".encode())
        return chat_reply("A")

    cache = JudgmentCache(tmp_path / "cache.sqlite")
    with ScriptedServer(handler) as server:
        judge = _judge(server, max_retries=2, max_concurrency=1)
        with pytest.raises(PartialBatchError) as info:
            judge_incrementally(judge, "api", _requests(3), SamplingParams(1.0), 1, cache, batch_size=3)
    message = str(info.value)
    assert "failed after 3 attempts" in message and "HTTP 503" in message
    assert SECRET not in message and SECRET not in caplog.text
    stored = cache.count("api")
    assert stored >= 1  # k0 (and k2, if the worker picked it up before the cancel) finished and was stored
    sent_before = len(server.seen)
    # resume: only what is missing goes out
    with ScriptedServer(lambda seen: chat_reply("B")) as server2:
        results = judge_incrementally(_judge(server2), "api", _requests(3), SamplingParams(1.0), 1, cache, batch_size=3)
    assert len(results) == 3
    assert len(server2.seen) == 3 - stored
    assert sum(not r.from_cache for r in results) == 3 - stored
    assert sent_before == 3 + stored  # k1 three times, each stored request once


def test_client_errors_are_not_retried():
    for status in (400, 401, 404, 422):
        with ScriptedServer(lambda seen, status=status: Reply(status, b"bad request")) as server:
            judge = _judge(server)
            with pytest.raises(PartialBatchError, match=f"rejected with HTTP {status}"):
                judge.complete(_requests(1), SamplingParams(1.0), [0])
        assert len(server.seen) == 1


@pytest.mark.parametrize("status", [408, 409])
def test_request_timeout_and_conflict_are_retried(status: int, caplog: pytest.LogCaptureFixture):
    attempts = []

    def handler(seen):
        attempts.append(seen)
        return Reply(status, b"try again") if len(attempts) <= 2 else chat_reply("B")

    with ScriptedServer(handler) as server:
        judge = _judge(server, max_concurrency=1)
        out = judge.complete(_requests(1), SamplingParams(1.0), [0])
    assert out[0][0].text == "B"
    assert len(server.seen) == 3 and judge.retries == 2
    assert f"HTTP {status}" in caplog.text


def test_unparseable_answers_are_kept_raw():
    with ScriptedServer(lambda seen: chat_reply("I think both are fine")) as server:
        out = _judge(server).complete(_requests(1), SamplingParams(1.0), [0])
    assert out[0][0].text == "I think both are fine"
