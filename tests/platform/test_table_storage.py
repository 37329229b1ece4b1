"""Table storage: Parquet files that many run processes write at once, read by the reports.

The real assets on the invented sample corpus: the same partitions through the DuckDB file and
through Parquet storage give the same tables; partition keys with quotes and slashes break neither;
and 8 processes materialise 8 ``aq_judgments`` partitions into one Parquet location while another
process keeps materialising a report over all of them, never seeing a partition half-written.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import time
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
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import (
    ParquetTableIOManager,
    TableStorageIOManager,
    duckdb_io_manager,
    parquet_io_manager,
    read_stored_table,
    table_io_manager,
)
from argassets.platform.storage.table_store import TABLES_ENV_VAR, ParquetTableStore, partition_dirname
from argassets.studies import code_location_studies
from tests.model_partitions import add_partitions
from tests.sample_fixtures import UPSTREAM

#: The judging asset the platform builds from the study's declaration.
AQ_JUDGMENTS = judging_asset(ARGUMENT_QUALITY)

N_WRITERS = 8
WRITERS = [f"rand-{i}" for i in range(N_WRITERS)]
ROWS_PER_PARTITION = 105 * 3 * 3  # sample comparisons (3 dimensions) x strategies x runs


def _registry(path: Path) -> Path:
    path.write_text(
        "".join(
            f'[[models]]\nname = "{name}"\nbackend = "random"\nstudies = ["argument_quality"]\nseed = {i}\n\n'
            for i, name in enumerate(WRITERS)
        )
    )
    return path


def _resources(io_manager, folder: Path) -> dict:
    return {
        "io_manager": io_manager,
        "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
        "webis_source": WebisSourceResource(url=""),
        "registry": ModelRegistryResource(path=str(folder / "models.toml"), studies=code_location_studies()),
        "judge": JudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(folder / "cache.sqlite")),
    }


def _materialise_partition(io_manager, folder: Path, partition: str, instance: dg.DagsterInstance) -> None:
    result = dg.materialize(
        [AQ_JUDGMENTS, *UPSTREAM],
        selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
        resources=_resources(io_manager, folder),
        instance=instance,
        partition_key=partition,
    )
    assert result.success


def _report(io_manager, folder: Path, instance: dg.DagsterInstance) -> pd.DataFrame:
    """Materialise aq_majority_votes (reads every aq_judgments partition) and return its table."""
    result = dg.materialize(
        [aggregation.aq_majority_votes, AQ_JUDGMENTS, *UPSTREAM],
        selection=dg.AssetSelection.assets(aggregation.aq_majority_votes),
        resources=_resources(io_manager, folder),
        instance=instance,
    )
    assert result.success
    return result.output_for_node("aq_majority_votes")


# --- the store itself ---------------------------------------------------------------------------


def test_store_writes_whole_files_and_encodes_keys(tmp_path: Path) -> None:
    store = ParquetTableStore(tmp_path / "tables")
    odd = ["it's", "a/b", "..", "naïve model", "x%2Fy"]
    for i, key in enumerate(odd):
        store.write_partition(
            "t", "judge_model", key, pd.DataFrame({"judge_model": [key] * (i + 1), "v": range(i + 1)})
        )
    assert store.partitions("t", "judge_model") == sorted(odd)
    assert partition_dirname("judge_model", "a/b") == "judge_model=a%2Fb"
    assert all("/" not in partition_dirname("c", key).split("=", 1)[1] for key in odd)
    both = store.read_partitions("t", "judge_model", ["it's", "a/b", "never-written"])
    assert both is not None and sorted(both["judge_model"]) == ["a/b", "a/b", "it's"]
    # Replacing a partition replaces its file whole; no temporary file is left behind.
    store.write_partition("t", "judge_model", "it's", pd.DataFrame({"judge_model": ["it's"] * 5, "v": range(5)}))
    assert len(store.read_partitions("t", "judge_model", ["it's"])) == 5
    assert not [p for p in (tmp_path / "tables").rglob("*") if p.name.endswith(".tmp")]
    with pytest.raises(ValueError, match="rows of partition 'x' carry other keys"):
        store.write_partition("t", "judge_model", "x", pd.DataFrame({"judge_model": ["y"], "v": [1]}))
    with pytest.raises(FileNotFoundError, match="table 'nope' is not materialised"):
        store.read("nope")
    store.write("plain", pd.DataFrame({"a": [1, 2]}))
    assert store.read("plain")["a"].tolist() == [1, 2]
    assert store.read_partitions("empty", "judge_model") is None


def test_storage_is_chosen_when_a_run_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    @dg.asset
    def little_table() -> pd.DataFrame:
        return pd.DataFrame({"x": [1, 2, 3]})

    manager = table_io_manager()  # the code location's: $ARGASSETS_DUCKDB / $ARGASSETS_TABLES at run time
    assert isinstance(manager, TableStorageIOManager)
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(tmp_path / "db.duckdb"))
    monkeypatch.delenv(TABLES_ENV_VAR, raising=False)
    assert manager.location() == ""
    assert dg.materialize([little_table], resources={"io_manager": manager}).success
    with duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True) as con:
        assert con.execute("select sum(x) from main.little_table").fetchone() == (6,)
    monkeypatch.setenv(TABLES_ENV_VAR, str(tmp_path / "tables"))
    assert manager.location() == str(tmp_path / "tables")
    assert dg.materialize([little_table], resources={"io_manager": manager}).success
    assert ParquetTableStore(tmp_path / "tables").read("little_table")["x"].tolist() == [1, 2, 3]
    assert isinstance(manager.create_io_manager(dg.build_init_resource_context()), ParquetTableIOManager)


# --- the real assets: DuckDB and Parquet agree, odd keys break nothing -------------------------


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    _registry(tmp_path / "models.toml")
    return tmp_path


def test_parquet_and_duckdb_storage_give_the_same_tables(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tables: dict[str, pd.DataFrame] = {}
    for name, manager in (
        ("duckdb", duckdb_io_manager(str(folder / "t.duckdb"))),
        ("parquet", parquet_io_manager(str(folder / "pq"))),
    ):
        with dg.instance_for_test() as instance:
            add_partitions(instance, WRITERS[:2])
            assert dg.materialize(UPSTREAM, resources=_resources(manager, folder), instance=instance).success
            for partition in WRITERS[:2]:
                _materialise_partition(manager, folder, partition, instance)
            tables[name] = _report(manager, folder, instance).sort_values(list(_report_key())).reset_index(drop=True)
    assert len(tables["parquet"]) > 0 and set(tables["parquet"]["model"]) == set(WRITERS[:2])
    pd.testing.assert_frame_equal(tables["duckdb"], tables["parquet"])
    # Outside Dagster's inputs (the Neo4j export's statistics), the same storage is read.
    monkeypatch.setenv(TABLES_ENV_VAR, str(folder / "pq"))
    stored = read_stored_table("aq_judgments")
    assert stored is not None and len(stored) == 2 * ROWS_PER_PARTITION
    assert read_stored_table("political_model_stats") is None
    monkeypatch.delenv(TABLES_ENV_VAR)
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(folder / "t.duckdb"))
    assert len(read_stored_table("aq_judgments")) == 2 * ROWS_PER_PARTITION
    assert read_stored_table("political_model_stats") is None


def _report_key() -> tuple[str, ...]:
    return ("model", "strategy", "dimension", "comparison_id")


@pytest.mark.parametrize("storage", ["duckdb", "parquet"])
def test_a_partition_key_with_a_quote_breaks_no_report(storage: str, folder: Path) -> None:
    """A partition added by hand in the UI (any text) is never run, and reports still read the rest."""
    manager = (
        duckdb_io_manager(str(folder / "t.duckdb")) if storage == "duckdb" else parquet_io_manager(str(folder / "pq"))
    )
    with dg.instance_for_test() as instance:
        add_partitions(instance, [WRITERS[0], "it's mine", "a'); DROP TABLE aq_judgments; --"])
        assert dg.materialize(UPSTREAM, resources=_resources(manager, folder), instance=instance).success
        _materialise_partition(manager, folder, WRITERS[0], instance)
        bad = dg.materialize(
            [AQ_JUDGMENTS, *UPSTREAM],
            selection=dg.AssetSelection.assets(AQ_JUDGMENTS),
            resources=_resources(manager, folder),
            instance=instance,
            partition_key="it's mine",
            raise_on_error=False,
        )
        assert not bad.success
        failure = next(e for e in bad.all_events if e.event_type_value == "STEP_FAILURE")
        assert 'partition key "it\'s mine" is not a valid model name' in failure.step_failure_data.error.message
        report = _report(manager, folder, instance)
    assert set(report["model"]) == {WRITERS[0]}


# --- 8 writer processes, one reader ----------------------------------------------------------------


def _own_instance(root: Path, name: str, empty_instance: str) -> str:
    """A copy of the session's empty instance for one process (creating its SQLite schemas takes seconds)."""
    return str(shutil.copytree(empty_instance, root / f"instance-{name}"))


def _writer(folder: str, partition: str, go: str, empty_instance: str) -> None:
    root = Path(folder)
    os.environ[TABLES_ENV_VAR] = str(root / "tables")
    with dg.instance_for_test(temp_dir=_own_instance(root, partition, empty_instance)) as instance:
        add_partitions(instance, WRITERS)
        (root / f"ready-{partition}").touch()
        while not os.path.exists(go):
            time.sleep(0.01)
        _materialise_partition(table_io_manager(str(root / "unused.duckdb")), root, partition, instance)
    (root / f"done-{partition}").touch()


def _reader(folder: str, go: str, empty_instance: str) -> None:
    """Materialise the report over every partition again and again while the writers run."""
    root = Path(folder)
    os.environ[TABLES_ENV_VAR] = str(root / "tables")
    seen = []
    with dg.instance_for_test(temp_dir=_own_instance(root, "reader", empty_instance)) as instance:
        add_partitions(instance, WRITERS)
        manager = table_io_manager(str(root / "unused.duckdb"))
        (root / "ready-reader").touch()
        while not os.path.exists(go):
            time.sleep(0.01)
        while True:
            finished = all((root / f"done-{p}").exists() for p in WRITERS)
            store = ParquetTableStore(root / "tables")
            judged = (
                store.read_partitions("aq_judgments", "judge_model")
                if store.partitions("aq_judgments", "judge_model")
                else None
            )
            rows = {} if judged is None else judged.groupby("judge_model").size().to_dict()
            report = _report(manager, root, instance).groupby("model").size().to_dict() if rows else {}
            seen.append({"finished": finished, "rows": rows, "report": report})
            if finished:
                break
    (root / "reads.json").write_text(json.dumps(seen))


@pytest.mark.concurrency
def test_eight_processes_write_partitions_while_reports_read(
    folder: Path, dagster_instance: dg.DagsterInstance, empty_instance_folder: Path
) -> None:
    """Nine real processes, forked from one server that imported this module once (``forkserver``):
    each still has its own interpreter state, instance and IO manager, as ``spawn`` gave them, without
    importing Dagster and the code location nine times."""
    os.environ.pop(TABLES_ENV_VAR, None)
    tables = folder / "tables"
    assert dg.materialize(
        UPSTREAM, resources=_resources(parquet_io_manager(str(tables)), folder), instance=dagster_instance
    ).success
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    go = folder / "go"
    empty = str(empty_instance_folder)
    writers = [context.Process(target=_writer, args=(str(folder), p, str(go), empty)) for p in WRITERS]
    reader = context.Process(target=_reader, args=(str(folder), str(go), empty))
    for process in [*writers, reader]:
        process.start()
    deadline = time.time() + 600
    while not all((folder / f"ready-{name}").exists() for name in [*WRITERS, "reader"]):
        assert time.time() < deadline, "processes did not start"
        time.sleep(0.1)
    go.touch()
    for process in [*writers, reader]:
        process.join(600)
        assert process.exitcode == 0
    reads = json.loads((folder / "reads.json").read_text())
    # The reads overlapped the writes, and every partition a read saw (directly, or through the
    # report) was whole: 945 judgment rows, 315 majority votes (comparisons x strategies).
    assert not reads[0]["finished"] and reads[-1]["finished"]
    for read in reads:
        assert all(n == ROWS_PER_PARTITION for n in read["rows"].values()), read["rows"]
        assert all(n == ROWS_PER_PARTITION // 3 for n in read["report"].values()), read["report"]
        assert set(read["rows"]) <= set(read["report"])
    assert sorted(reads[-1]["report"]) == WRITERS
    store = ParquetTableStore(tables)
    assert store.partitions("aq_judgments", "judge_model") == WRITERS
    final = store.read_partitions("aq_judgments", "judge_model")
    assert final is not None and len(final) == N_WRITERS * ROWS_PER_PARTITION
    assert not final.duplicated(["judge_model", "comparison_id", "strategy", "order", "run"]).any()
    with duckdb.connect() as con:  # the files are plain Parquet: any DuckDB reads them
        count = con.execute(
            "SELECT count(*) FROM read_parquet(?)", [str(tables / "aq_judgments" / "*" / "data.parquet")]
        ).fetchone()
    assert count == (N_WRITERS * ROWS_PER_PARTITION,)
