"""Batch files: bodies byte for byte what the live ``openai`` judge posts, split under the limits,
resumable, and results imported into the judgment cache (half live, half batch: one partition)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from argassets.platform.judging.batch_files import (
    BatchKey,
    BatchLimits,
    BatchResultError,
    BatchScope,
    export_batch,
    import_batch_results,
)
from argassets.platform.judging.engines.openai_batch import OpenAIBatchFormat
from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.incremental import judge_incrementally
from argassets.platform.judging.interface import ChatRequest, SamplingParams, run_seed
from argassets.platform.judging.prefix_order import prefix_key
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache
from tests.judgments_http import ScriptedServer, chat_reply

SAMPLING = SamplingParams(1.0, seed=7, max_tokens=16)
MODEL = "gpt@0123456789abcdef"


def _requests(n: int = 6) -> list[ChatRequest]:
    # Non-ASCII text, as in real arguments: the live client sends it unescaped.
    systems = ["Judge: which is more logical?", "Juge : lequel est le plus « logique » ?"]
    return [
        ChatRequest(f"k{i}", systems[i % 2], f"Argument A: naïve – “{i}”\nArgument B: {'x' * i}", choices=LABELS)
        for i in range(n)
    ]


def _lines(folder: Path) -> list[bytes]:
    return [line for part in sorted(folder.glob("requests-*.jsonl")) for line in part.read_bytes().splitlines()]


@pytest.mark.parametrize("mode", ["json_schema", "guided_choice", "grammar"])
def test_batch_bodies_are_the_bytes_the_live_judge_posts(tmp_path: Path, mode: str) -> None:
    requests = _requests()
    with ScriptedServer(lambda seen: chat_reply("A")) as server:
        judge = OpenAIJudge("gpt-x", f"{server.url}/v1", api_key="k", structured_output=mode, max_concurrency=2)  # type: ignore[arg-type]
        judge.complete(requests, SAMPLING, [0, 1, 2])
        judge.close()
        posted = {(tuple(json.dumps(s.json()["messages"]) for _ in [0]), s.json()["seed"]): s.body for s in server.seen}
    scope = BatchScope(MODEL, SAMPLING, 3, requests)
    report = export_batch(tmp_path, scope, JudgmentCache(tmp_path / "c.sqlite"), OpenAIBatchFormat(judge))
    assert report.written == 18 and report.files == [tmp_path / "requests-0001.jsonl"]
    lines = _lines(tmp_path)
    assert len(lines) == len(posted) == 18
    for line in lines:
        record = json.loads(line)
        assert (record["method"], record["url"]) == ("POST", "/v1/chat/completions")
        key = BatchKey.parse(record["custom_id"])
        assert (key.model, key.sampling_key) == (MODEL, SAMPLING.key())
        sent = posted[((json.dumps(record["body"]["messages"]),), record["body"]["seed"])]
        assert line.endswith(b',"body":' + sent + b"}")  # the live request's bytes, verbatim
        assert record["body"]["seed"] == run_seed(SAMPLING.seed, key.prompt_sha256, key.run)
    # Prefix order, each prompt's runs together.
    shas = [BatchKey.parse(json.loads(line)["custom_id"]).prompt_sha256 for line in lines]
    by_sha = {r.prompt_sha256: r for r in requests}
    assert [prefix_key(by_sha[s]) for s in shas[::3]] == sorted(prefix_key(r) for r in requests)


def _format() -> OpenAIBatchFormat:
    return OpenAIBatchFormat(OpenAIJudge("gpt-x", "http://127.0.0.1:9/v1", structured_output="json_schema"))


def test_parts_stay_under_the_limits(tmp_path: Path) -> None:
    scope = BatchScope(MODEL, SAMPLING, 3, _requests(10))
    one_line = len(_lines_of(tmp_path / "probe", scope)[0]) + 1
    limits = BatchLimits(requests=7, bytes=4 * one_line + 40)
    report = export_batch(tmp_path / "out", scope, JudgmentCache(tmp_path / "c.sqlite"), _format(), limits)
    sizes = [(len(p.read_bytes().splitlines()), p.stat().st_size) for p in report.files]
    assert report.written == 30 and sum(n for n, _ in sizes) == 30
    assert all(n <= 7 and size <= limits.bytes for n, size in sizes) and len(sizes) >= 30 / 5
    ids = [json.loads(line)["custom_id"] for line in _lines(tmp_path / "out")]
    assert len(ids) == len(set(ids)) == 30


def _lines_of(folder: Path, scope: BatchScope) -> list[bytes]:
    export_batch(folder, scope, JudgmentCache(folder.parent / "probe.sqlite"), _format())
    return _lines(folder)


class _Dying(OpenAIBatchFormat):
    """Renders ``left`` bodies, then fails: an export killed part-way."""

    def __init__(self, left: int):
        super().__init__(_format().judge)
        self.left = left

    def body(self, request: ChatRequest, sampling: SamplingParams, run: int) -> bytes:
        self.left -= 1
        if self.left < 0:
            raise KeyboardInterrupt
        return super().body(request, sampling, run)


def test_an_interrupted_export_continues_and_skips_what_is_judged(tmp_path: Path) -> None:
    requests = _requests(10)
    scope = BatchScope(MODEL, SAMPLING, 3, requests)
    cache = JudgmentCache(tmp_path / "c.sqlite")
    folder = tmp_path / "batch"
    limits = BatchLimits(requests=4, bytes=10**6)
    with pytest.raises(KeyboardInterrupt):
        export_batch(folder, scope, cache, _Dying(10), limits)
    assert len(_lines(folder)) == 8  # two whole parts; the third was cut and is not there
    # Meanwhile the first two prompts were judged live.
    judge_incrementally(_AnswerA(), MODEL, requests[:2], SAMPLING, 3, cache)
    report = export_batch(folder, scope, cache, _format(), limits)
    assert not list(folder.glob(".*partial"))
    ids = [json.loads(line)["custom_id"] for line in _lines(folder)]
    assert len(ids) == len(set(ids))
    judged = {scope.key(r.prompt_sha256, run).custom_id for r in requests[:2] for run in range(3)}
    expected = {scope.key(r.prompt_sha256, run).custom_id for r in requests for run in range(3)}
    assert set(ids) | judged == expected
    assert report.already_judged == 6 and report.written + report.already_exported == 24
    again = export_batch(folder, scope, cache, _format(), limits)
    assert again.written == 0 and again.already_exported == 24


class _AnswerA:
    backend = "live"

    def __init__(self) -> None:
        self.sent = 0

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        from argassets.platform.judging.interface import Completion, utc_now

        self.sent += len(requests) * len(runs)
        now = utc_now()
        return [
            [Completion("A", run, run_seed(sampling.seed, r.prompt_sha256, run), 0.1, now, now) for run in runs]
            for r in requests
        ]

    def close(self) -> None:
        """Nothing held."""


def _result(custom_id: str, content: str | None = "B", status: int = 200) -> bytes:
    body = {"id": "chatcmpl-1", "created": 1700000000, "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}  # fmt: skip
    record = {
        "id": "batch_req_1",
        "custom_id": custom_id,
        "response": {"status_code": status, "body": body},
        "error": None,
    }
    return json.dumps(record).encode() + b"\n"


def test_results_are_imported_half_live_half_batch_and_bad_lines_are_named(tmp_path: Path) -> None:
    requests = _requests(6)
    scope = BatchScope(MODEL, SAMPLING, 3, requests)
    cache = JudgmentCache(tmp_path / "c.sqlite")
    judge_incrementally(_AnswerA(), MODEL, requests[:3], SAMPLING, 3, cache)  # half live
    export_batch(tmp_path / "batch", scope, cache, _format())
    ids = [json.loads(line)["custom_id"] for line in _lines(tmp_path / "batch")]
    assert len(ids) == 9
    other = BatchKey("other@1", requests[0].prompt_sha256, SAMPLING.key(), 0).custom_id
    results = tmp_path / "results.jsonl"
    good = b"".join(_result(i) for i in ids[:7])
    results.write_bytes(good + b"not json\n" + _result(other) + _result(ids[7], status=500) + _result(ids[8])[:40])
    with pytest.raises(BatchResultError) as caught:
        import_batch_results([results], scope, cache, _format())
    problems = caught.value.problems
    assert [p.split(": ", 1)[0] for p in problems] == [f"{results}:8", f"{results}:9", f"{results}:11"]
    assert "belongs to other@1" in problems[1] and caught.value.stored == 7
    # The partition is one: the live half and the batch half come back together, nothing is sent.
    judge = _AnswerA()
    rows = judge_incrementally(judge, MODEL, requests, SAMPLING, 3, cache)
    missing = {(r.prompt_sha256, run) for r in requests[4:] for run in range(3)} - {
        (BatchKey.parse(i).prompt_sha256, BatchKey.parse(i).run) for i in ids[:7]
    }
    assert judge.sent == len(missing) == 2  # the provider's failure and the cut line: asked live
    by_backend = {c.backend for c in rows if c.from_cache}
    assert by_backend == {"live", "openai-batch"}
    batch_rows = [c for c in rows if c.backend == "openai-batch"]
    assert {c.text for c in batch_rows} == {"B"} and all(
        c.seed == run_seed(SAMPLING.seed, c.prompt_sha256, c.run) for c in batch_rows
    )


def test_a_cached_non_answer_is_replaced_and_an_answer_kept(tmp_path: Path) -> None:
    requests = _requests(2)
    scope = BatchScope(MODEL, SAMPLING, 1, requests)
    cache = JudgmentCache(tmp_path / "c.sqlite")
    from argassets.platform.judging.interface import Completion

    cache.store(MODEL, SAMPLING.key(), "live", [(requests[0].prompt_sha256, Completion("", 0, 7, 0.1, "t", "t", answered=False))])  # fmt: skip
    cache.store(MODEL, SAMPLING.key(), "live", [(requests[1].prompt_sha256, Completion("A", 0, 7, 0.1, "t", "t"))])
    report = export_batch(tmp_path / "b", scope, cache, _format())
    assert report.written == 1 and report.already_judged == 1
    results = tmp_path / "r.jsonl"
    results.write_bytes(b"".join(_result(scope.key(r.prompt_sha256, 0).custom_id, "Tie") for r in requests))
    imported = import_batch_results([results], scope, cache, _format())
    assert (imported.stored, imported.already_answered) == (1, 1)
    rows = cache.fetch(MODEL, SAMPLING.key(), [(r.prompt_sha256, 0) for r in requests])
    assert (
        rows[(requests[0].prompt_sha256, 0)]["text"] == "Tie" and rows[(requests[0].prompt_sha256, 0)]["attempts"] == 2
    )
    assert rows[(requests[1].prompt_sha256, 0)]["text"] == "A"


def test_custom_ids_are_the_cache_key_and_bad_ones_are_refused() -> None:
    key = BatchKey("smollm2-135m@0123456789abcdef", "a" * 64, "fedcba9876543210", 2)
    assert BatchKey.parse(key.custom_id) == key
    for bad in ("x", "m:abc:k:0", f"m:{'a' * 64}:k:run", 3):
        with pytest.raises(ValueError, match="custom_id"):
            BatchKey.parse(bad)
