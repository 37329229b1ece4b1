"""QT30 nodesets in the Argument Interchange Format (AIF): parsing and loading the corpus."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Node types of AIF as used by QT30.
NODE_TYPES = ("L", "I", "YA", "RA", "CA", "MA", "TA")

#: KB relation name per AIF relation node type.
RELATION_OF_TYPE = {"RA": "SUPPORTS", "CA": "ATTACKS", "MA": "IS_A_REPHRASE_OF", "TA": "TRANSITIONS_TO"}
RELATIONS = tuple(RELATION_OF_TYPE.values())

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


def _parsed_nodes(path: Path, raw_nodes: list) -> dict[str, AIFNode]:
    """The nodes by id; a node without id, of unknown type, or given twice differently is an error."""
    nodes: dict[str, AIFNode] = {}
    for index, raw in enumerate(raw_nodes):
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
    return nodes


def _parsed_edges(path: Path, raw_edges: list, nodes: dict[str, AIFNode]) -> list[tuple[str, str, str]]:
    """``(edge id, source, target)`` of each distinct edge; an edge to an unknown node is an error."""
    edges: list[tuple[str, str, str]] = []
    seen_edges: set[tuple[str, str]] = set()
    for index, raw in enumerate(raw_edges):
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
    return edges


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
    if (
        not isinstance(data, Mapping)
        or not isinstance(data.get("nodes"), list)
        or not isinstance(data.get("edges"), list)
    ):
        raise AIFError(path, "expected an object with 'nodes' and 'edges' lists (optionally inside 'AIF')")
    nodes = _parsed_nodes(path, data["nodes"])
    edges = _parsed_edges(path, data["edges"], nodes)
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
