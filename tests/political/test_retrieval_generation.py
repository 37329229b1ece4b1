"""`argassets retrieve | debate | persona` end to end on the embedded store (tables of a run), and
generation with SmolLM2 on llama.cpp (CLI) and on vLLM's CPU engine (API), through the judgment cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from argassets.cli import main
from argassets.platform.judging.engines.vllm_backend import VLLMJudge
from argassets.platform.judging.identity import cache_model_key
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache
from argassets.platform.storage.table_store import ParquetTableStore
from argassets.political.retrieval.api import debate, persona
from argassets.political.retrieval.embedded_store import EmbeddedStore, positions_table
from argassets.political.retrieval.model import EmbeddingModel
from argassets.political.retrieval.query import PoliticalFilter, RetrievalQuery
from tests.political.retrieval_graph import (
    arguments_frame,
    embedding_model_fixture,  # noqa: F401 - the session fixture embedding_model
    real_embeddings,
    relations_frame,
    stats_frame,
)

UTTERANCE = "Rich people should pay higher taxes"


@pytest.fixture()
def run_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedding_model: EmbeddingModel) -> Path:
    """The tables a run writes, in a Parquet table store, and a fresh judgment cache."""
    store = ParquetTableStore(str(tmp_path / "tables"))
    store.write("political_kb_arguments", arguments_frame())
    store.write("political_kb_relations", relations_frame())
    store.write("political_argument_embeddings", real_embeddings(embedding_model))
    store.write("political_ensembles", stats_frame())
    monkeypatch.setenv("ARGASSETS_TABLES", str(tmp_path / "tables"))
    monkeypatch.setenv("ARGASSETS_CACHE", str(tmp_path / "cache.sqlite"))
    return tmp_path


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_retrieve_json_prints_every_field(run_tables: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "retrieve",
                UTTERANCE,
                "--system",
                "E1",
                "--position",
                "60-90",
                "--method",
                "typical",
                "--k",
                "1",
                "--json",
            ]
        )
        == 0
    )
    rows = _json_lines(capsys.readouterr().out)
    assert rows, "no results"
    for row in rows:
        assert {
            "argument_id",
            "neighbour_id",
            "relation",
            "direction",
            "locution",
            "proposition",
            "similarity",
            "position",
        } <= set(row)
        assert 60 <= row["position"] <= 90
        assert row["direction"] in ("incoming", "outgoing") and row["neighbour_id"]
    assert {row["relation"] for row in rows} == {"SUPPORTS", "ATTACKS", "IS_A_REPHRASE_OF", "TRANSITIONS_TO"}
    assert main(["retrieve", UTTERANCE, "--k", "2", "--json"]) == 0
    vector_rows = _json_lines(capsys.readouterr().out)
    assert len(vector_rows) == 2 and all(r["neighbour_id"] == "" and r["relation"] == "" for r in vector_rows)


def test_retrieve_errors_are_one_line(
    run_tables: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["retrieve", UTTERANCE, "--system", "E1", "--position", "90-60"]) == 2
    assert "position range 90.0-60.0 is empty" in capsys.readouterr().err
    assert main(["retrieve", UTTERANCE, "--position", "60-90"]) == 2
    assert "need --system" in capsys.readouterr().err
    monkeypatch.setenv("ARGASSETS_TABLES", str(run_tables / "empty"))
    assert main(["retrieve", UTTERANCE]) == 2
    assert "lacks political_kb_arguments" in capsys.readouterr().err


@pytest.mark.llm
def test_debate_and_persona_with_smollm2_on_llama_cpp(run_tables: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "debate",
        UTTERANCE,
        "--model",
        "smollm2-135m",
        "--system",
        "E1",
        "--position",
        "60-90",
        "--k",
        "1",
        "--json",
    ]
    assert main(argv) == 0
    [first] = _json_lines(capsys.readouterr().out)
    assert first["text"] and not first["from_cache"]
    assert first["model"] == "smollm2-135m" and first["model_key"].startswith("smollm2-135m@")
    assert "between 60 and 90" in first["system_prompt"] and "-[SUPPORTS]->" in first["system_prompt"]
    assert first["user_prompt"] == UTTERANCE
    assert set(first["retrieved_argument_ids"]) <= {"a1", "a2", "a3", "a4", "a5", "a6", "a7"}
    assert first["system_prompt"].count("\n- '") == 8  # 9 groups, at most 8 examples shown
    assert first["sampling"]["max_tokens"] == 160
    assert main(argv) == 0
    [again] = _json_lines(capsys.readouterr().out)
    assert again["from_cache"] and again["text"] == first["text"]
    assert main(["debate", UTTERANCE, "--model", "smollm2-135m", "--no-retrieval", "--json"]) == 0
    [plain] = _json_lines(capsys.readouterr().out)
    assert plain["retrieved_argument_ids"] == [] and "past debates" not in plain["system_prompt"]
    assert (
        main(
            [
                "persona",
                "--topic",
                "taxes",
                "--model",
                "smollm2-135m",
                "--system",
                "E1",
                "--position",
                "60-90",
                "--json",
            ]
        )
        == 0
    )
    [written] = _json_lines(capsys.readouterr().out)
    assert written["text"] and written["kind"] == "persona" and "made these arguments" in written["user_prompt"]
    assert main(["debate", UTTERANCE, "--model", "random"]) == 2
    assert "cannot generate text" in capsys.readouterr().err


@pytest.mark.vllm_engine
def test_debate_with_smollm2_on_the_vllm_cpu_engine(
    vllm_engine: VLLMJudge,
    vllm_entry: ModelEntry,
    embedding_model: EmbeddingModel,
    tmp_path: Path,
) -> None:
    store = EmbeddedStore.from_tables(
        arguments_frame(), relations_frame(), real_embeddings(embedding_model), positions_table([stats_frame()])
    )
    query = RetrievalQuery(UTTERANCE, "typical", k=1, filter=PoliticalFilter("E1", 60, 90))
    results = store.search(query, embedding_model.encode([UTTERANCE])[0])
    with JudgmentCache(tmp_path / "cache.sqlite") as cache:
        answer = debate(UTTERANCE, 60, 90, results, vllm_entry, cache, judge=vllm_engine)
        repeat = debate(UTTERANCE, 60, 90, results, vllm_entry, cache, judge=vllm_engine)
        written = persona(60, 90, results[:3], vllm_entry, cache, judge=vllm_engine)
        assert cache.count(answer.model_key) == 2
    assert answer.text and not answer.from_cache
    assert repeat.from_cache and repeat.text == answer.text
    assert answer.model_key == cache_model_key(vllm_entry)
    assert answer.retrieved_argument_ids and "-[" in answer.system_prompt
    assert written.text and written.kind == "persona"
