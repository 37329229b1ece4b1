"""Corpus loading on the published Webis-ArgQuality-20 files and on the embedded sample."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest

from argassets.argument_quality.assets import corpora
from argassets.argument_quality.comparison_graph import comparison_components, cross_topic_comparisons, self_comparisons
from argassets.argument_quality.corpus import DIMENSIONS, load_corpus, locate_corpus
from argassets.argument_quality.resources import WebisSourceResource
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.storage import duckdb_io_manager


@pytest.fixture(scope="module")
def corpus(shared_data_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return load_corpus(locate_corpus(shared_data_dir))


def test_published_counts(corpus):
    arguments, comparisons = corpus
    assert len(arguments) == 1610
    assert int(arguments["is_argument"].sum()) == 1271
    assert arguments["topic_id"].nunique() == 20
    for dimension in DIMENSIONS:
        assert int((comparisons["dimension"] == dimension).sum()) == 13952
    assert set(comparisons["label"]) == {"A", "B", "Tie"}


def test_argument_columns_and_flags(corpus):
    arguments, _ = corpus
    assert list(arguments.columns) == [
        "topic_id",
        "discussion_id",
        "argument_id",
        "text",
        "is_argument",
        "relevance",
        "stance",
        "text_length",
        "published_logic",
        "published_rhetoric",
        "published_dialectic",
        "published_combined",
    ]
    assert not arguments.duplicated(["topic_id", "discussion_id", "argument_id"]).any()
    # non-argumentative texts carry -4.0 in every published score
    non_args = arguments[~arguments["is_argument"]]
    assert len(non_args) == 339
    assert (non_args["published_logic"] == -4.0).all()
    assert (non_args["published_combined"] == -4.0).all()
    # the placeholder -3.0: one argumentative (discussion, argument) key, listed in two topics
    placeholder = arguments[arguments["is_argument"] & (arguments["published_logic"] == -3.0)]
    assert placeholder[["discussion_id", "argument_id"]].drop_duplicates().shape[0] == 1
    assert sorted(placeholder["topic_id"]) == [2, 11]


def test_four_keys_occur_in_two_topics(corpus):
    arguments, _ = corpus
    counts = arguments.groupby(["discussion_id", "argument_id"])["topic_id"].nunique()
    shared = counts[counts > 1]
    assert len(shared) == 4
    assert (shared == 2).all()
    # each keeps its own score per topic
    key = (18018, 3)
    rows = arguments[(arguments.discussion_id == key[0]) & (arguments.argument_id == key[1])]
    assert sorted(rows["topic_id"]) == [1, 2]
    assert rows["published_logic"].nunique() == 2


def test_comparison_topics_and_ids(corpus):
    arguments, comparisons = corpus
    logic = comparisons[comparisons["dimension"] == "logic"]
    assert logic["comparison_id"].iloc[0] == "logic-00000"
    assert logic["comparison_id"].iloc[13951] == "logic-13951"
    assert (logic["source_row"].to_numpy() == range(13952)).all()
    assert comparisons["comparison_id"].is_unique
    # the first raw dialectical row (42495/1 vs 25519/4, B); its topic is the one both arguments share
    first = comparisons[comparisons["comparison_id"] == "dialectic-00000"].iloc[0]
    assert (first.discussion_id_a, first.argument_id_a, first.discussion_id_b, first.argument_id_b) == (
        42495,
        1,
        25519,
        4,
    )
    assert first.label == "B"
    topics_a = set(arguments.loc[(arguments.discussion_id == 42495) & (arguments.argument_id == 1), "topic_id"])
    assert first.topic_id in topics_a
    assert cross_topic_comparisons(comparisons, arguments).empty
    assert self_comparisons(comparisons).empty
    assert comparisons["topic_id"].nunique() == 20


def test_expert_graphs_are_connected(corpus):
    _, comparisons = corpus
    components = comparison_components(comparisons)
    assert len(components) == 60
    assert (components["components"] == 1).all()
    # topics 2 and 11 hold the never-compared placeholder: one argumentative text fewer in their graphs
    assert components.loc[components["topic_id"] == 2, "arguments"].tolist() == [60, 60, 60]


def test_component_count_on_a_split_graph():
    comparisons = pd.DataFrame(
        {
            "topic_id": [1, 1, 1],
            "dimension": ["logic"] * 3,
            "discussion_id_a": [1, 2, 5],
            "argument_id_a": [1, 1, 1],
            "discussion_id_b": [2, 3, 6],
            "argument_id_b": [1, 1, 1],
        }
    )
    row = comparison_components(comparisons).iloc[0]
    assert (row.arguments, row.comparisons, row.components, row.largest_component) == (5, 3, 2, 3)


def test_sample_corpus_loads():
    arguments, comparisons = load_corpus(locate_corpus(SAMPLE_DATA_DIR))
    assert arguments["topic_id"].nunique() == 3
    assert len(arguments) == 19 and int(arguments["is_argument"].sum()) == 16
    assert len(comparisons) == 105
    assert set(comparisons["label"]) == {"A", "B", "Tie"}
    assert (comparison_components(comparisons)["components"] == 1).all()


def _materialize(tmp_path: Path, data: PublishedDataResource, source: WebisSourceResource | None = None):
    database = tmp_path / "corpus.duckdb"
    result = dg.materialize(
        [corpora.webis_corpus],
        resources={
            "io_manager": duckdb_io_manager(str(database)),
            "data": data,
            "webis_source": source or WebisSourceResource(url=""),
        },
        raise_on_error=False,
    )
    return result, database


def test_corpus_asset_writes_duckdb_tables(tmp_path: Path, shared_data_dir: Path):
    result, database = _materialize(tmp_path, PublishedDataResource(data_dir=str(shared_data_dir)))
    assert result.success
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*), sum(is_argument::int) from webis_arguments").fetchone() == (1610, 1271)
        per_dim = dict(con.execute("select dimension, count(*) from webis_expert_comparisons group by 1").fetchall())
        assert per_dim == {"logic": 13952, "rhetoric": 13952, "dialectic": 13952}
    metadata = result.asset_materializations_for_node("webis_corpus")[0].metadata
    assert metadata["source"].value == "folder"


def test_sample_is_used_when_nothing_is_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("ARGASSETS_DATA_DIR", raising=False)
    monkeypatch.delenv("ARGASSETS_WEBIS_URL", raising=False)
    monkeypatch.setattr("argassets.platform.resources.data.resolve_data_dir", lambda explicit=None: None)
    result, database = _materialize(tmp_path, PublishedDataResource())
    assert result.success
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*) from webis_arguments").fetchone() == (19,)
        assert con.execute("select count(distinct topic_id) from webis_expert_comparisons").fetchone() == (3,)
