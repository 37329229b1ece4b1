"""A judge behind any OpenAI-compatible ``/chat/completions`` endpoint (vLLM serve, llama.cpp, ...)."""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any, Literal

import httpx

from argassets.platform.judging.interface import (
    ChatRequest,
    Completion,
    PartialBatchError,
    SamplingParams,
    run_seed,
    utc_now,
)
from argassets.platform.judging.label_probabilities import TokenCandidates, choice_probabilities
from argassets.platform.secrets import redact, split_credentials

__all__ = ["OpenAIJudge", "StructuredOutput", "choice_grammar", "label_schema"]

#: How labels are restricted on the endpoint:
#: ``json_schema`` (OpenAI ``response_format`` with a JSON schema; vLLM, llama.cpp >= b3xxx, OpenAI),
#: ``guided_choice`` (vLLM's ``guided_choice`` / ``guided_json`` extension),
#: ``json_object`` (llama-cpp-python's ``response_format: {"type": "json_object", "schema": ...}``),
#: ``grammar`` (a GBNF ``grammar`` field, llama.cpp servers), ``none`` (strict parsing only).
StructuredOutput = Literal["json_schema", "guided_choice", "json_object", "grammar", "none"]
STRUCTURED_OUTPUT_MODES: tuple[str, ...] = ("json_schema", "guided_choice", "json_object", "grammar", "none")

_log = logging.getLogger(__name__)
#: Client errors worth another attempt: the server timed the request out (408), or it conflicted
#: with another request in flight (409; some gateways answer it under load); rate limits (429).
#: Every 5xx is retried too.
RETRYABLE_STATUS: frozenset[int] = frozenset({408, 409, 429})


def label_schema(choices: Sequence[str]) -> dict[str, Any]:
    """JSON schema of ``{"label": <one of choices>}``."""
    return {
        "type": "object",
        "properties": {"label": {"type": "string", "enum": list(choices)}},
        "required": ["label"],
        "additionalProperties": False,
    }


def choice_grammar(choices: Sequence[str]) -> str:
    """A GBNF grammar whose only sentences are the choices."""
    return "root ::= " + " | ".join(json.dumps(choice) for choice in choices)


def response_label_probs(payload: Any, choices: Sequence[str] | None) -> dict[str, float] | None:
    """The label probabilities of a chat completion with ``logprobs``, or ``None``.

    OpenAI's format: ``choices[0].logprobs.content`` holds per generated token its ``token``,
    ``logprob`` and ``top_logprobs`` (``[{token, logprob}]``). A body without them gives ``None``.
    """
    try:
        content = payload["choices"][0]["logprobs"]["content"]
        steps = [
            TokenCandidates(
                str(entry["token"]),
                {
                    **{str(c["token"]): float(c["logprob"]) for c in entry.get("top_logprobs") or []},
                    str(entry["token"]): float(entry["logprob"]),
                },
            )
            for entry in content
        ]
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if not choices or not steps:
        return None
    return choice_probabilities(steps, choices)


class EndpointError(RuntimeError):
    """A request that failed for good (non-retryable status, or retries exhausted)."""


def _answer_of(response: httpx.Response) -> tuple[str, bool, Any]:
    """``(text, answered, payload)`` of a 200 response. A body that is empty, not JSON, or has no
    choices or no content is a non-answer: kept (invalid) and asked again at the next materialisation."""
    try:
        payload = response.json()
        text = payload["choices"][0]["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return response.text, False, None
    return text, bool(text.strip()), payload


class OpenAIJudge:
    """Chat completions from an OpenAI-compatible endpoint, one HTTP request per (request, run).

    Parameters
    ----------
    model_id
        The ``model`` field sent to the endpoint.
    base_url
        Endpoint root, e.g. ``http://127.0.0.1:8000/v1``; requests go to ``{base_url}/chat/completions``.
    api_key
        Sent as ``Authorization: Bearer ...`` when given; never logged.
    max_concurrency
        Requests in flight at once.
    structured_output
        How labels / JSON are restricted (see :data:`StructuredOutput`).
    timeout_s
        Per-request timeout.
    max_retries
        Retries after the first attempt for 408, 409, 429, 5xx, timeouts and connection errors.
    backoff_s, backoff_max_s
        Delay before retry ``k`` is ``min(backoff_max_s, backoff_s * 2**k)`` times a jitter in [0.5, 1].
    transport
        An ``httpx`` transport (tests).
    server_sampling_defaults
        Send only the OpenAI API's sampling fields (a hosted API refuses the others); the server's
        own defaults then apply to ``top_k``, ``min_p`` and ``repetition_penalty``.
    """

    backend = "openai"
    is_baseline = False

    def __init__(
        self,
        model_id: str,
        base_url: str,
        api_key: str | None = None,
        max_concurrency: int = 8,
        structured_output: StructuredOutput = "json_schema",
        timeout_s: float = 120.0,
        max_retries: int = 6,
        backoff_s: float = 0.5,
        backoff_max_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        server_sampling_defaults: bool = False,
    ):
        if structured_output not in STRUCTURED_OUTPUT_MODES:
            raise ValueError(
                f"unknown structured_output {structured_output!r}; expected one of {STRUCTURED_OUTPUT_MODES}"
            )
        self.model_id = model_id
        # Credentials in the URL go as basic auth, so no URL this judge logs or raises holds them.
        clean_url, credentials = split_credentials(base_url)
        self.base_url = clean_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.max_concurrency = max(1, int(max_concurrency))
        self.structured_output = structured_output
        self.server_sampling_defaults = server_sampling_defaults
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self._api_key = api_key or None
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._client = httpx.Client(
            headers=headers,
            auth=httpx.BasicAuth(*credentials) if credentials else None,
            timeout=httpx.Timeout(timeout_s),
            transport=transport,
            limits=httpx.Limits(max_connections=self.max_concurrency, max_keepalive_connections=self.max_concurrency),
        )
        self._jitter = random.Random(0)
        self._jitter_lock = threading.Lock()
        self.requests_sent = 0
        self.retries = 0
        self._count_lock = threading.Lock()

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIJudge(model_id={self.model_id!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        self._client.close()

    def _scrub(self, text: str) -> str:
        return redact(text.replace(self._api_key, "***") if self._api_key else text)

    def request_body(self, request: ChatRequest, sampling: SamplingParams, run: int) -> dict[str, Any]:
        """The JSON body sent for one request and run."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": request.messages,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
            "presence_penalty": sampling.presence_penalty,
            "frequency_penalty": sampling.frequency_penalty,
        }
        if not self.server_sampling_defaults:
            # Outside the OpenAI API, read by vLLM and llama.cpp servers: stated so that no server
            # default (a generation config, llama.cpp's top_k 40 and min_p 0.05) truncates the draws.
            # "No top-k" is 0 for both vLLM and llama.cpp's server.
            body["top_k"] = max(0, sampling.top_k)
            body["min_p"] = sampling.min_p
            body["repetition_penalty"] = sampling.repetition_penalty  # vLLM's name
            body["repeat_penalty"] = sampling.repetition_penalty  # llama.cpp's (its server's default: 1.1)
        if sampling.logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = int(sampling.logprobs)
        seed = run_seed(sampling.seed, request.prompt_sha256, run)
        if seed is not None:
            body["seed"] = seed
        mode = self.structured_output
        if request.choices:
            if mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "verdict", "strict": True, "schema": label_schema(request.choices)},
                }
            elif mode == "guided_choice":
                # vLLM >= 0.12 reads `structured_outputs` and silently ignores `guided_choice`
                # (output NOT constrained); older servers read `guided_choice` and ignore the other.
                body["guided_choice"] = list(request.choices)
                body["structured_outputs"] = {"choice": list(request.choices)}
            elif mode == "json_object":
                body["response_format"] = {"type": "json_object", "schema": label_schema(request.choices)}
            elif mode == "grammar":
                body["grammar"] = choice_grammar(request.choices)
        elif request.json_schema is not None:
            if mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "strict": True, "schema": request.json_schema},
                }
            elif mode == "guided_choice":
                body["guided_json"] = request.json_schema
                body["structured_outputs"] = {"json": request.json_schema}
            elif mode in ("json_object", "grammar"):
                body["response_format"] = {"type": "json_object", "schema": request.json_schema}
        return body

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        with self._jitter_lock:
            jitter = 0.5 + 0.5 * self._jitter.random()
        delay = min(self.backoff_max_s, self.backoff_s * (2**attempt)) * jitter
        if retry_after:
            try:
                delay = max(delay, min(float(retry_after), self.backoff_max_s))
            except ValueError:
                pass
        return delay

    def _post(self, request: ChatRequest, sampling: SamplingParams, run: int) -> Completion:
        body = self.request_body(request, sampling, run)
        requested_at = utc_now()
        last_problem = ""
        for attempt in range(self.max_retries + 1):
            started = time.perf_counter()
            retry_after = None
            try:
                with self._count_lock:
                    self.requests_sent += 1
                response = self._client.post(self.url, json=body)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last_problem = f"{type(exc).__name__}"
            else:
                if response.status_code == 200:
                    text, answered, payload = _answer_of(response)
                    return Completion(
                        text=text,
                        run=int(run),
                        seed=body.get("seed"),
                        latency_s=time.perf_counter() - started,
                        requested_at=requested_at,
                        completed_at=utc_now(),
                        answered=answered,
                        label_probs=response_label_probs(payload, request.choices) if answered else None,
                    )
                status = response.status_code
                last_problem = f"HTTP {status}: {self._scrub(response.text[:300])}"
                if status not in RETRYABLE_STATUS and status < 500:
                    raise EndpointError(f"{self.url}: request {request.key!r} run {run} rejected with {last_problem}")
                retry_after = response.headers.get("retry-after")
            if attempt < self.max_retries:
                with self._count_lock:
                    self.retries += 1
                delay = self._delay(attempt, retry_after)
                _log.warning(
                    "%s: %s for request %r run %d; retry %d/%d in %.2f s",
                    self.url,
                    last_problem,
                    request.key,
                    run,
                    attempt + 1,
                    self.max_retries,
                    delay,
                )
                time.sleep(delay)
        raise EndpointError(
            f"{self.url}: request {request.key!r} run {run} failed after {self.max_retries + 1} attempts "
            f"({last_problem})"
        )

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        runs = list(runs)
        results: dict[tuple[int, int], Completion] = {}
        tasks = [(i, j) for i in range(len(requests)) for j in range(len(runs))]
        error: BaseException | None = None
        with ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="openai-judge") as pool:
            futures = {pool.submit(self._post, requests[i], sampling, runs[j]): (i, j) for i, j in tasks}
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for future in pending:
                future.cancel()
            for future in list(done) + [f for f in pending if not f.cancelled()]:
                try:
                    results[futures[future]] = future.result()
                except BaseException as exc:  # re-raised below with what finished
                    error = error or exc
        if error is not None:
            finished = {
                i: [results[(i, j)] for j in range(len(runs))]
                for i in range(len(requests))
                if all((i, j) in results for j in range(len(runs)))
            }
            raise PartialBatchError(str(error), finished) from error
        return [[results[(i, j)] for j in range(len(runs))] for i in range(len(requests))]
