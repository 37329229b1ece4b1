"""The cache knows which model answered (non-answers: tests/platform/test_non_answers.py).

- The cache key holds the model's identity (backend, model id, weights checksum, engine arguments
  that change outputs), not only the registry name: an entry changed under the same name is judged
  again, and the partition's metadata says which identity answered and how much came from the cache.
- vLLM's engine and sampling arguments (CPU build: no chunked prefill; runs keep their seeds).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest

from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.engines.vllm_backend import engine_kwargs, run_groups, sampling_kwargs
from argassets.platform.judging.engines.vllm_model import converted_model_dir, file_sha256, read_stamp
from argassets.platform.judging.identity import cache_model_key, identity_key, model_identity
from argassets.platform.judging.interface import (
    ChatRequest,
    Completion,
    SamplingParams,
    request_seed,
    run_seed,
    utc_now,
)
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.registry.entries import RegistryError
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.storage.reader_file import copy_warehouse
from argassets.platform.study import ImportKeys
from argassets.studies import code_location_studies, load_registry, parse_registry
from tests.instances import new_instance
from tests.model_partitions import add_partitions
from tests.sample_fixtures import UPSTREAM

#: The judging asset the platform builds from the study's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)

SCOPE = 'scope = { topics = [1], dimensions = ["logic"], strategies = ["zero"], max_comparisons = 6 }'
ITEMS = 6 * 3  # comparisons x runs


def _entry(**fields: object) -> ModelEntry:
    base: dict[str, object] = {"name": "m", "backend": "random", "studies": ["argument_quality"]}
    base.update(fields)
    return parse_registry({"models": [base]}).models[0]


def test_identity_follows_what_decides_the_answers() -> None:
    gguf_entry = load_registry().get("smollm2-135m-vllm")
    identity = model_identity(gguf_entry)
    assert identity["backend"] == "vllm" and identity["model_id"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert identity["weights"]["sha256"] == file_sha256(build_judge(gguf_entry).gguf)  # type: ignore[attr-defined]
    assert identity["engine"]["device"] == "cpu"
    key = identity_key(identity)
    assert cache_model_key(gguf_entry) == f"smollm2-135m-vllm@{key}"
    changed = {
        "model_id": gguf_entry.model_copy(update={"model_id": "HuggingFaceTB/SmolLM2-360M-Instruct"}),
        "backend": load_registry().get("smollm2-135m"),  # the same GGUF through llama.cpp
        "max_model_len": gguf_entry.model_copy(update={"max_model_len": 1024}),
        "eager": gguf_entry.model_copy(update={"enforce_eager": False}),
        "dtype": gguf_entry.model_copy(update={"dtype": "float16"}),  # neither of cpu_native's choices
    }
    for what, entry in changed.items():
        assert identity_key(model_identity(entry)) != key, what
    # Speed-only settings leave the identity alone.
    same = gguf_entry.model_copy(update={"kv_cache_gib": 2.0, "gpu_memory_utilization": 0.5, "batch_size": 4})
    assert identity_key(model_identity(same)) == key
    gpu_a = _entry(backend="vllm", model_id="x/y", gpus=1)
    assert identity_key(model_identity(gpu_a)) == identity_key(model_identity(gpu_a.model_copy(update={"gpus": 4})))
    assert identity_key(model_identity(_entry(seed=1))) != identity_key(model_identity(_entry(seed=2)))


class ScriptedJudge:
    """Answers 'A', except for the request keys in ``silent``: an empty body (a non-answer)."""

    backend = "random"

    def __init__(self, silent: set[str], calls: list[int]):
        self.silent = silent
        self.calls = calls

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        now = utc_now()
        self.calls.append(len(requests) * len(runs))
        return [
            [
                Completion(
                    "" if r.key in self.silent else "A", run, None, 0.0, now, now, answered=r.key not in self.silent
                )
                for run in runs
            ]
            for r in requests
        ]

    def close(self) -> None:
        pass


SILENT: set[str] = set()
CALLS: list[int] = []


class ScriptedJudgeResource(JudgeResource):
    def build(self, entry: ModelEntry, import_keys: Sequence[ImportKeys] = ()):
        return ScriptedJudge(SILENT, CALLS)


def _materialize(tmp_path: Path, database: Path, registry: str, judge: JudgeResource | None = None) -> dict:
    (tmp_path / "models.toml").write_text(registry, encoding="utf-8")
    with new_instance() as instance:
        add_partitions(instance, ["m"])
        result = dg.materialize(
            [AQ_JUDGMENTS, *UPSTREAM],
            selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
            resources={
                "io_manager": duckdb_io_manager(str(database)),
                "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
                "webis_source": WebisSourceResource(url=""),
                "registry": ModelRegistryResource(path=str(tmp_path / "models.toml"), studies=code_location_studies()),
                "judge": judge or JudgeResource(),
                "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
            },
            instance=instance,
            partition_key="m",
        )
    return {k: v.value for k, v in result.asset_materializations_for_node("aq_judgments")[0].metadata.items()}


def _table(database: Path) -> pd.DataFrame:
    with duckdb.connect(str(database), read_only=True) as con:
        return con.execute("SELECT * FROM main.aq_judgments WHERE judge_model = 'm'").df()


def test_an_entry_changed_under_the_same_name_is_judged_again(tmp_path: Path, upstream_db: Path) -> None:
    database = tmp_path / "argassets.duckdb"
    copy_warehouse(upstream_db, database)
    entry = f'[[models]]\nname = "m"\nbackend = "random"\nstudies = ["argument_quality"]\n{SCOPE}\n'
    first = _materialize(tmp_path, database, entry + "seed = 1\n")
    assert first["completions_sent"] == ITEMS and first["completions_from_cache"] == 0
    identity_1 = first["model_identity"]
    assert identity_1["backend"] == "random" and identity_1["seed"] == 1
    assert identity_1["cache_key"].startswith("m@")
    again = _materialize(tmp_path, database, entry + "seed = 1\n")
    assert again["completions_sent"] == 0 and again["completions_from_cache"] == ITEMS
    assert again["model_identity"] == identity_1
    # Another seed under the same name: a different model, nothing reused or relabelled.
    other = _materialize(tmp_path, database, entry + "seed = 2\n")
    assert other["completions_sent"] == ITEMS and other["completions_from_cache"] == 0
    assert other["model_identity"]["cache_key"] != identity_1["cache_key"]
    with sqlite3.connect(tmp_path / "cache.sqlite") as con:
        keys = dict(con.execute("SELECT model, count(*) FROM completions GROUP BY 1").fetchall())
    assert keys == {identity_1["cache_key"]: ITEMS, other["model_identity"]["cache_key"]: ITEMS}


def test_cpu_engine_arguments_keep_every_prompt_whole() -> None:
    cpu = engine_kwargs("folder", 0, 0.3, 2048, 7, device="cpu", kv_cache_gib=1.0, enforce_eager=True)
    assert cpu["enable_chunked_prefill"] is False and cpu["max_num_batched_tokens"] >= 2048
    assert cpu["tensor_parallel_size"] == 1 and cpu["kv_cache_memory_bytes"] == 1 << 30 and cpu["enforce_eager"]
    gpu = engine_kwargs("x/y", 2, 0.9)
    assert "enable_chunked_prefill" not in gpu and gpu["tensor_parallel_size"] == 2
    with pytest.raises(ValueError, match="unknown vLLM device"):
        engine_kwargs("x", 1, 0.9, device="tpu")
    judge = build_judge(load_registry().get("smollm2-135m-vllm"))
    assert judge.engine["model"] == str(converted_model_dir(judge.gguf))  # type: ignore[attr-defined]
    assert read_stamp(judge.engine["model"]) is None or read_stamp(judge.engine["model"])["dtype"] == "bfloat16"  # type: ignore[attr-defined]


def test_runs_keep_their_seed_whichever_are_asked_together() -> None:
    request = ChatRequest("c", "s", "u", choices=LABELS)
    sampling = SamplingParams(1.0, seed=11)
    assert run_groups([0, 1, 2]) == [[0, 1, 2]] and run_groups([0, 2]) == [[0], [2]] and run_groups([1, 2]) == [[1, 2]]
    full, structured = sampling_kwargs(request, sampling, [0, 1, 2])
    assert full["seed"] == request_seed(11, request.prompt_sha256) and full["n"] == 3
    assert structured == {"choice": ["A", "B", "Tie"]}
    resumed, _ = sampling_kwargs(request, sampling, [1, 2])
    assert resumed["seed"] == run_seed(11, request.prompt_sha256, 1) == full["seed"] + 1 and resumed["n"] == 2
    with pytest.raises(ValueError, match="consecutive"):
        sampling_kwargs(request, sampling, [0, 2])
    unseeded, _ = sampling_kwargs(request, SamplingParams(1.0), [0, 1])
    assert unseeded["seed"] is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"backend": "vllm", "model_id": "x", "device": "cpu", "gpus": 1}, "set 'gpus' = 0"),
        ({"backend": "random", "device": "cpu"}, "only applies to backend 'vllm'"),
        ({"backend": "vllm", "model_id": "x", "device": "gpu", "gpus": 0}, "needs 'gpus' >= 1"),
    ],
)
def test_registry_rejects_inconsistent_vllm_devices(fields: dict, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        _entry(**fields)


class _RecordingLLM:
    """Stands in for ``vllm.LLM.chat``: records the sampling parameters, answers 'A' per sample."""

    def __init__(self) -> None:
        self.params: list[dict] = []

    def chat(self, messages, sampling_params, use_tqdm):
        from types import SimpleNamespace

        self.params.extend(p.kwargs for p in sampling_params)
        return [
            SimpleNamespace(outputs=[SimpleNamespace(text="A", index=i) for i in range(p.kwargs["n"])], metrics=None)
            for p in sampling_params
        ]


def test_greedy_runs_go_as_single_samples_with_their_own_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    from types import SimpleNamespace

    from argassets.platform.judging.engines.vllm_backend import VLLMJudge

    class Params:
        def __init__(self, **kwargs: object) -> None:
            self.kwargs = kwargs

    monkeypatch.setitem(sys.modules, "vllm.sampling_params", SimpleNamespace(StructuredOutputsParams=Params))
    llm = _RecordingLLM()
    judge = VLLMJudge(engine_kwargs("m", 1, 0.9), llm=llm, vllm_module=SimpleNamespace(SamplingParams=Params))
    request = ChatRequest("p", "s", "u", choices=LABELS)
    greedy = judge.complete([request], SamplingParams(0.0, seed=123), range(5))[0]
    # vLLM refuses n > 1 at temperature 0: five requests of n = 1, seeds request_seed + run.
    assert [p["n"] for p in llm.params] == [1] * 5
    assert [c.seed for c in greedy] == [run_seed(123, request.prompt_sha256, r) for r in range(5)]
    llm.params.clear()
    sampled = judge.complete([request], SamplingParams(1.0, seed=123), [0, 1, 2])[0]
    assert [p["n"] for p in llm.params] == [3] and [c.seed for c in sampled] == [
        run_seed(123, request.prompt_sha256, r) for r in range(3)
    ]
