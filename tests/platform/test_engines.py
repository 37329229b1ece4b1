"""Judge engines: one file and its registration make an engine (the toy in tests/platform/toy_engine.py
judges a partition, is estimated and keeps its cache identity), and registration refuses an engine
without a cache identity."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import dagster as dg
import duckdb
import pandas as pd
import pytest

from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.scope import ArgumentQualityScope
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.identity import cache_model_key, identity_key, model_identity
from argassets.platform.judging.incremental import judge_incrementally
from argassets.platform.judging.interface import ChatRequest, Judge, JudgeSettings, SamplingParams, run_seed
from argassets.platform.judging.prompt_tokens import APPROXIMATION, approx_tokens, prompt_token_counts
from argassets.platform.judging.study_asset import judging_asset, study_workload
from argassets.platform.operations.estimate import estimate_partition, missing_completions
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.registry.entries import RegistryError
from argassets.platform.registry.model_entry import (
    EngineRegistrationError,
    ModelEntry,
    engine_names,
    engine_type,
    judge_engine,
    model_entry,
)
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache
from argassets.platform.storage.reader_file import copy_warehouse
from argassets.studies import code_location_studies, parse_registry
from tests.instances import new_instance
from tests.model_partitions import add_partitions
from tests.platform.toy_engine import ToyEntry, ToyJudge
from tests.sample_fixtures import UPSTREAM

SCOPE = 'scope = { topics = [1], dimensions = ["logic"], strategies = ["zero"], max_comparisons = 6 }'
ITEMS = 6 * 3  # comparisons x runs
#: The judging asset the platform builds from Study A's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)


def _toy_registry(extra: str = "") -> str:
    return f'[[models]]\nname = "toy-judge"\nbackend = "toy"\nstudies = ["argument_quality"]\n{SCOPE}\n{extra}'


def _materialize(tmp_path: Path, database: Path, registry: str) -> dict[str, Any]:
    (tmp_path / "models.toml").write_text(registry, encoding="utf-8")
    with new_instance() as instance:
        add_partitions(instance, ["toy-judge"])
        result = dg.materialize(
            [AQ_JUDGMENTS, *UPSTREAM],
            selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
            resources={
                "io_manager": duckdb_io_manager(str(database)),
                "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
                "webis_source": WebisSourceResource(url=""),
                "registry": ModelRegistryResource(path=str(tmp_path / "models.toml"), studies=code_location_studies()),
                "judge": JudgeResource(),
                "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
            },
            instance=instance,
            partition_key="toy-judge",
        )
    return {k: v.value for k, v in result.asset_materializations_for_node("aq_judgments")[0].metadata.items()}


def test_the_toy_engine_is_registered_with_what_it_says_about_itself() -> None:
    assert "toy" in engine_names() and engine_type("toy") is ToyEntry
    entry = model_entry(name="t", backend="toy", studies=["argument_quality"], answer="B")
    assert isinstance(entry, ToyEntry) and entry.default_batch_size == 4 and entry.gpus_needed == 0
    assert not entry.is_baseline and entry.caches_judgments and entry.judgments_file is None
    assert model_identity(entry) == {"version": 1, "backend": "toy", "answer": "B"}


def test_the_toy_engine_judges_a_partition_and_keeps_its_cache_identity(tmp_path: Path, upstream_db: Path) -> None:
    database = tmp_path / "argassets.duckdb"
    copy_warehouse(upstream_db, database)
    first = _materialize(tmp_path, database, _toy_registry('answer = "B"\n'))
    assert first["backend"] == "toy" and first["is_baseline"] is False
    assert first["completions_sent"] == ITEMS and first["completions_from_cache"] == 0
    assert first["model_identity"]["answer"] == "B" and first["model_identity"]["cache_key"].startswith("toy-judge@")
    with duckdb.connect(str(database), read_only=True) as con:
        table = con.execute("SELECT * FROM main.aq_judgments WHERE judge_model = 'toy-judge'").df()
    assert len(table) == ITEMS and set(table["backend"]) == {"toy"} and table["is_valid"].all()
    assert set(table["raw_output"]) == {"B"}
    # What changes no answer (the batch size) reuses the cache; another answer is another model.
    same = _materialize(tmp_path, database, _toy_registry('answer = "B"\nbatch_size = 2\n'))
    assert same["completions_sent"] == 0 and same["model_identity"] == first["model_identity"]
    other = _materialize(tmp_path, database, _toy_registry('answer = "Tie"\n'))
    assert other["completions_sent"] == ITEMS
    assert other["model_identity"]["cache_key"] != first["model_identity"]["cache_key"]


def test_the_toy_engine_is_estimated_with_its_own_tokenizer(tmp_path: Path, upstream_db: Path) -> None:
    entry = model_entry(
        name="toy-judge", backend="toy", studies=["argument_quality"], throughput=9.0,
        scope={"argument_quality": ArgumentQualityScope(topics=[1], dimensions=["logic"], strategies=["zero"], max_comparisons=6)},
    )  # fmt: skip
    with duckdb.connect(str(upstream_db), read_only=True) as con:

        def load(table: str) -> pd.DataFrame:
            return con.execute(f"SELECT * FROM main.{table}").df()

        requests, n_runs, sampling = study_workload(ARGUMENT_QUALITY, entry, load)
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    try:
        judge = entry.build_judge(JudgeSettings())
        judge_incrementally(judge, cache_model_key(entry), requests[:2], sampling, n_runs, cache, batch_size=1)
        assert isinstance(judge, ToyJudge) and judge.batches == [1, 1]
        counted = missing_completions(cache, cache_model_key(entry), sampling.key(), requests, n_runs)
    finally:
        cache.close()
    counts, method = prompt_token_counts(entry, counted[2])
    assert method == "whitespace words (toy engine)" and counts != [approx_tokens(r) for r in counted[2]]
    estimate = estimate_partition(
        entry, "argument_quality", requests, n_runs, counted, (9.0, "declared"), sampling.max_tokens, (counts, method)
    )
    assert (estimate.completions, estimate.cached) == (len(requests) * n_runs, 2 * n_runs)
    assert estimate.prompt_tokens == sum(counts) * n_runs and "toy engine" in estimate.describe()
    assert estimate.gpu_hours is None and estimate.usd is None
    assert (
        prompt_token_counts(model_entry(name="r", backend="random", studies=["political"]), requests)[1]
        == APPROXIMATION
    )


def test_an_engine_without_a_cache_identity_is_refused_at_registration() -> None:
    with pytest.raises(EngineRegistrationError, match=r"'forgetful'.*no cache identity \(identity_fields\)"):

        @judge_engine("forgetful")
        class Forgetful(ModelEntry):
            backend: Literal["forgetful"]

            def build_judge(self, settings: JudgeSettings) -> Judge:
                raise NotImplementedError

            def engine_batch_size(self) -> int:
                return 1

    assert "forgetful" not in engine_names()
    with pytest.raises(EngineRegistrationError, match=r"'backend' field must be Literal\['mislabelled'\]"):
        judge_engine("mislabelled")(ToyEntry)
    with pytest.raises(EngineRegistrationError, match="'toy' is registered already, by tests.platform.toy_engine"):

        @judge_engine("toy")
        class Impostor(ToyEntry):
            pass


def test_registry_errors_name_the_engine_that_owns_a_field() -> None:
    with pytest.raises(RegistryError) as raised:
        parse_registry(
            {"models": [{"name": "x", "backend": "random", "studies": ["political"], "answer": "B"}]}, "m.toml"
        )
    assert "m.toml: entry #1 ('x'): field 'answer': 'answer' only applies to backend 'toy'" in str(raised.value)
    with pytest.raises(RegistryError, match=r"entry #1 \('x'\): field 'backend': unknown backend 'gpt' \(known: .*toy"):
        parse_registry({"models": [{"name": "x", "backend": "gpt", "studies": ["political"]}]})
    with pytest.raises(RegistryError, match=r"field 'backend': missing: every entry names its engine \(known: "):
        parse_registry({"models": [{"name": "x", "studies": ["political"]}]})


def test_the_identity_key_of_a_toy_entry_depends_only_on_its_answer() -> None:
    a = model_entry(name="t", backend="toy", studies=["argument_quality"], answer="A", batch_size=3, seed=9)
    assert identity_key(model_identity(a)) == identity_key(model_identity(a.model_copy(update={"batch_size": 5})))
    assert identity_key(model_identity(a)) != identity_key(model_identity(a.model_copy(update={"answer": "B"})))


def test_requests_of_other_studies_get_the_first_choice_when_the_answer_is_not_allowed() -> None:
    judge = ToyJudge("B")
    request = ChatRequest(key="k", system="s", user="u", choices=("yes", "no"))
    [[completion]] = judge.complete([request], SamplingParams(1.0, seed=3), [0])
    assert completion.text == "yes" and completion.seed == run_seed(3, request.prompt_sha256, 0)
