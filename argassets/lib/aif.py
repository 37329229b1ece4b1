"""QT30 in the Argument Interchange Format (AIF): parsing, episodes, and the political knowledge base.

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

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

#: Node types of AIF as used by QT30.
NODE_TYPES = ("L", "I", "YA", "RA", "CA", "MA", "TA")
#: KB relation name per AIF relation node type.
RELATION_OF_TYPE = {"RA": "SUPPORTS", "CA": "ATTACKS", "MA": "IS_A_REPHRASE_OF", "TA": "TRANSITIONS_TO"}
RELATIONS = tuple(RELATION_OF_TYPE.values())
#: Published KB of "Validating Political Position Predictions of Arguments".
PUBLISHED_ARGUMENTS = 23_228
PUBLISHED_RELATIONS = 50_905
#: Rows of the published prediction files (``nodeID`` 0 .. 23,299).
PUBLISHED_PREDICTION_ROWS = 23_300

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

_MONTHS = {
    name: number
    for number, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}
_FOLDER_DATE = re.compile(r"(\d{1,2})([A-Za-z]+)(\d{4})$")
_AUDIENCE_LABEL = re.compile(r"(20\d{2})(\d{2})(\d{2})QT\d+")
_AUDIENCE_LABEL_FULL = re.compile(r"20\d{6}QT\d+")
_NODESET_NUMBER = re.compile(r"(\d+)")


class AIFError(ValueError):
    """A nodeset file that cannot be read as AIF; the message names the file and the item."""

    def __init__(self, path: str | Path, message: str):
        self.path = str(path)
        super().__init__(f"{path}: {message}")


@dataclass(frozen=True)
class AIFNode:
    node_id: str
    node_type: str
    text: str
    timestamp: str
    scheme: str


@dataclass(frozen=True)
class AIFNodeset:
    """One parsed nodeset file."""

    name: str  # file stem, e.g. ``nodeset17918``
    path: str
    nodes: tuple[AIFNode, ...]
    edges: tuple[tuple[str, str, str], ...]  # (edge_id, from_id, to_id)
    sha256: str


@dataclass
class Corpus:
    """Every distinct nodeset of a corpus folder, plus what loading found on the way.

    ``duplicates`` maps a nodeset name to every file holding it (identical copies; the first is
    the one read); ``skipped`` lists ``(file, reason)`` for files left out with ``on_error="skip"``.
    """

    root: str
    nodesets: list[AIFNodeset]
    duplicates: dict[str, list[str]] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    files_seen: int = 0

    def folders_of(self, name: str) -> list[str]:
        """Parent folder names of every file that holds nodeset ``name``."""
        paths = self.duplicates.get(name) or [n.path for n in self.nodesets if n.name == name]
        return [Path(p).parent.name for p in paths]


def nodeset_number(name: str) -> int:
    """The integer of a nodeset name (``nodeset17918`` -> 17918); -1 when it has none."""
    match = _NODESET_NUMBER.search(name)
    return int(match.group(1)) if match else -1


def _text(value: object) -> str:
    return "" if value is None else str(value)


def parse_nodeset(path: str | Path, data: Mapping | None = None) -> AIFNodeset:
    """Parse one AIF nodeset file (plain or ``{"AIF": ...}``-wrapped).

    Raises
    ------
    AIFError
        Unreadable JSON, no ``nodes``/``edges`` lists, a node without ``nodeID`` or with an unknown
        ``type``, a duplicate ``nodeID`` with different content, or an edge to a node id that the
        file does not define. The message names the file and the offending id.
    """
    path = Path(path)
    raw_bytes = b""
    if data is None:
        try:
            raw_bytes = path.read_bytes()
            data = json.loads(raw_bytes)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise AIFError(path, f"not readable as JSON ({exc})") from exc
    else:
        raw_bytes = json.dumps(data, sort_keys=True).encode()
    if isinstance(data, Mapping) and isinstance(data.get("AIF"), Mapping):
        data = data["AIF"]
    if not isinstance(data, Mapping) or not isinstance(data.get("nodes"), list) or not isinstance(data.get("edges"), list):
        raise AIFError(path, "expected an object with 'nodes' and 'edges' lists (optionally inside 'AIF')")
    nodes: dict[str, AIFNode] = {}
    for index, raw in enumerate(data["nodes"]):
        if not isinstance(raw, Mapping) or raw.get("nodeID") in (None, ""):
            raise AIFError(path, f"node #{index} has no nodeID")
        node_id = str(raw["nodeID"])
        node_type = _text(raw.get("type"))
        if node_type not in NODE_TYPES:
            raise AIFError(path, f"node {node_id} has unknown type {node_type!r} (expected one of {NODE_TYPES})")
        node = AIFNode(
            node_id=node_id,
            node_type=node_type,
            text=_text(raw.get("text")),
            timestamp=_text(raw.get("timestamp")),
            scheme=_text(raw.get("scheme")),
        )
        if node_id in nodes:
            if nodes[node_id] != node:
                raise AIFError(path, f"duplicate node id {node_id} with different content")
            continue
        nodes[node_id] = node
    edges: list[tuple[str, str, str]] = []
    seen_edges: set[tuple[str, str]] = set()
    for index, raw in enumerate(data["edges"]):
        if not isinstance(raw, Mapping) or raw.get("fromID") in (None, "") or raw.get("toID") in (None, ""):
            raise AIFError(path, f"edge #{index} lacks fromID/toID")
        edge_id = _text(raw.get("edgeID")) or f"#{index}"
        source, target = str(raw["fromID"]), str(raw["toID"])
        for end in (source, target):
            if end not in nodes:
                raise AIFError(path, f"edge {edge_id} refers to unknown node {end}")
        if (source, target) in seen_edges:
            continue
        seen_edges.add((source, target))
        edges.append((edge_id, source, target))
    return AIFNodeset(
        name=path.stem,
        path=str(path),
        nodes=tuple(nodes.values()),
        edges=tuple(edges),
        sha256=hashlib.sha256(raw_bytes).hexdigest(),
    )


def discover_nodesets(root: str | Path) -> list[Path]:
    """Every ``nodeset*.json`` below ``root`` (recursively), in a stable order."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: AIF corpus folder not found")
    return sorted(root.rglob("nodeset*.json"), key=lambda p: (nodeset_number(p.stem), str(p)))


def load_corpus(root: str | Path, on_error: str = "fail") -> Corpus:
    """Read every nodeset file below ``root``, once per distinct nodeset.

    The QT30 release holds some nodesets twice (a release-batch folder and the ``qt30`` folder);
    copies of one nodeset name must be identical (same parsed nodes and edges), and are read once.

    Parameters
    ----------
    on_error : {"fail", "skip"}
        ``"fail"`` (default) raises the first :class:`AIFError`; ``"skip"`` leaves the file out and
        records ``(file, reason)`` in ``Corpus.skipped``. Two copies of one nodeset that differ
        always fail: neither can be preferred silently.
    """
    if on_error not in ("fail", "skip"):
        raise ValueError(f"on_error must be 'fail' or 'skip', not {on_error!r}")
    paths = discover_nodesets(root)
    if not paths:
        raise FileNotFoundError(f"{root}: no nodeset*.json files found")
    by_name: dict[str, AIFNodeset] = {}
    copies: dict[str, list[str]] = defaultdict(list)
    skipped: list[tuple[str, str]] = []
    for path in paths:
        try:
            nodeset = parse_nodeset(path)
        except AIFError as exc:
            if on_error == "fail":
                raise
            skipped.append((str(path), str(exc)))
            continue
        copies[nodeset.name].append(str(path))
        first = by_name.get(nodeset.name)
        if first is None:
            by_name[nodeset.name] = nodeset
        elif (first.nodes, first.edges) != (nodeset.nodes, nodeset.edges):
            raise AIFError(path, f"differs from another copy of {nodeset.name} at {first.path}")
    nodesets = sorted(by_name.values(), key=lambda n: (nodeset_number(n.name), n.name))
    duplicates = {name: files for name, files in copies.items() if len(files) > 1}
    return Corpus(root=str(root), nodesets=nodesets, duplicates=duplicates, skipped=skipped, files_seen=len(paths))


# --------------------------------------------------------------------------------------------
# Episodes
# --------------------------------------------------------------------------------------------


def folder_date(folder: str) -> str | None:
    """ISO date named by a release-batch folder (``cutiestestrun18march2021`` -> ``2021-03-18``)."""
    match = _FOLDER_DATE.search(folder)
    if not match:
        return None
    month = _MONTHS.get(match.group(2).lower())
    if month is None:
        return None
    return f"{match.group(3)}-{month:02d}-{int(match.group(1)):02d}"


def audience_label_dates(texts: Iterable[str]) -> Counter:
    """Dates in anonymised audience speaker labels (``AudienceMember 20210318QT14``), counted."""
    dates: Counter = Counter()
    for text in texts:
        for year, month, day in _AUDIENCE_LABEL.findall(text):
            dates[f"{year}-{month}-{day}"] += 1
    return dates


def assign_episodes(corpus: Corpus, min_cluster: int = 10, min_distinct_labels: int = 3) -> pd.DataFrame:
    """The broadcast date (``YYYY-MM-DD``) of the episode each nodeset annotates.

    QT30 carries no episode field, so the date is inferred, in this order of evidence:

    1. ``folder``: a release-batch folder named after a broadcast (``cutiestestrun18march2021``)
       holds a copy of the nodeset;
    2. ``audience_label``: the most frequent date in anonymised audience speaker labels
       (``AudienceMember 20210318QT14``) of the nodeset's locutions, counting only dates that at
       least ``min_distinct_labels`` distinct labels carry over the corpus (a one-off typo such as
       ``20210707QT01`` in the 2021-07-08 episode is thereby ignored);
    3. ``timestamp``: the most frequent date of the nodeset's L-node timestamps, accepted only when
       it is an episode date: a date that (1) or (2) established, or a date that is the most
       frequent L date of at least ``min_cluster`` nodesets none of which has (1) or (2) evidence
       for another date (annotation dates, such as the 2022 dates of late episodes or 2021-04-01
       for the 2021-03-18 episode, are thereby rejected);
    4. ``nearest_nodeset``: otherwise the episode of the nearest nodeset that got one from (1)-(3),
       nearest by the median id of the locution nodes (AIFdb hands out node ids in annotation
       order, so one episode's nodes have neighbouring ids even when a nodeset was re-saved
       later); ties go to the lower id.

    Returns
    -------
    DataFrame with columns ``nodeset``, ``episode``, ``episode_source``.
    """
    import bisect

    names = [n.name for n in corpus.nodesets]
    strong: dict[str, tuple[str, str]] = {}
    modal_l_date: dict[str, str] = {}
    labels_of: dict[str, Counter] = {}
    position: dict[str, int | None] = {}
    for nodeset in corpus.nodesets:
        folder_dates = Counter(d for d in (folder_date(f) for f in corpus.folders_of(nodeset.name)) if d)
        l_texts = [n.text for n in nodeset.nodes if n.node_type == "L"]
        l_ids = sorted(int(n.node_id) for n in nodeset.nodes if n.node_type == "L" and n.node_id.isdigit())
        position[nodeset.name] = l_ids[len(l_ids) // 2] if l_ids else None
        l_dates = Counter(n.timestamp[:10] for n in nodeset.nodes if n.node_type == "L" and n.timestamp)
        if l_dates:
            modal_l_date[nodeset.name] = sorted(l_dates.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        if folder_dates:
            strong[nodeset.name] = (folder_dates.most_common(1)[0][0], "folder")
        else:
            labels_of[nodeset.name] = audience_label_dates(l_texts)
    distinct_labels: dict[str, set[str]] = defaultdict(set)
    for nodeset in corpus.nodesets:
        for n in nodeset.nodes:
            if n.node_type == "L":
                for label in _AUDIENCE_LABEL_FULL.findall(n.text):
                    distinct_labels[label[:8]].add(label)
    for name, labels in labels_of.items():
        supported = {
            d: c for d, c in labels.items() if len(distinct_labels[d.replace("-", "")]) >= min_distinct_labels
        }
        if supported:
            strong[name] = (sorted(supported.items(), key=lambda kv: (-kv[1], kv[0]))[0][0], "audience_label")
    established = {date for date, _ in strong.values()}
    cluster_sizes = Counter(modal_l_date[n] for n in names if n in modal_l_date)
    contradicted = {modal_l_date[n] for n in names if n in strong and n in modal_l_date and strong[n][0] != modal_l_date[n]}
    accepted = established | {d for d, size in cluster_sizes.items() if size >= min_cluster and d not in contradicted}
    assigned: dict[str, tuple[str, str]] = dict(strong)
    for name in names:
        if name not in assigned and modal_l_date.get(name) in accepted:
            assigned[name] = (modal_l_date[name], "timestamp")
    # nearest dated nodeset by the median id of its locution nodes (AIFdb hands out node ids in
    # annotation order, so the nodes of one episode's annotation session have neighbouring ids),
    # else by nodeset number
    def key(name: str) -> int:
        return position[name] if position.get(name) is not None else nodeset_number(name)

    anchors = sorted((key(n), n) for n in assigned)
    numbers = [a for a, _ in anchors]
    for name in names:
        if name in assigned:
            continue
        if not anchors:
            assigned[name] = ("", "unknown")
            continue
        number = key(name)
        pos = bisect.bisect_left(numbers, number)
        candidates = [anchors[i] for i in (pos - 1, pos) if 0 <= i < len(anchors)]
        best = min(candidates, key=lambda a: (abs(a[0] - number), a[0]))
        assigned[name] = (assigned[best[1]][0], "nearest_nodeset")
    return pd.DataFrame(
        [(name, *assigned[name]) for name in names], columns=["nodeset", "episode", "episode_source"]
    )


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


def corpus_tables(corpus: Corpus, episodes: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The corpus as a long nodes table (one row per node per nodeset) and an edges table."""
    if episodes is None:
        episodes = assign_episodes(corpus)
    episode_of = dict(zip(episodes["nodeset"], zip(episodes["episode"], episodes["episode_source"])))
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
            node_rows.append((nodeset.name, n.node_id, n.node_type, n.text, n.timestamp, n.scheme, episode, source, rel))
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
        order["nodeset"], order["node_id"], order["node_type"], order["text"], order["timestamp"], order["scheme"], order["source_file"]
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
    for source_id, target_id, src in zip(edges["from_id"], edges["to_id"], edges["source_file"]):
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
    episode_of = dict(zip(nodes["nodeset"], nodes["episode"]))
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
    for arg, l_id, i_id in zip(arguments["argument_id"], arguments["l_node_id"], arguments["i_node_id"]):
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
    frame = pd.DataFrame(rows, columns=RELATION_COLUMNS).drop_duplicates(["source_id", "target_id", "relation", "aif_node_id"])
    for aif_type, relation in RELATION_OF_TYPE.items():
        report.relations[aif_type] = int((frame["relation"] == relation).sum())
    return frame.reset_index(drop=True), report


# --------------------------------------------------------------------------------------------
# Reconciliation with the published knowledge base
# --------------------------------------------------------------------------------------------


def published_style_counts(nodes: pd.DataFrame, edges: pd.DataFrame, graph: UnionGraph | None = None) -> dict[str, int]:
    """Counts under the per-nodeset convention that the published KB follows (see docs).

    The published argument list (its order recovered from the 100 pairwise-study items, whose
    ``prediction_index`` is their row in the prediction files) enumerates propositions *per nodeset
    file*: an I-node that a segment nodeset and a cross-segment glue nodeset both hold is listed
    twice. Returned: I-node occurrences over the distinct nodesets (``i_occurrences``), distinct
    I-nodes, the extra occurrences of I-nodes held by several nodesets (``repeated_i_occurrences``),
    occurrences of I-nodes some locution anchors (``anchored_i_occurrences``), relation endpoint
    pairs counted once per nodeset holding the relation node (``relation_pairs_per_nodeset``), and
    the AIF edges between relation nodes and their propositions plus the TA locution pairs
    (``relation_edges``), the closest candidate found for the published relation count.
    """
    graph = graph or union_graph(nodes, edges)
    anchored = {
        i
        for ya, t in graph.node_type.items()
        if t == "YA" and any(graph.node_type[p] == "L" for p in graph.preds.get(ya, []))
        for i in graph.succs.get(ya, [])
        if graph.node_type[i] == "I"
    }
    i_rows = nodes[nodes["node_type"] == "I"]
    pairs = 0
    for node_id in nodes["node_id"]:
        t = graph.node_type[node_id]
        if t not in RELATION_OF_TYPE:
            continue
        end = "L" if t == "TA" else "I"
        s = {p for p in graph.preds.get(node_id, []) if graph.node_type[p] == end}
        g = {p for p in graph.succs.get(node_id, []) if graph.node_type[p] == end}
        pairs += len(s) * len(g)
    relation_edges = 0
    for node_id, t in graph.node_type.items():
        if t in ("RA", "CA", "MA"):
            relation_edges += sum(graph.node_type[p] == "I" for p in graph.preds.get(node_id, []))
            relation_edges += sum(graph.node_type[p] == "I" for p in graph.succs.get(node_id, []))
        elif t == "TA":
            s = {p for p in graph.preds.get(node_id, []) if graph.node_type[p] == "L"}
            g = {p for p in graph.succs.get(node_id, []) if graph.node_type[p] == "L"}
            relation_edges += len(s) * len(g)
    return {
        "i_occurrences": int(len(i_rows)),
        "distinct_i_nodes": int(i_rows["node_id"].nunique()),
        "repeated_i_occurrences": int(len(i_rows) - i_rows["node_id"].nunique()),
        "anchored_i_occurrences": int(i_rows["node_id"].isin(anchored).sum()),
        "relation_pairs_per_nodeset": int(pairs),
        "relation_edges": int(relation_edges),
    }


def reconcile_counts(
    corpus_files: int,
    distinct_nodesets: int,
    arguments: pd.DataFrame,
    relations: pd.DataFrame,
    report: RelationReport,
    published_style: Mapping[str, int],
) -> pd.DataFrame:
    """A table that walks from our counts to the published ones, one documented step per row."""
    n_args = len(arguments)
    n_rel = len(relations)
    pairs_i = arguments.groupby("i_node_id").size()
    multi_anchor_extra = int((pairs_i - 1).clip(lower=0).sum())
    rows = [
        ("files", "nodeset files read", corpus_files, ""),
        ("files", "distinct nodesets", distinct_nodesets, "the other files are byte-identical copies in release-batch folders"),
        ("arguments", "KB arguments (YA anchors L->I, union graph)", n_args, "this platform"),
        ("arguments", "distinct propositions anchored", int(arguments["i_node_id"].nunique()), ""),
        ("arguments", "extra arguments from propositions anchored by several locutions", multi_anchor_extra, ""),
        ("arguments", "I-node occurrences over distinct nodesets", published_style["i_occurrences"], "published convention: one row per proposition per nodeset file"),
        ("arguments", "... of which repeats of an I-node held by several nodesets", published_style["repeated_i_occurrences"], "mostly the 30 cross-segment glue nodesets that repeat the I-nodes of the segments they join"),
        ("arguments", "... of which anchored by some locution", published_style["anchored_i_occurrences"], "I-nodes no locution anchors cannot carry a locution"),
        ("arguments", "published prediction rows (nodeID 0..23,299)", PUBLISHED_PREDICTION_ROWS, ""),
        ("arguments", "residual: anchored I occurrences - prediction rows", published_style["anchored_i_occurrences"] - PUBLISHED_PREDICTION_ROWS, "not recoverable from the released files (pipeline unreleased)"),
        ("arguments", "published KB arguments", PUBLISHED_ARGUMENTS, "72 prediction rows have no KB argument (prediction_index - uuid grows 0 -> 72)"),
        ("relations", "KB relations (this platform)", n_rel, "; ".join(f"{r}: {report.relations[t]}" for t, r in RELATION_OF_TYPE.items())),
        ("relations", "AIF relation endpoint pairs (union graph)", int(sum(report.endpoint_pairs.values())), ""),
        ("relations", "... pairs with an end anchoring no argument (dropped)", int(sum(report.unanchored_pairs.values())), ""),
        ("relations", "... extra rows from fan-out to several arguments", int(sum(report.fanned_out.values())), ""),
        ("relations", "relation endpoint pairs counted per nodeset occurrence", published_style["relation_pairs_per_nodeset"], "published convention (relations repeated in glue nodesets count again)"),
        ("relations", "AIF edges I<->RA/CA/MA plus TA locution pairs", published_style["relation_edges"], "closest candidate convention found; residual to the published count unexplained"),
        ("relations", "published KB relations", PUBLISHED_RELATIONS, ""),
    ]
    return pd.DataFrame(rows, columns=["quantity", "step", "count", "note"])


# --------------------------------------------------------------------------------------------
# Linking published study items to KB arguments
# --------------------------------------------------------------------------------------------


def _norm(text: object) -> str:
    return re.sub(r"\s+", " ", str(text or "")).strip().casefold()


def match_published_items(
    arguments: pd.DataFrame,
    items: pd.DataFrame,
    proposition_column: str,
    locution_column: str | None = None,
    speaker_column: str | None = None,
) -> pd.DataFrame:
    """Link published study items to KB arguments by their texts.

    An item matches the arguments whose proposition equals its proposition (whitespace- and
    case-insensitive); ties are broken by the locution (the published locution sometimes keeps the
    speaker prefix, so both forms are tried) and then the speaker. Returns ``items`` with
    ``argument_id`` (null when no or no unique match) and ``match`` in ``{"unique", "locution",
    "speaker", "ambiguous", "none"}``.
    """
    by_prop: dict[str, list[int]] = defaultdict(list)
    props = arguments["proposition"].map(_norm).tolist()
    for idx, prop in enumerate(props):
        by_prop[prop].append(idx)
    locs = arguments["locution"].map(_norm).tolist()
    full_locs = (arguments["speaker"].astype(str) + " : " + arguments["locution"].astype(str)).map(_norm).tolist()
    speakers = arguments["speaker"].map(_norm).tolist()
    ids = arguments["argument_id"].tolist()
    out_ids: list[str | None] = []
    kinds: list[str] = []
    for _, item in items.iterrows():
        candidates = by_prop.get(_norm(item[proposition_column]), [])
        kind = "unique" if len(candidates) == 1 else "none" if not candidates else "ambiguous"
        if len(candidates) > 1 and locution_column:
            loc = _norm(item[locution_column])
            narrowed = [c for c in candidates if locs[c] == loc or full_locs[c] == loc]
            if narrowed:
                candidates, kind = narrowed, "locution" if len(narrowed) == 1 else "ambiguous"
        if len(candidates) > 1 and speaker_column:
            spk = _norm(item[speaker_column])
            narrowed = [c for c in candidates if speakers[c] == spk]
            if narrowed:
                candidates, kind = narrowed, "speaker" if len(narrowed) == 1 else "ambiguous"
        out_ids.append(ids[candidates[0]] if len(candidates) == 1 else None)
        kinds.append(kind if len(candidates) <= 1 or kind != "ambiguous" else "ambiguous")
    return items.assign(argument_id=out_ids, match=kinds)


def published_index_mapping(arguments: pd.DataFrame, pairwise_sample: pd.DataFrame) -> pd.DataFrame:
    """Map published prediction rows (``nodeID`` = ``prediction_index``) to KB argument ids.

    Only rows that a published study file links to text can be mapped with certainty: the 100
    items of ``pairwise_sample_100.csv`` carry ``prediction_index`` together with locution,
    proposition and speaker. The full 23,300-row order cannot be rebuilt exactly from the released
    files (see docs/knowledge_base.md for what is known of it). Returns one row per sample item:
    ``prediction_index``, ``uuid``, ``meta_id``, ``argument_id``, ``match``, ``published_date``,
    ``episode`` (ours) and ``nodeset``.
    """
    matched = match_published_items(
        arguments, pairwise_sample, "proposition", locution_column="locution", speaker_column="speaker"
    )
    meta = arguments.set_index("argument_id")[["episode", "nodeset"]]
    out = matched[["prediction_index", "uuid", "meta_id", "argument_id", "match", "locution_date"]].rename(
        columns={"locution_date": "published_date"}
    )
    out = out.join(meta, on="argument_id")
    return out.sort_values("prediction_index").reset_index(drop=True)


def speaker_counts(arguments: pd.DataFrame, top: int = 10) -> list[tuple[str, int]]:
    """The most frequent speakers (for report metadata)."""
    return [(str(k), int(v)) for k, v in arguments["speaker"].value_counts().head(top).items()]


def counts_by(values: Sequence[str] | pd.Series) -> dict[str, int]:
    """Plain ``{value: count}`` sorted by value (for metadata)."""
    return {str(k): int(v) for k, v in sorted(Counter(values).items())}
