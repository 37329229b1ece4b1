"""Bad corpus input: a clear error naming the file and row, and nothing written."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from argassets.argument_quality.assets import corpora
from argassets.argument_quality.corpus import CorpusError, load_corpus, locate_corpus
from argassets.argument_quality.resources import WebisSourceResource
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.storage import duckdb_io_manager

ARGS = "webis-argquality20/full/webis-argquality20-arguments.csv"
LOGIC = "webis-argquality20/raw/webis-argquality20-raw-logical.csv"
RHETORIC = "webis-argquality20/raw/webis-argquality20-raw-rhetorical.csv"


@pytest.fixture()
def corpus_copy(tmp_path: Path) -> Path:
    """A writable copy of the invented sample corpus."""
    target = tmp_path / "data"
    shutil.copytree(SAMPLE_DATA_DIR, target)
    return target


def _edit_line(path: Path, line_number: int, transform) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[line_number - 1] = transform(lines[line_number - 1])
    path.write_text("".join(lines))


def _load(root: Path):
    return load_corpus(locate_corpus(root))


def test_missing_file(corpus_copy: Path):
    (corpus_copy / RHETORIC).unlink()
    with pytest.raises(CorpusError, match=r"webis-argquality20-raw-rhetorical\.csv: file not found"):
        _load(corpus_copy)


def test_missing_column(corpus_copy: Path):
    _edit_line(corpus_copy / ARGS, 1, lambda line: line.replace("Premise", "Text"))
    with pytest.raises(CorpusError, match=r"arguments\.csv: missing column\(s\) 'Premise'"):
        _load(corpus_copy)


def test_missing_comparison_column(corpus_copy: Path):
    _edit_line(corpus_copy / LOGIC, 1, lambda line: line.replace("Comparison", "Verdict"))
    with pytest.raises(CorpusError, match=r"raw-logical\.csv: missing column\(s\) 'Comparison'"):
        _load(corpus_copy)


def test_unknown_argument_id(corpus_copy: Path):
    # data row 3 (line 5) of the logical file: argument B becomes an id that does not exist
    _edit_line(
        corpus_copy / LOGIC, 5, lambda line: ",".join(line.split(",")[:2] + ["99999", "7"] + line.split(",")[4:])
    )
    with pytest.raises(
        CorpusError,
        match=r"raw-logical\.csv: row 3 \(line 5\): unknown argument B \(Discussion ID 99999, Argument ID 7\)",
    ):
        _load(corpus_copy)


def test_comparison_across_topics(corpus_copy: Path):
    # row 0 compares two topic-1 arguments; make B a topic-2 argument (90201/1)
    _edit_line(
        corpus_copy / LOGIC, 2, lambda line: ",".join(line.split(",")[:2] + ["90201", "1"] + line.split(",")[4:])
    )
    with pytest.raises(CorpusError, match=r"raw-logical\.csv: row 0 \(line 2\): comparison across topics"):
        _load(corpus_copy)


def test_duplicate_argument_ids(corpus_copy: Path):
    path = corpus_copy / ARGS
    lines = path.read_text().splitlines(keepends=True)
    lines.append(lines[2])  # data row 1 (line 3) again, as data row 19
    path.write_text("".join(lines))
    with pytest.raises(
        CorpusError,
        match=r"arguments\.csv: row 19 \(line 21\): duplicate argument \(Topic ID 1, Discussion ID 90101, Argument ID 2\), first seen in row 1",
    ):
        _load(corpus_copy)


def test_bad_label(corpus_copy: Path):
    _edit_line(corpus_copy / LOGIC, 4, lambda line: line.rsplit(",", 1)[0] + ",maybe\n")
    with pytest.raises(
        CorpusError, match=r"raw-logical\.csv: row 2 \(line 4\): column 'Comparison' must be A, B or Tie, got 'maybe'"
    ):
        _load(corpus_copy)


def test_non_integer_id(corpus_copy: Path):
    _edit_line(corpus_copy / ARGS, 3, lambda line: "one" + line[1:])
    with pytest.raises(
        CorpusError, match=r"arguments\.csv: row 1 \(line 3\): column 'Topic ID' must be an integer, got 'one'"
    ):
        _load(corpus_copy)


def test_bad_input_writes_nothing(corpus_copy: Path, tmp_path: Path):
    database = tmp_path / "bad.duckdb"
    resources = {
        "io_manager": duckdb_io_manager(str(database)),
        "data": PublishedDataResource(data_dir=str(corpus_copy)),
        "webis_source": WebisSourceResource(url=""),
    }
    assert dg.materialize([corpora.webis_corpus], resources=resources).success
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*) from webis_arguments").fetchone() == (19,)
    # now break the comparisons: the good tables stay as they were, neither is rewritten
    _edit_line(corpus_copy / ARGS, 2, lambda line: line.replace("Car-free", "CHANGED"))
    _edit_line(
        corpus_copy / LOGIC, 2, lambda line: ",".join(line.split(",")[:2] + ["90201", "1"] + line.split(",")[4:])
    )
    result = dg.materialize([corpora.webis_corpus], resources=resources, raise_on_error=False)
    assert not result.success
    failure = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"][0]
    assert "comparison across topics" in failure.step_failure_data.error.message
    assert "raw-logical.csv: row 0" in failure.step_failure_data.error.message
    assert result.asset_materializations_for_node("webis_corpus") == []
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*) from webis_arguments where text like 'CHANGED%'").fetchone() == (0,)
        assert con.execute("select count(*) from webis_expert_comparisons").fetchone() == (105,)


# --- well-formed but wrong (issue 21, part 6) --------------------------------------------------


def test_a_row_deleted_and_another_duplicated_keeps_the_count_and_is_refused(corpus_copy: Path):
    path = corpus_copy / LOGIC
    lines = path.read_text().splitlines(keepends=True)
    del lines[5]  # data row 4 gone
    lines.append(lines[2])  # data row 1 again, at the end: the count is unchanged
    path.write_text("".join(lines))
    with pytest.raises(
        CorpusError, match=r"raw-logical\.csv: row 34 \(line 36\): duplicate pair .* first compared in row 1"
    ):
        _load(corpus_copy)


def test_a_text_that_is_not_its_recorded_length_is_refused(corpus_copy: Path):
    # data row 2 (line 4): its text replaced by a long one, its Text Length left as it was
    path = corpus_copy / ARGS
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    rows[3][rows[0].index("Premise")] = "word " * 20_000 + "end"
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    with pytest.raises(
        CorpusError,
        match=r"arguments\.csv: row 2 \(line 4\): column 'Text Length' is \d+ but the text \('Premise', 100,003 "
        r"characters\) has 20,001 words",
    ):
        _load(corpus_copy)


def test_the_release_pairs_are_checked_against_their_digest(shared_data_dir: Path, tmp_path: Path):
    release = tmp_path / "webis-argquality20"
    shutil.copytree(shared_data_dir / "webis-argquality20", release)
    arguments, comparisons = load_corpus(locate_corpus(release))  # the release itself passes
    assert len(arguments) == 1_610 and len(comparisons) == 3 * 13_952
    # One label changed: well-formed, the same count, no duplicate, but not the release.
    path = release / "raw" / "webis-argquality20-raw-rhetorical.csv"
    lines = path.read_text().splitlines(keepends=True)
    label = lines[10].rstrip("\n").rsplit(",", 1)[1]
    lines[10] = lines[10].rstrip("\n").rsplit(",", 1)[0] + ("," + ("B" if label == "A" else "A")) + "\n"
    path.write_text("".join(lines))
    with pytest.raises(CorpusError, match=r"raw-rhetorical\.csv: its pairs and labels are not those of the Webis"):
        load_corpus(locate_corpus(release))
