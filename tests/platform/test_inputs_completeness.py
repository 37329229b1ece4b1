"""Inputs checked against what their releases promise: a truncated or missing file fails, named,
before anything is written (Webis CSVs, political TSVs, QT30 nodesets)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from argassets.argument_quality.assets import corpora
from argassets.argument_quality.corpus import CorpusError, load_corpus, locate_corpus
from argassets.argument_quality.release_facts import WEBIS_RELEASE, webis_counts_for
from argassets.argument_quality.resources import WebisSourceResource
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.release_manifest import (
    ReleaseIncomplete,
    check_file_manifest,
    check_node_ids,
    read_file_manifest,
)
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.storage.reader_file import store_path
from argassets.political.assets import knowledge_base as kb
from argassets.political.published import read_published_tsv
from argassets.political.release_facts import QT30_MANIFEST, QT30_NODESET_PATTERN

ARGS = "webis-argquality20/full/webis-argquality20-arguments.csv"
RHETORIC = "webis-argquality20/raw/webis-argquality20-raw-rhetorical.csv"


def _drop_last_lines(path: Path, n: int) -> None:
    """Truncate a file at a line boundary: the result still parses."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-n]))


@pytest.fixture()
def webis_copy(shared_data_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(shared_data_dir / "webis-argquality20", target / "webis-argquality20")
    return target


def test_the_release_and_the_sample_hold_what_they_promise(shared_data_dir: Path) -> None:
    assert webis_counts_for(shared_data_dir / "webis-argquality20") == WEBIS_RELEASE
    arguments, comparisons = load_corpus(locate_corpus(shared_data_dir))
    assert len(arguments) == 1610
    assert comparisons.groupby("dimension").size().to_dict() == {"logic": 13952, "rhetoric": 13952, "dialectic": 13952}
    sample = webis_counts_for(SAMPLE_DATA_DIR / "webis-argquality20")
    assert (sample.texts, sample.comparisons_per_dimension) == (19, 35)
    assert len(load_corpus(locate_corpus(SAMPLE_DATA_DIR))[0]) == 19


def test_truncated_webis_files_fail_naming_the_file(webis_copy: Path) -> None:
    _drop_last_lines(webis_copy / RHETORIC, 100)
    with pytest.raises(CorpusError) as raised:
        load_corpus(locate_corpus(webis_copy))
    message = str(raised.value)
    assert "webis-argquality20-raw-rhetorical.csv: 13,852 comparisons" in message
    assert "holds 13,952 per dimension" in message and "raw-logical" not in message
    _drop_last_lines(webis_copy / ARGS, 10)
    with pytest.raises(
        CorpusError,
        match=r"webis-argquality20-arguments\.csv: 1,600 texts, the Webis-ArgQuality-20 release \(Zenodo 3780049\) holds 1,610",
    ):
        load_corpus(locate_corpus(webis_copy))


def test_a_truncated_corpus_writes_nothing(webis_copy: Path, tmp_path: Path) -> None:
    _drop_last_lines(webis_copy / RHETORIC, 1)
    database = tmp_path / "tables.duckdb"
    resources = {
        "io_manager": duckdb_io_manager(str(database)),
        "data": PublishedDataResource(data_dir=str(webis_copy)),
        "webis_source": WebisSourceResource(url=""),
    }
    result = dg.materialize([corpora.webis_corpus], resources=resources, raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "raw-rhetorical.csv: 13,951 comparisons" in failure.step_failure_data.error.message
    assert result.asset_materializations_for_node("webis_corpus") == []
    with duckdb.connect(str(store_path(database))) as con:
        assert con.execute("select count(*) from information_schema.tables").fetchone() == (0,)


def test_a_bad_corpus_manifest_is_named(webis_copy: Path) -> None:
    (webis_copy / "webis-argquality20" / "MANIFEST.json").write_text('{"texts": 3}')
    with pytest.raises(CorpusError, match=r"MANIFEST\.json: not a valid corpus manifest"):
        load_corpus(locate_corpus(webis_copy))


def test_political_tsv_truncated_or_with_a_gap_fails_naming_the_file(shared_data_dir: Path, tmp_path: Path) -> None:
    source = shared_data_dir / "political" / "predictions" / "gpt4o.tsv"
    assert len(read_published_tsv(source)) == 23300
    truncated = tmp_path / "gpt4o.tsv"
    shutil.copy(source, truncated)
    _drop_last_lines(truncated, 3)
    with pytest.raises(
        ValueError,
        match=r"gpt4o\.tsv: 23,297 rows, the release holds nodeID 0\.\.23,299 \(23,300 rows\) without gaps; 3 missing \(first: 23297, 23298, 23299\)",
    ):
        read_published_tsv(truncated)
    gap = tmp_path / "gap.tsv"
    lines = source.read_text().splitlines(keepends=True)
    gap.write_text("".join(lines[:1001] + lines[1002:]))  # drops nodeID 1000
    with pytest.raises(ValueError, match=r"gap\.tsv: .*1 missing \(first: 1000\)"):
        read_published_tsv(gap)
    # The ensembles hold a subset by design: read without the full-range promise.
    ensemble = read_published_tsv(shared_data_dir / "political" / "ensembles" / "ensemble2.tsv", expected_node_ids=None)
    assert len(ensemble) == 23228
    with pytest.raises(ReleaseIncomplete, match="outside that range"):
        check_node_ids([0, 1, 2, 7], "x.tsv", range(3))


def _qt30_links(shared_data_dir: Path, target: Path) -> Path:
    """A QT30 folder of symbolic links to the release's files (no copy of the data)."""
    source = shared_data_dir / "qt30"
    for path in source.rglob("*"):
        if path.is_file():
            link = target / path.relative_to(source)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(path)
    return target


def test_qt30_manifest_lists_the_release(shared_data_dir: Path) -> None:
    entries = read_file_manifest(QT30_MANIFEST)
    assert len(entries) == 1991
    assert check_file_manifest(shared_data_dir / "qt30", QT30_MANIFEST, QT30_NODESET_PATTERN) == 1991


def test_qt30_missing_truncated_or_foreign_files_are_named(shared_data_dir: Path, tmp_path: Path) -> None:
    qt30 = _qt30_links(shared_data_dir, tmp_path / "data" / "qt30")
    names = sorted(read_file_manifest(QT30_MANIFEST))
    missing, truncated = qt30 / names[5], qt30 / names[17]
    missing.unlink()
    data = truncated.read_bytes()
    truncated.unlink()
    truncated.write_bytes(data[: len(data) // 2])
    (qt30 / names[0]).parent.joinpath("nodeset99999999.json").write_text("{}")
    with pytest.raises(ReleaseIncomplete) as raised:
        check_file_manifest(qt30, QT30_MANIFEST, QT30_NODESET_PATTERN)
    message = str(raised.value)
    assert f"{missing}: missing" in message
    assert f"{truncated}: {len(data) // 2:,} bytes, the release's file has {len(data):,}" in message
    assert "nodeset99999999.json: not a file of the release" in message


def test_qt30_asset_fails_before_writing(shared_data_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "data"
    qt30 = _qt30_links(shared_data_dir, root / "qt30")
    gone = sorted(read_file_manifest(QT30_MANIFEST))[-1]
    (qt30 / gone).unlink()
    database = tmp_path / "kb.duckdb"
    result = dg.materialize(
        [kb.qt30_aif_tables],
        resources={"io_manager": duckdb_io_manager(str(database)), "data": PublishedDataResource(data_dir=str(root))},
        raise_on_error=False,
    )
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert f"{qt30 / gone}: missing" in failure.step_failure_data.error.message
    assert result.asset_materializations_for_node("qt30_aif_tables") == []
    with duckdb.connect(str(store_path(database))) as con:
        assert con.execute("select count(*) from information_schema.tables").fetchone() == (0,)
