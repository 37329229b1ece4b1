"""The knowledge base's counts reconciled with the published ones."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from argassets.political.knowledge_base import RELATION_OF_TYPE, RelationReport, UnionGraph, union_graph

#: Published KB of "Validating Political Position Predictions of Arguments".
PUBLISHED_ARGUMENTS = 23_228

PUBLISHED_RELATIONS = 50_905

#: Rows of the published prediction files (``nodeID`` 0 .. 23,299).
PUBLISHED_PREDICTION_ROWS = 23_300


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


def _argument_steps(arguments: pd.DataFrame, published_style: Mapping[str, int]) -> list[tuple[str, str, int, str]]:
    """From the platform's arguments to the published ones."""
    n_args = len(arguments)
    pairs_i = arguments.groupby("i_node_id").size()
    multi_anchor_extra = int((pairs_i - 1).clip(lower=0).sum())
    return [
        ("arguments", "KB arguments (YA anchors L->I, union graph)", n_args, "this platform"),
        ("arguments", "distinct propositions anchored", int(arguments["i_node_id"].nunique()), ""),
        ("arguments", "extra arguments from propositions anchored by several locutions", multi_anchor_extra, ""),
        (
            "arguments",
            "I-node occurrences over distinct nodesets",
            published_style["i_occurrences"],
            "published convention: one row per proposition per nodeset file",
        ),
        (
            "arguments",
            "... of which repeats of an I-node held by several nodesets",
            published_style["repeated_i_occurrences"],
            "mostly the 30 cross-segment glue nodesets that repeat the I-nodes of the segments they join",
        ),
        (
            "arguments",
            "... of which anchored by some locution",
            published_style["anchored_i_occurrences"],
            "I-nodes no locution anchors cannot carry a locution",
        ),
        ("arguments", "published prediction rows (nodeID 0..23,299)", PUBLISHED_PREDICTION_ROWS, ""),
        (
            "arguments",
            "residual: anchored I occurrences - prediction rows",
            published_style["anchored_i_occurrences"] - PUBLISHED_PREDICTION_ROWS,
            "not recoverable from the released files (pipeline unreleased)",
        ),
        (
            "arguments",
            "published KB arguments",
            PUBLISHED_ARGUMENTS,
            "72 prediction rows have no KB argument (prediction_index - uuid grows 0 -> 72)",
        ),
    ]


def _relation_steps(
    relations: pd.DataFrame, report: RelationReport, published_style: Mapping[str, int]
) -> list[tuple[str, str, int, str]]:
    """From the platform's relations to the published ones."""
    n_rel = len(relations)
    return [
        (
            "relations",
            "KB relations (this platform)",
            n_rel,
            "; ".join(f"{r}: {report.relations[t]}" for t, r in RELATION_OF_TYPE.items()),
        ),
        ("relations", "AIF relation endpoint pairs (union graph)", int(sum(report.endpoint_pairs.values())), ""),
        (
            "relations",
            "... pairs with an end anchoring no argument (dropped)",
            int(sum(report.unanchored_pairs.values())),
            "",
        ),
        ("relations", "... extra rows from fan-out to several arguments", int(sum(report.fanned_out.values())), ""),
        (
            "relations",
            "relation endpoint pairs counted per nodeset occurrence",
            published_style["relation_pairs_per_nodeset"],
            "published convention (relations repeated in glue nodesets count again)",
        ),
        (
            "relations",
            "AIF edges I<->RA/CA/MA plus TA locution pairs",
            published_style["relation_edges"],
            "closest candidate convention found; residual to the published count unexplained",
        ),
        ("relations", "published KB relations", PUBLISHED_RELATIONS, ""),
    ]


def reconcile_counts(
    corpus_files: int,
    distinct_nodesets: int,
    arguments: pd.DataFrame,
    relations: pd.DataFrame,
    report: RelationReport,
    published_style: Mapping[str, int],
) -> pd.DataFrame:
    """A table that walks from our counts to the published ones, one documented step per row."""
    rows = [
        ("files", "nodeset files read", corpus_files, ""),
        (
            "files",
            "distinct nodesets",
            distinct_nodesets,
            "the other files are byte-identical copies in release-batch folders",
        ),
        *_argument_steps(arguments, published_style),
        *_relation_steps(relations, report, published_style),
    ]
    return pd.DataFrame(rows, columns=["quantity", "step", "count", "note"])


# --------------------------------------------------------------------------------------------
