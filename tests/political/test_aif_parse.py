"""AIF parsing: both file shapes, every kind of bad input, corpus loading and episode inference."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from argassets.political import aif
from argassets.political import episodes as aif_episodes
from argassets.political import knowledge_base as kb_graph

NODES = [
    {"nodeID": "1", "text": "Ann Smith : We must act now", "type": "L", "timestamp": "2021-05-20 10:00:00"},
    {"nodeID": "2", "text": "Asserting", "type": "YA", "timestamp": "2021-05-20 10:00:01", "scheme": "Asserting"},
    {"nodeID": "3", "text": "we must act now", "type": "I", "timestamp": "2021-05-20 10:00:02"},
]
EDGES = [{"edgeID": "10", "fromID": "1", "toID": "2"}, {"edgeID": "11", "fromID": "2", "toID": "3"}]


def write(path: Path, payload: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


def test_both_file_shapes_parse_to_the_same_nodeset(tmp_path: Path) -> None:
    plain = aif.parse_nodeset(
        write(tmp_path / "a" / "nodeset1.json", {"nodes": NODES, "edges": EDGES, "locutions": []})
    )
    wrapped = aif.parse_nodeset(write(tmp_path / "b" / "nodeset1.json", {"AIF": {"nodes": NODES, "edges": EDGES}}))
    assert plain.name == wrapped.name == "nodeset1"
    assert plain.nodes == wrapped.nodes
    assert plain.edges == wrapped.edges == (("10", "1", "2"), ("11", "2", "3"))
    assert [n.node_type for n in plain.nodes] == ["L", "YA", "I"]
    assert plain.nodes[1].scheme == "Asserting"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{not json", "not readable as JSON"),
        ({"nodes": NODES}, "expected an object with 'nodes' and 'edges'"),
        ({"nodes": [{"text": "x", "type": "I"}], "edges": []}, "node #0 has no nodeID"),
        ({"nodes": [{"nodeID": "9", "text": "x", "type": "ZZ"}], "edges": []}, "node 9 has unknown type 'ZZ'"),
        (
            {"nodes": NODES, "edges": [{"edgeID": "77", "fromID": "1", "toID": "404"}]},
            "edge 77 refers to unknown node 404",
        ),
        (
            {"nodes": NODES + [{**NODES[2], "text": "other text"}], "edges": EDGES},
            "duplicate node id 3 with different content",
        ),
        ({"nodes": NODES, "edges": [{"edgeID": "5", "fromID": "1"}]}, "edge #0 lacks fromID/toID"),
    ],
)
def test_bad_files_raise_an_error_naming_file_and_item(tmp_path: Path, payload: object, message: str) -> None:
    path = write(tmp_path / "nodeset7.json", payload)
    with pytest.raises(aif.AIFError) as caught:
        aif.parse_nodeset(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)
    assert caught.value.path == str(path)


def test_identical_duplicate_nodes_and_edges_collapse(tmp_path: Path) -> None:
    nodeset = aif.parse_nodeset(
        write(tmp_path / "nodeset2.json", {"nodes": NODES + [NODES[0]], "edges": EDGES + [EDGES[0]]})
    )
    assert len(nodeset.nodes) == 3
    assert len(nodeset.edges) == 2


def test_load_corpus_fails_or_skips_and_lists_the_bad_file(tmp_path: Path) -> None:
    write(tmp_path / "batch" / "nodeset1.json", {"nodes": NODES, "edges": EDGES})
    bad = write(
        tmp_path / "batch" / "nodeset2.json", {"nodes": NODES, "edges": [{"edgeID": "9", "fromID": "1", "toID": "55"}]}
    )
    with pytest.raises(aif.AIFError, match="nodeset2.json: edge 9 refers to unknown node 55"):
        aif.load_corpus(tmp_path)
    corpus = aif.load_corpus(tmp_path, on_error="skip")
    assert [n.name for n in corpus.nodesets] == ["nodeset1"]
    assert corpus.skipped == [(str(bad), f"{bad}: edge 9 refers to unknown node 55")]
    with pytest.raises(ValueError, match="on_error"):
        aif.load_corpus(tmp_path, on_error="ignore")


def test_copies_of_a_nodeset_are_read_once_and_must_agree(tmp_path: Path) -> None:
    write(tmp_path / "cutiestestrun20may2021" / "nodeset1.json", {"nodes": NODES, "edges": EDGES})
    write(tmp_path / "qt30" / "nodeset1.json", {"AIF": {"nodes": NODES, "edges": EDGES}})
    corpus = aif.load_corpus(tmp_path)
    assert len(corpus.nodesets) == 1
    assert sorted(Path(p).parent.name for p in corpus.duplicates["nodeset1"]) == ["cutiestestrun20may2021", "qt30"]
    episodes = aif_episodes.assign_episodes(corpus)
    assert episodes.to_dict("records") == [{"nodeset": "nodeset1", "episode": "2021-05-20", "episode_source": "folder"}]
    write(tmp_path / "qt30" / "nodeset1.json", {"nodes": NODES[:2], "edges": EDGES[:1]})
    with pytest.raises(aif.AIFError, match="differs from another copy of nodeset1"):
        aif.load_corpus(tmp_path)


def test_small_helpers() -> None:
    assert aif_episodes.folder_date("cutiestestrun18march2021") == "2021-03-18"
    assert aif_episodes.folder_date("cutiestestrun5November2020") == "2020-11-05"
    assert aif_episodes.folder_date("qt30") is None
    assert aif_episodes.audience_label_dates(
        ["AudienceMember 20210318QT14 : hi", "x 20211111QT03 and 20211111QT04"]
    ) == Counter({"2021-03-18": 1, "2021-11-11": 2})
    assert kb_graph.split_speaker("Claire Fox : They actually: did") == ("Claire Fox", "They actually: did")
    assert kb_graph.split_speaker("Kofie Unknown  : that we are") == ("Kofie Unknown", "that we are")
    assert kb_graph.split_speaker("no speaker here") == ("", "no speaker here")
    assert aif.nodeset_number("nodeset17918") == 17918
    assert kb_graph.argument_id("1", "2", "3") == "L1-YA2-I3"


def test_the_published_corpus_loads_with_its_known_facts(qt30_kb) -> None:
    corpus = qt30_kb.corpus
    assert corpus.files_seen == 1991
    assert len(corpus.nodesets) == 1478
    # the 513 extra files are copies held both by a release-batch folder and by qt30/
    assert sum(len(v) - 1 for v in corpus.duplicates.values()) == 513
    assert all(sorted(Path(p).parent.name for p in v)[-1] == "qt30" and len(v) == 2 for v in corpus.duplicates.values())
    assert corpus.skipped == []
    counts = qt30_kb.nodes["node_type"].value_counts().to_dict()
    assert counts == {"L": 49513, "YA": 34393, "I": 23465, "TA": 23038, "MA": 5848, "RA": 5687, "CA": 1232}
    assert qt30_kb.nodes.groupby("nodeset").size().min() > 0
    assert len(qt30_kb.graph.node_type) == qt30_kb.nodes["node_id"].nunique()


def test_episodes_are_the_thirty_broadcasts(qt30_kb, shared_data_dir: Path) -> None:
    episodes = qt30_kb.episodes
    assert episodes["episode"].nunique() == 30
    assert episodes["episode"].min() == "2020-05-28" and episodes["episode"].max() == "2021-11-11"
    sources = episodes["episode_source"].value_counts().to_dict()
    assert sources["folder"] == 513
    assert set(sources) == {"folder", "audience_label", "timestamp", "nearest_nodeset"}
    by_name = dict(zip(episodes["nodeset"], episodes["episode"], strict=False))
    # release-batch folder cutiestestrun18march2021 holds nodeset20728 (its L timestamps say 2021-04-01)
    assert by_name["nodeset20728"] == "2021-03-18"
    # early episodes are dated by their locutions' timestamps
    assert by_name["nodeset17918"] == "2020-05-28"
    # late episodes (annotated in 2022) by their audience labels
    assert by_name["nodeset23491"] == "2021-11-11"
