"""The political knowledge base over the QT30 union graph: arguments (L-YA-I) and their relations.

QT30 in the Argument Interchange Format (AIF): parsing, episodes, and the political knowledge base.

Plain functions, no Dagster. The corpus is a folder of nodeset files (``nodeset<N>.json``), each a
graph of typed nodes (L locution, I proposition, YA illocutionary anchor, RA inference, CA conflict,
MA rephrase, TA transition) and directed edges. Two file shapes load: ``{"nodes": [...], "edges":
[...]}`` and the same wrapped in ``{"AIF": {...}}``.

The knowledge base (KB) is built over the *union graph* of all nodesets: a node that several nodesets
share (the QT30 release has 30 cross-segment "glue" nodesets that repeat nodes of the segments they
join) is one node. An **argument** is one YA anchor joining a locution to a proposition
(L -> YA -> I). **Relations** are the AIF relation nodes mapped onto arguments: for an RA/CA/MA node
every (I source, I target) pair becomes a relation between every argument anchoring the source and
every argument anchoring the target; for a TA node every (L source, L target) pair likewise through
the arguments of those locutions.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from argassets.political.aif import RELATION_OF_TYPE, AIFError, Corpus, nodeset_number
from argassets.political.episodes import assign_episodes

NODE_COLUMNS = [
    "nodeset",
    "node_id",
    "node_type",
    "text",
    "timestamp",
    "scheme",
    "episode",
    "episode_source",
    "source_file",
]

EDGE_COLUMNS = ["nodeset", "edge_id", "from_id", "to_id", "source_file"]

ARGUMENT_COLUMNS = [
    "argument_id",
    "episode",
    "nodeset",
    "speaker",
    "locution",
    "proposition",
    "force",
    "timestamp",
    "l_node_id",
    "i_node_id",
    "ya_node_id",
]

RELATION_COLUMNS = ["source_id", "target_id", "relation", "aif_node_id", "nodeset"]


def corpus_tables(corpus: Corpus, episodes: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The corpus as a long nodes table (one row per node per nodeset) and an edges table."""
    if episodes is None:
        episodes = assign_episodes(corpus)
    episode_of = dict(
        zip(episodes["nodeset"], zip(episodes["episode"], episodes["episode_source"], strict=False), strict=False)
    )
    root = Path(corpus.root)
    node_rows = []
    edge_rows = []
    for nodeset in corpus.nodesets:
        episode, source = episode_of.get(nodeset.name, ("", "unknown"))
        try:
            rel = str(Path(nodeset.path).relative_to(root))
        except ValueError:
            rel = nodeset.path
        for n in nodeset.nodes:
            node_rows.append(
                (nodeset.name, n.node_id, n.node_type, n.text, n.timestamp, n.scheme, episode, source, rel)
            )
        for edge_id, source_id, target_id in nodeset.edges:
            edge_rows.append((nodeset.name, edge_id, source_id, target_id, rel))
    return pd.DataFrame(node_rows, columns=NODE_COLUMNS), pd.DataFrame(edge_rows, columns=EDGE_COLUMNS)


def split_speaker(locution: str) -> tuple[str, str]:
    """``"Claire Fox : They actually..."`` -> ``("Claire Fox", "They actually...")``.

    The speaker is the text before the first colon; a locution without a colon has speaker ``""``
    and is returned whole.
    """
    head, sep, tail = locution.partition(":")
    if not sep:
        return "", locution.strip()
    return head.strip(), tail.strip()


@dataclass(frozen=True)
class UnionGraph:
    """The union of all nodesets: one entry per node id, edges deduplicated."""

    node_type: dict[str, str]
    text: dict[str, str]
    timestamp: dict[str, str]
    scheme: dict[str, str]
    first_nodeset: dict[str, str]
    nodesets_of: dict[str, list[str]]
    preds: dict[str, list[str]]
    succs: dict[str, list[str]]


def union_graph(nodes: pd.DataFrame, edges: pd.DataFrame) -> UnionGraph:
    """Merge the per-nodeset tables into one graph keyed by node id.

    Raises
    ------
    AIFError
        A node id that two nodesets define with different type or text, or an edge whose end is
        no node of the corpus.
    """
    order = nodes.assign(_n=nodes["nodeset"].map(nodeset_number)).sort_values(["_n", "nodeset"], kind="stable")
    node_type: dict[str, str] = {}
    text: dict[str, str] = {}
    timestamp: dict[str, str] = {}
    scheme: dict[str, str] = {}
    first: dict[str, str] = {}
    nodesets_of: dict[str, list[str]] = defaultdict(list)
    for nodeset, node_id, typ, txt, ts, sch, src in zip(
        order["nodeset"],
        order["node_id"],
        order["node_type"],
        order["text"],
        order["timestamp"],
        order["scheme"],
        order["source_file"],
        strict=False,
    ):
        if node_id in node_type:
            if node_type[node_id] != typ or text[node_id] != txt:
                raise AIFError(src, f"node {node_id} differs from its copy in {first[node_id]} (type or text)")
        else:
            node_type[node_id], text[node_id], timestamp[node_id], scheme[node_id] = typ, txt, ts, sch
            first[node_id] = nodeset
        nodesets_of[node_id].append(nodeset)
    preds: dict[str, list[str]] = defaultdict(list)
    succs: dict[str, list[str]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    for source_id, target_id, src in zip(edges["from_id"], edges["to_id"], edges["source_file"], strict=False):
        if (source_id, target_id) in seen:
            continue
        for end in (source_id, target_id):
            if end not in node_type:
                raise AIFError(src, f"edge {source_id}->{target_id} refers to unknown node {end}")
        seen.add((source_id, target_id))
        succs[source_id].append(target_id)
        preds[target_id].append(source_id)
    return UnionGraph(node_type, text, timestamp, scheme, first, dict(nodesets_of), dict(preds), dict(succs))


def _sorted_ids(ids: Iterable[str]) -> list[str]:
    return sorted(set(ids), key=lambda s: (len(s), s))


def argument_id(l_node_id: str, ya_node_id: str, i_node_id: str) -> str:
    """Stable KB id of the argument anchored by YA node ``ya`` from locution ``l`` to proposition ``i``."""
    return f"L{l_node_id}-YA{ya_node_id}-I{i_node_id}"


def build_arguments(nodes: pd.DataFrame, edges: pd.DataFrame, graph: UnionGraph | None = None) -> pd.DataFrame:
    """One row per YA anchor joining a locution (L) to a proposition (I), over the union graph.

    ``nodeset`` and ``episode`` are those of the first nodeset (by number) holding the YA node.
    Rows are ordered by nodeset number, then YA node id.
    """
    graph = graph or union_graph(nodes, edges)
    episode_of = dict(zip(nodes["nodeset"], nodes["episode"], strict=False))
    rows = []
    for ya, typ in graph.node_type.items():
        if typ != "YA":
            continue
        locutions = [p for p in graph.preds.get(ya, []) if graph.node_type[p] == "L"]
        propositions = [s for s in graph.succs.get(ya, []) if graph.node_type[s] == "I"]
        for l_id in _sorted_ids(locutions):
            speaker, locution = split_speaker(graph.text[l_id])
            for i_id in _sorted_ids(propositions):
                nodeset = graph.first_nodeset[ya]
                rows.append(
                    (
                        argument_id(l_id, ya, i_id),
                        episode_of.get(nodeset, ""),
                        nodeset,
                        speaker,
                        locution,
                        graph.text[i_id].strip(),
                        graph.text[ya].strip(),
                        graph.timestamp[l_id],
                        l_id,
                        i_id,
                        ya,
                        nodeset_number(nodeset),
                        int(ya) if ya.isdigit() else -1,
                    )
                )
    frame = pd.DataFrame(rows, columns=ARGUMENT_COLUMNS + ["_n", "_ya"])
    frame = frame.sort_values(["_n", "_ya", "argument_id"], kind="stable").drop(columns=["_n", "_ya"])
    return frame.reset_index(drop=True)


@dataclass
class RelationReport:
    """How AIF relation nodes became KB relations (per AIF type)."""

    aif_nodes: Counter = field(default_factory=Counter)  # relation nodes in the union graph
    endpoint_pairs: Counter = field(default_factory=Counter)  # (source, target) proposition/locution pairs
    mapped_pairs: Counter = field(default_factory=Counter)  # pairs whose both ends have arguments
    unanchored_pairs: Counter = field(default_factory=Counter)  # pairs with an end that anchors no argument
    nodes_without_pairs: Counter = field(default_factory=Counter)  # relation nodes lacking an I/L source or target
    relations: Counter = field(default_factory=Counter)  # KB relation rows (after fan-out)
    fanned_out: Counter = field(default_factory=Counter)  # extra rows because an end has several arguments

    def as_frame(self) -> pd.DataFrame:
        rows = []
        for aif_type, relation in RELATION_OF_TYPE.items():
            rows.append(
                {
                    "aif_type": aif_type,
                    "relation": relation,
                    "aif_nodes": self.aif_nodes[aif_type],
                    "nodes_without_endpoints": self.nodes_without_pairs[aif_type],
                    "endpoint_pairs": self.endpoint_pairs[aif_type],
                    "unanchored_pairs": self.unanchored_pairs[aif_type],
                    "mapped_pairs": self.mapped_pairs[aif_type],
                    "extra_rows_from_fan_out": self.fanned_out[aif_type],
                    "relations": self.relations[aif_type],
                }
            )
        return pd.DataFrame(rows)


def build_relations(
    arguments: pd.DataFrame, nodes: pd.DataFrame, edges: pd.DataFrame, graph: UnionGraph | None = None
) -> tuple[pd.DataFrame, RelationReport]:
    """Map RA/CA/MA (between propositions) and TA (between locutions) onto argument pairs.

    An endpoint that anchors several arguments (a proposition asserted in two locutions, a locution
    anchoring two propositions) fans out to every such argument; a pair with an end that anchors no
    argument (e.g. a proposition introduced only by a transition's illocution, or the outer locution
    of reported speech) yields no relation and is counted in the report.
    """
    graph = graph or union_graph(nodes, edges)
    by_i: dict[str, list[str]] = defaultdict(list)
    by_l: dict[str, list[str]] = defaultdict(list)
    for arg, l_id, i_id in zip(arguments["argument_id"], arguments["l_node_id"], arguments["i_node_id"], strict=False):
        by_i[i_id].append(arg)
        by_l[l_id].append(arg)
    report = RelationReport()
    rows: list[tuple[str, str, str, str, str]] = []
    relation_nodes = sorted(
        (n for n, t in graph.node_type.items() if t in RELATION_OF_TYPE),
        key=lambda n: (nodeset_number(graph.first_nodeset[n]), len(n), n),
    )
    for node in relation_nodes:
        aif_type = graph.node_type[node]
        relation = RELATION_OF_TYPE[aif_type]
        end_type = "L" if aif_type == "TA" else "I"
        index = by_l if aif_type == "TA" else by_i
        report.aif_nodes[aif_type] += 1
        sources = _sorted_ids(p for p in graph.preds.get(node, []) if graph.node_type[p] == end_type)
        targets = _sorted_ids(s for s in graph.succs.get(node, []) if graph.node_type[s] == end_type)
        if not sources or not targets:
            report.nodes_without_pairs[aif_type] += 1
            continue
        for source in sources:
            for target in targets:
                if source == target:
                    continue
                report.endpoint_pairs[aif_type] += 1
                src_args, tgt_args = index.get(source, []), index.get(target, [])
                if not src_args or not tgt_args:
                    report.unanchored_pairs[aif_type] += 1
                    continue
                report.mapped_pairs[aif_type] += 1
                report.fanned_out[aif_type] += len(src_args) * len(tgt_args) - 1
                for a in src_args:
                    for b in tgt_args:
                        if a != b:
                            rows.append((a, b, relation, node, graph.first_nodeset[node]))
    frame = pd.DataFrame(rows, columns=RELATION_COLUMNS).drop_duplicates(
        ["source_id", "target_id", "relation", "aif_node_id"]
    )
    for aif_type, relation in RELATION_OF_TYPE.items():
        report.relations[aif_type] = int((frame["relation"] == relation).sum())
    return frame.reset_index(drop=True), report


def counts_by(values: Sequence[str] | pd.Series) -> dict[str, int]:
    """Plain ``{value: count}`` sorted by value (for metadata)."""
    return {str(k): int(v) for k, v in sorted(Counter(values).items())}
