"""Reports know what they cover (issue 21, part 2), in both studies.

An aggregate over every ``judge_models`` partition compares the rows it read with the partitions
Dagster lists as materialised (and the row counts their materialisations recorded) and fails,
naming the partitions, when they differ: the issue's report over a partition whose rows a killed
writer had lost succeeded with half the votes.
"""

from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest

from argassets.argument_quality.assets import aggregation
from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.registry.partitions import PARTITION_METADATA, judge_models_partitions
from argassets.platform.reporting.partition_coverage import coverage_problems, unlisted
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.storage.reader_file import copy_warehouse, store_path
from argassets.political.assets.ensembles import political_model_stats
from argassets.political.model_stats import PREDICTION_STATS_COLUMNS
from argassets.studies import code_location_studies
from tests.instances import new_instance
from tests.model_partitions import add_partitions
from tests.sample_fixtures import UPSTREAM

#: The judging asset the platform builds from the study's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)

MODELS = ("random", "longer-wins")
REGISTRY = "".join(
    f'[[models]]\nname = "{name}"\nbackend = "{name}"\nstudies = ["argument_quality"]\n\n' for name in MODELS
)


def test_coverage_problems_name_each_partition_not_read_as_recorded() -> None:
    recorded = {"a": 10, "b": 10, "c": None, "d": 0}
    assert coverage_problems(recorded, {"a": 10, "b": 10, "c": 3}) == []
    assert coverage_problems(recorded, {"a": 10, "c": 3}) == ["b: materialised, but no row of it was read"]
    assert coverage_problems(recorded, {"a": 4, "b": 10}) == [
        "a: 4 rows read, its materialisation recorded 10",
        "c: materialised, but no row of it was read",
    ]
    assert unlisted(recorded, {"a": 10, "z": 1}) == ["z"]


def _resources(folder: Path, database: Path) -> dict:
    return {
        "io_manager": duckdb_io_manager(str(database)),
        "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
        "webis_source": WebisSourceResource(url=""),
        "registry": ModelRegistryResource(path=str(folder / "models.toml"), studies=code_location_studies()),
        "judge": JudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(folder / "cache.sqlite")),
    }


def _votes(resources: dict, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [aggregation.aq_majority_votes, AQ_JUDGMENTS, *UPSTREAM],
        selection=dg.AssetSelection.assets(aggregation.aq_majority_votes),
        resources=resources,
        instance=instance,
        raise_on_error=False,
    )


def _failure(result: dg.ExecuteInProcessResult) -> str:
    [failure] = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    return failure.step_failure_data.error.message if failure.step_failure_data.error else ""


def test_majority_votes_fail_naming_a_materialised_partition_whose_rows_are_gone(
    tmp_path: Path, upstream_db: Path
) -> None:
    database = tmp_path / "argassets.duckdb"
    copy_warehouse(upstream_db, database)
    (tmp_path / "models.toml").write_text(REGISTRY, encoding="utf-8")
    resources = _resources(tmp_path, database)
    with new_instance() as instance:
        add_partitions(instance, list(MODELS))
        for name in MODELS:
            assert dg.materialize(
                [AQ_JUDGMENTS, *UPSTREAM],
                selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
                resources=resources,
                instance=instance,
                partition_key=name,
            ).success
        whole = _votes(resources, instance)
        assert whole.success
        covered = whole.asset_materializations_for_node("aq_majority_votes")[0].metadata
        assert covered["aq_judgments_partitions_read"].value == sorted(MODELS)

        # The state: Dagster lists `random` as materialised, its rows are gone.
        with duckdb.connect(str(store_path(database))) as con:
            con.execute("DELETE FROM main.aq_judgments WHERE judge_model = 'random'")
        lost = _votes(resources, instance)
        assert not lost.success
        assert "random: materialised, but no row of it was read" in _failure(lost)
        assert "longer-wins" not in _failure(lost)

        # Cut short instead of gone: named with both counts.
        assert dg.materialize(
            [AQ_JUDGMENTS, *UPSTREAM],
            selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
            resources=resources,
            instance=instance,
            partition_key="random",
        ).success
        with duckdb.connect(str(store_path(database))) as con:
            con.execute("DELETE FROM main.aq_judgments WHERE judge_model = 'longer-wins' AND run = 2")
            kept = con.execute("SELECT count(*) FROM main.aq_judgments WHERE judge_model = 'longer-wins'").fetchone()
        short = _votes(resources, instance)
        assert not short.success
        assert f"longer-wins: {kept[0]} rows read, its materialisation recorded {kept[0] * 3 // 2}" in _failure(short)


@dg.asset(
    key="political_predictions",
    partitions_def=judge_models_partitions,
    metadata=PARTITION_METADATA,
    group_name="judgments",
)
def stand_in_predictions(context: dg.AssetExecutionContext) -> dg.Output[pd.DataFrame]:
    """Five repetitions of one argument's score (Study B's partitioned table, its statistics columns only)."""
    rows = pd.DataFrame(
        {
            "judge_model": context.partition_key,
            "argument_id": "arg-1",
            "repetition": range(5),
            "score": 50.0,
            "is_na": False,
            "is_valid": True,
        }
    )[PREDICTION_STATS_COLUMNS]
    return dg.Output(rows, metadata={"dagster/row_count": len(rows)})


@pytest.mark.parametrize("damage", ["gone", "short"])
def test_political_model_stats_fail_naming_a_partition_not_read_as_recorded(tmp_path: Path, damage: str) -> None:
    database = tmp_path / "argassets.duckdb"
    resources = {"io_manager": duckdb_io_manager(str(database))}
    with new_instance() as instance:
        add_partitions(instance, list(MODELS))
        for name in MODELS:
            assert dg.materialize(
                [stand_in_predictions], resources=resources, instance=instance, partition_key=name
            ).success
        assets = [political_model_stats, stand_in_predictions]
        selection = dg.AssetSelection.assets(political_model_stats)
        assert dg.materialize(assets, selection=selection, resources=resources, instance=instance).success
        where = "judge_model = 'random'" + (" AND repetition > 1" if damage == "short" else "")
        with duckdb.connect(str(store_path(database))) as con:
            con.execute(f"DELETE FROM main.political_predictions WHERE {where}")
        result = dg.materialize(
            assets, selection=selection, resources=resources, instance=instance, raise_on_error=False
        )
        assert not result.success
        expected = (
            "random: materialised, but no row of it was read"
            if damage == "gone"
            else "random: 2 rows read, its materialisation recorded 5"
        )
        assert expected in _failure(result)
