"""Baselines, the vLLM request building (without vLLM), the import backend, and build_judge."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.engines.baselines import LongerWinsJudge, RandomJudge
from argassets.platform.judging.engines.importer import ImportFormatError, ImportJudge, load_tidy_judgments
from argassets.platform.judging.engines.llama_cpp_backend import LlamaCppJudge
from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.engines.vllm_backend import VLLMJudge, engine_kwargs, sampling_kwargs
from argassets.platform.judging.interface import ChatRequest, SamplingParams, request_seed
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.registry.model_entry import model_entry
from argassets.studies import code_location_studies, load_registry

#: The import keys of the code location's studies (what a tidy file of an entry of both may hold).
KEY_SETS = [study.import_keys for study in code_location_studies()]

SCORE_SCHEMA = {
    "type": "object",
    "properties": {"Score": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 100}, {"const": "NA"}]}},
    "required": ["Score"],
}


def _aq(key: str, a: str = "one two three", b: str = "one two", order: str = "ab") -> ChatRequest:
    return ChatRequest(
        key,
        "sys",
        f"Argument A: {a}\nArgument B: {b}",
        choices=LABELS,
        context={
            "text_a": a,
            "text_b": b,
            "comparison_id": key,
            "dimension": "logic",
            "strategy": "zero",
            "order": order,
        },
    )


def test_random_is_seeded_and_uniform():
    judge = RandomJudge(seed=7)
    requests = [_aq(f"k{i}") for i in range(600)]
    first = judge.complete(requests, SamplingParams(1.0), [0, 1, 2])
    again = RandomJudge(seed=7).complete(requests, SamplingParams(1.0), [0, 1, 2])
    assert [[c.text for c in row] for row in first] == [[c.text for c in row] for row in again]
    other = RandomJudge(seed=8).complete(requests, SamplingParams(1.0), [0, 1, 2])
    assert [[c.text for c in row] for row in first] != [[c.text for c in row] for row in other]
    labels = pd.Series([c.text for row in first for c in row])
    counts = labels.value_counts()
    assert set(counts.index) == {"A", "B", "Tie"}
    assert counts.min() > 500  # 1800 draws, about 600 each
    # runs differ from each other for the same request
    assert any(len({c.text for c in row}) > 1 for row in first)
    assert judge.is_baseline and judge.backend == "random"
    assert judge.label_probabilities(requests[0]) == {"A": 1 / 3, "B": 1 / 3, "Tie": 1 / 3}
    assert all(c.label_probs == {"A": 1 / 3, "B": 1 / 3, "Tie": 1 / 3} for row in first for c in row)
    assert judge.label_probabilities(ChatRequest("s", "s", "u", json_schema=SCORE_SCHEMA)) is None


def test_random_answers_json_schemas():
    judge = RandomJudge(seed=1)
    requests = [ChatRequest(f"arg{i}", "s", "u", json_schema=SCORE_SCHEMA) for i in range(300)]
    answers = [json.loads(c.text) for row in judge.complete(requests, SamplingParams(0.0), range(5)) for c in row]
    scores = [a["Score"] for a in answers]
    assert all(set(a) == {"Score"} for a in answers)
    assert "NA" in scores
    numbers = [s for s in scores if s != "NA"]
    assert numbers and all(isinstance(s, int) and 0 <= s <= 100 for s in numbers)
    enum_schema = {"type": "object", "properties": {"Score": {"type": ["integer", "string"], "enum": [1, "NA"]}}}
    assert json.loads(
        judge.complete([ChatRequest("e", "s", "u", json_schema=enum_schema)], SamplingParams(0.0), [0])[0][0].text
    )["Score"] in (1, "NA")
    with pytest.raises(ValueError, match="neither choices nor a json_schema"):
        judge.complete([ChatRequest("x", "s", "u")], SamplingParams(1.0), [0])


def test_longer_wins():
    judge = LongerWinsJudge()
    rows = judge.complete(
        [_aq("a", "one two three", "one two"), _aq("b", "x", "y z"), _aq("t", "same length", "other words")],
        SamplingParams(1.0),
        [0, 1, 2],
    )
    assert [[c.text for c in row] for row in rows] == [["A"] * 3, ["B"] * 3, ["Tie"] * 3]
    assert [rows[1][run].label_probs for run in range(3)] == [{"A": 0.0, "B": 1.0, "Tie": 0.0}] * 3
    # One-hot on the answer it gives, also in the swapped presentation.
    assert judge.label_probabilities(_aq("a", "one two three", "one two")) == {"A": 1.0, "B": 0.0, "Tie": 0.0}
    assert judge.label_probabilities(_aq("s", "one two", "one two three", order="ba")) == {
        "A": 0.0,
        "B": 1.0,
        "Tie": 0.0,
    }
    assert judge.label_probabilities(_aq("t", "same length", "other words"))["Tie"] == 1.0
    with pytest.raises(ValueError, match="no text_a/text_b"):
        judge.complete([ChatRequest("x", "s", "u")], SamplingParams(1.0), [0])


class FakeSamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


class FakeLLM:
    def __init__(self, **engine):
        self.engine = engine
        self.calls = []

    def chat(self, messages, sampling_params, use_tqdm):
        self.calls.append((messages, sampling_params))
        return [
            SimpleNamespace(
                outputs=[SimpleNamespace(text=label) for label in ("A", "Tie", "B")[: p.kwargs["n"]]], metrics=None
            )
            for p in sampling_params
        ]


class FakeGuidedDecodingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


def test_vllm_request_building_without_vllm():
    assert "vllm" not in sys.modules
    request = _aq("c1")
    kwargs, structured = sampling_kwargs(request, SamplingParams(1.0, top_p=0.9, seed=11, max_tokens=16), [0, 1, 2])
    assert kwargs == {
        "n": 3,
        "temperature": 1.0,
        "top_p": 0.9,
        "max_tokens": 16,
        "seed": request_seed(11, request.prompt_sha256),
        # every knob stated: vLLM's generation config never fills one in
        "top_k": 0,
        "min_p": 0.0,
        "repetition_penalty": 1.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
    }
    assert structured == {"choice": ["A", "B", "Tie"]}
    assert (
        request_seed(11, request.prompt_sha256)
        == request_seed(11, request.prompt_sha256)
        != request_seed(12, request.prompt_sha256)
    )
    _, json_structured = sampling_kwargs(ChatRequest("p", "s", "u", json_schema=SCORE_SCHEMA), SamplingParams(0.0), [0])
    assert json_structured == {"json": SCORE_SCHEMA}
    entry = load_registry().get("llama-3.3-70b-instruct")
    judge = build_judge(entry)
    assert isinstance(judge, VLLMJudge)
    assert judge.engine == engine_kwargs("meta-llama/Llama-3.3-70B-Instruct", 4, 0.9, None, 0)
    assert judge.engine["enable_prefix_caching"] is True and judge.engine["tensor_parallel_size"] == 4
    assert "vllm" not in sys.modules  # building a judge loads nothing


def test_vllm_judge_with_a_fake_engine(monkeypatch: pytest.MonkeyPatch):
    sampling_module = SimpleNamespace(GuidedDecodingParams=FakeGuidedDecodingParams)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling_module)
    fake_vllm = SimpleNamespace(LLM=FakeLLM, SamplingParams=FakeSamplingParams)
    judge = VLLMJudge(engine_kwargs("m", 2, 0.8), vllm_module=fake_vllm)
    requests = [_aq("c1"), _aq("c2", "x", "y")]
    out = judge.complete(requests, SamplingParams(1.0, seed=5), [0, 1, 2])
    out2 = judge.complete(requests, SamplingParams(1.0, seed=5), [0, 1, 2])
    assert judge.loads == 1  # one model load for every batch
    llm = judge.llm()
    assert llm.engine["tensor_parallel_size"] == 2 and llm.engine["gpu_memory_utilization"] == 0.8
    messages, params = llm.calls[0]
    assert messages[0] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Argument A: one two three\nArgument B: one two"},
    ]
    assert params[0].kwargs["n"] == 3
    assert params[0].kwargs["guided_decoding"].kwargs == {"choice": ["A", "B", "Tie"]}
    assert [[c.text for c in row] for row in out] == [["A", "Tie", "B"]] * 2
    assert [c.run for c in out[0]] == [0, 1, 2]
    assert out[0][0].seed == request_seed(5, requests[0].prompt_sha256)
    assert len(out2) == 2


def _write_tidy(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_import_judge_answers_from_a_tidy_file(tmp_path: Path):
    rows = [
        {
            "judge_model": "ext",
            "comparison_id": "c1",
            "dimension": "logic",
            "strategy": "zero",
            "order": "ab",
            "run": r,
            "raw_output": ["A", " B", "Tie"][r],
        }
        for r in range(3)
    ] + [
        {
            "judge_model": "other",
            "comparison_id": "c1",
            "dimension": "logic",
            "strategy": "zero",
            "order": "ab",
            "run": 0,
            "raw_output": "B",
        }
    ]
    path = _write_tidy(tmp_path / "judgments.csv", rows)
    judge = ImportJudge(path, model_name="ext", key_sets=KEY_SETS)
    out = judge.complete([_aq("c1")], SamplingParams(1.0), [0, 1, 2])
    assert [c.text for c in out[0]] == ["A", " B", "Tie"]
    with pytest.raises(ValueError, match=r"1 judgment\(s\) missing .*c2, logic, zero, ab, 0"):
        judge.complete([_aq("c2")], SamplingParams(1.0), [0])
    # Parquet, labels only, no order column (ab)
    parquet = tmp_path / "judgments.parquet"
    pd.DataFrame(
        [{"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "run": 0, "label": "Tie"}]
    ).to_parquet(parquet)
    assert ImportJudge(parquet, key_sets=KEY_SETS).complete([_aq("c1")], SamplingParams(1.0), [0])[0][0].text == "Tie"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [{"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "raw_output": "A"}],
            r"missing column\(s\) 'run'",
        ),
        (
            [{"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "run": 0}],
            r"missing column\(s\) 'raw_output or label'",
        ),
        (
            [
                {"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "run": 0, "label": "A"},
                {"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "run": "x", "label": "A"},
            ],
            r"row 1 \(line 3\): 'run' must be an integer",
        ),
        (
            [{"comparison_id": "c1", "dimension": "style", "strategy": "zero", "run": 0, "label": "A"}],
            r"row 0 \(line 2\): bad 'dimension' value 'style'",
        ),
        (
            [
                {"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "run": 0, "label": "A"},
                {"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "run": 0, "label": "B"},
            ],
            r"row 1 \(line 3\): judgment .* given twice \(first in row 0\)",
        ),
        (
            [{"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "run": 0, "label": ""}],
            r"row 0 \(line 2\): neither 'raw_output' nor 'label'",
        ),
        (
            [
                {
                    "judge_model": "someone",
                    "comparison_id": "c1",
                    "dimension": "logic",
                    "strategy": "zero",
                    "run": 0,
                    "label": "A",
                }
            ],
            r"no rows with judge_model = 'ext'",
        ),
        (
            [{"item": "c1", "run": 0, "label": "A"}],
            r"needs a 'comparison_id' or 'argument_id' column \(the item of a study",
        ),
    ],
)
def test_import_format_errors_name_file_and_row(tmp_path: Path, rows, message):
    path = _write_tidy(tmp_path / "bad.csv", rows)
    with pytest.raises(ImportFormatError, match=message) as info:
        load_tidy_judgments(path, "ext", key_sets=KEY_SETS)
    assert str(path) in str(info.value)


def _probability_rows(p_a, p_b, p_tie) -> list[dict]:
    base = {"comparison_id": "c1", "dimension": "logic", "strategy": "zero", "label": "A"}
    return [
        {**base, "run": 0, "p_a": 0.7, "p_b": 0.2, "p_tie": 0.1},
        {**base, "run": 1, "p_a": p_a, "p_b": p_b, "p_tie": p_tie},
    ]


def test_import_keeps_label_probabilities(tmp_path: Path):
    rows = _probability_rows(None, None, None)  # a row may leave all three out
    for suffix in ("csv", "parquet"):
        path = tmp_path / f"probabilities.{suffix}"
        frame = pd.DataFrame(rows)
        frame.to_csv(path, index=False) if suffix == "csv" else frame.to_parquet(path)
        tidy, _ = load_tidy_judgments(path, key_sets=KEY_SETS)
        assert tidy[["p_a", "p_b", "p_tie"]].iloc[0].tolist() == [0.7, 0.2, 0.1]
        assert tidy[["p_a", "p_b", "p_tie"]].iloc[1].isna().all()
    plain = [{k: v for k, v in row.items() if not k.startswith("p_")} for row in rows]
    without, _ = load_tidy_judgments(_write_tidy(tmp_path / "plain.csv", plain), key_sets=KEY_SETS)
    assert "p_a" not in without.columns
    # The judge hands them on with each completion, over the request's choices.
    request = ChatRequest(
        "c1",
        "s",
        "u",
        choices=("A", "B", "Tie"),
        context={"comparison_id": "c1", "dimension": "logic", "strategy": "zero"},
    )
    given, empty = ImportJudge(tmp_path / "probabilities.csv", key_sets=KEY_SETS).complete(
        [request], SamplingParams(1.0), [0, 1]
    )[0]
    assert given.label_probs == {"A": 0.7, "B": 0.2, "Tie": 0.1} and empty.label_probs is None
    plain_run = ImportJudge(tmp_path / "plain.csv", key_sets=KEY_SETS).complete([request], SamplingParams(1.0), [0])[0][
        0
    ]
    assert plain_run.label_probs is None


@pytest.mark.parametrize(
    ("probabilities", "message"),
    [
        ((0.5, 0.3, 0.1), r"row 1 \(line 3\): has p_a \+ p_b \+ p_tie different from 1"),
        ((1.2, -0.3, 0.1), r"row 1 \(line 3\): has a probability outside \[0, 1\]"),
        ((0.5, 0.5, None), r"row 1 \(line 3\): gives some of p_a, p_b, p_tie but not all three"),
        (("high", 0.5, 0.5), r"row 1 \(line 3\): 'p_a' is not a number: 'high'"),
    ],
)
def test_import_probability_errors_name_file_and_row(tmp_path: Path, probabilities, message):
    path = _write_tidy(tmp_path / "bad.csv", _probability_rows(*probabilities))
    with pytest.raises(ImportFormatError, match=message) as info:
        load_tidy_judgments(path, key_sets=KEY_SETS)
    assert str(path) in str(info.value)


def test_import_needs_all_three_probability_columns(tmp_path: Path):
    rows = [{k: v for k, v in row.items() if k != "p_tie"} for row in _probability_rows(0.5, 0.5, 0.0)]
    with pytest.raises(ImportFormatError, match="has p_a, p_b but not p_tie"):
        load_tidy_judgments(_write_tidy(tmp_path / "two.csv", rows), key_sets=KEY_SETS)


def test_import_missing_file(tmp_path: Path):
    with pytest.raises(ImportFormatError, match="import file not found"):
        load_tidy_judgments(tmp_path / "none.csv", key_sets=KEY_SETS)


def test_build_judge_per_backend(tmp_path: Path):
    registry = load_registry()
    assert isinstance(build_judge(registry.get("random")), RandomJudge)
    assert build_judge(registry.get("random")).seed == 20200705
    assert isinstance(build_judge(registry.get("longer-wins")), LongerWinsJudge)
    smol = build_judge(registry.get("smollm2-135m"))
    assert isinstance(smol, LlamaCppJudge)
    assert smol.model_path.name.endswith(".gguf") and smol.model_path.is_file()
    entry = model_entry(
        name="api",
        backend="openai",
        studies=["argument_quality"],
        model_id="m",
        api_key_env="MY_KEY",
        base_url_env="MY_URL",
        max_concurrency=3,
    )
    with pytest.raises(ValueError, match="set MY_URL"):
        build_judge(entry, environ={})
    judge = build_judge(entry, environ={"MY_URL": "http://127.0.0.1:1/v1/", "MY_KEY": "sk-secret"})
    assert isinstance(judge, OpenAIJudge)
    assert judge.url == "http://127.0.0.1:1/v1/chat/completions" and judge.max_concurrency == 3
    assert "sk-secret" not in repr(judge)
    defaults = model_entry(name="api2", backend="openai", studies=["argument_quality"], model_id="m")
    assert (
        build_judge(defaults, environ={"ARGASSETS_OPENAI_BASE_URL": "http://h/v1"}).url
        == "http://h/v1/chat/completions"
    )
    imported = model_entry(
        name="ext", backend="import", studies=["argument_quality"], path=str(tmp_path / "x.csv"), format="tidy"
    )
    assert isinstance(build_judge(imported), ImportJudge)
