"""End to end on the full published corpus: corpora, prompts and one baseline partition, with checks."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

import asset_checks.argument_quality.judgments as checks
from argassets.argument_quality.assets import corpora, prompts
from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.engines import baselines
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.studies import code_location_studies
from tests.model_partitions import add_partitions

#: The judging asset the platform builds from the study's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)

FULL_ITEMS = 13952 * 3 * 3  # comparisons per dimension x dimensions x strategies


@pytest.mark.slow
def test_full_corpus_baseline_partition(tmp_path: Path, shared_data_dir: Path, monkeypatch: pytest.MonkeyPatch):
    sent = []
    original = baselines.LongerWinsJudge.complete

    def counting(self, requests, sampling, runs):
        sent.append(len(requests) * len(runs))
        return original(self, requests, sampling, runs)

    monkeypatch.setattr(baselines.LongerWinsJudge, "complete", counting)
    database = tmp_path / "full.duckdb"
    resources = {
        "io_manager": duckdb_io_manager(str(database)),
        "data": PublishedDataResource(data_dir=str(shared_data_dir)),
        "webis_source": WebisSourceResource(url=""),
        "registry": ModelRegistryResource(studies=code_location_studies()),
        "judge": JudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
    }
    upstream = [corpora.webis_corpus, prompts.aq_few_shot_examples, prompts.aq_prompts]
    corpus_checks = [
        checks.webis_expert_comparisons_no_self_comparison,
        checks.webis_expert_comparisons_same_topic,
        checks.webis_expert_comparisons_connected,
    ]
    with dg.instance_for_test() as instance:
        add_partitions(instance, ["longer-wins"])
        first = dg.materialize([*upstream, *corpus_checks], resources=resources, instance=instance)
        assert all(e.passed for e in first.get_asset_check_evaluations())
        assert len(first.get_asset_check_evaluations()) == 3

        def judge_partition():
            return dg.materialize(
                [AQ_JUDGMENTS, *upstream, checks.aq_judgments_label_validity, checks.aq_judgments_complete],
                selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
                resources=resources,
                instance=instance,
                partition_key="longer-wins",
            )

        fresh = judge_partition()
        evaluations = {e.check_name: e for e in fresh.get_asset_check_evaluations()}
        assert evaluations["aq_judgments_complete"].passed
        assert evaluations["aq_judgments_complete"].metadata["expected"].value == FULL_ITEMS * 3
        assert evaluations["aq_judgments_label_validity"].passed
        assert 0 < sum(sent) <= FULL_ITEMS * 3

        sent.clear()
        again = judge_partition()
        assert sent == []  # a complete partition sends nothing
        assert again.asset_materializations_for_node("aq_judgments")[0].metadata["completions_sent"].value == 0

    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*) from aq_prompts").fetchone() == (FULL_ITEMS,)
        assert con.execute("select count(*), count(distinct comparison_id) from aq_judgments").fetchone() == (
            FULL_ITEMS * 3,
            41856,
        )
        # longer-wins is deterministic: all three runs agree, and it prefers the argument with more words
        assert con.execute(
            "select count(*) from (select comparison_id, strategy from aq_judgments group by 1, 2 having count(distinct label) > 1)"
        ).fetchone() == (0,)
        per_label = dict(con.execute("select label, count(*) from aq_judgments group by 1").fetchall())
        assert set(per_label) == {"A", "B", "Tie"}
