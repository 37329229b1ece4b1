"""Assets: knowledge_base (QT30 AIF -> political KB -> ASPIC+/Dung -> Neo4j)."""

from collections import Counter
from typing import Any

import dagster as dg
import pandas as pd

from argassets.platform.release_manifest import ReleaseIncomplete, check_file_manifest
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.storage import read_stored_table
from argassets.political import aif, aspic, kb_counts
from argassets.political import episodes as aif_episodes
from argassets.political import knowledge_base as kb_graph
from argassets.political import neo4j_export as nx
from argassets.political import neo4j_graph as ng
from argassets.political.release_facts import QT30_MANIFEST, QT30_NODESET_PATTERN
from argassets.political.resources import Neo4jResource

GROUP = "knowledge_base"
#: Prediction statistics that the export attaches to Argument nodes when they exist (see docs).
STATS_TABLES = ("political_model_stats", "political_ensembles")


class AIFLoadConfig(dg.Config):
    """How to treat nodeset files that are not valid AIF."""

    on_error: str = "fail"  # "fail": the first bad file fails the run; "skip": leave it out, list it
    corpus_folder: str = "qt30"  # below the published data folder
    #: The release's nodeset files (names, sizes, SHA-256) the folder must hold; "" for another corpus.
    manifest: str = str(QT30_MANIFEST)


@dg.multi_asset(
    outs={
        "qt30_aif": dg.AssetOut(
            description="QT30 AIF nodes: one row per node per distinct nodeset, with its episode.",
            group_name=GROUP,
            kinds={"pandas", "duckdb"},
        ),
        "qt30_aif_edges": dg.AssetOut(
            description="QT30 AIF edges: one row per edge per distinct nodeset.",
            group_name=GROUP,
            kinds={"pandas", "duckdb"},
        ),
    },
)
def qt30_aif_tables(context: dg.AssetExecutionContext, config: AIFLoadConfig, data: PublishedDataResource):
    """Parse every QT30 nodeset file into a nodes table and an edges table."""
    root = data.require(config.corpus_folder)
    if config.manifest:
        try:
            checked = check_file_manifest(root, config.manifest, QT30_NODESET_PATTERN)
        except ReleaseIncomplete as exc:
            raise dg.Failure(description=str(exc)) from exc
        context.log.info(f"{root}: all {checked} nodeset files of the release manifest present and intact")
    corpus = aif.load_corpus(root, on_error=config.on_error)
    episodes = aif_episodes.assign_episodes(corpus)
    nodes, edges = kb_graph.corpus_tables(corpus, episodes)
    for path, reason in corpus.skipped:
        context.log.warning(f"skipped {path}: {reason}")
    per_episode = nodes.drop_duplicates("nodeset").groupby("episode").size().rename("nodesets").reset_index()
    common: dict[str, Any] = {
        "files_read": corpus.files_seen,
        "distinct_nodesets": len(corpus.nodesets),
        "duplicate_files": sum(len(v) - 1 for v in corpus.duplicates.values()),
        "skipped_files": dg.MetadataValue.json([{"file": p, "reason": r} for p, r in corpus.skipped]),
        "on_error": config.on_error,
    }
    yield dg.Output(
        nodes,
        output_name="qt30_aif",
        metadata={
            **common,
            "rows": len(nodes),
            "node_types": dg.MetadataValue.json(kb_graph.counts_by(nodes["node_type"])),
            "episodes": int(episodes["episode"].nunique()),
            "episode_sources": dg.MetadataValue.json(kb_graph.counts_by(episodes["episode_source"])),
            "nodesets_per_episode": dg.MetadataValue.md(markdown_table(per_episode, max_rows=1000)),
        },
    )
    yield dg.Output(edges, output_name="qt30_aif_edges", metadata={**common, "rows": len(edges)})


def _graph(nodes: pd.DataFrame, edges: pd.DataFrame) -> kb_graph.UnionGraph:
    return kb_graph.union_graph(nodes, edges)


@dg.asset(group_name=GROUP, kinds={"pandas", "duckdb"})
def political_kb_arguments(
    context: dg.AssetExecutionContext, qt30_aif: pd.DataFrame, qt30_aif_edges: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """KB arguments: one row per YA anchor joining a locution to a proposition."""
    graph = _graph(qt30_aif, qt30_aif_edges)
    arguments = kb_graph.build_arguments(qt30_aif, qt30_aif_edges, graph)
    relations, report = kb_graph.build_relations(arguments, qt30_aif, qt30_aif_edges, graph)
    style = kb_counts.published_style_counts(qt30_aif, qt30_aif_edges, graph)
    files = qt30_aif["source_file"].nunique()
    reconciliation = kb_counts.reconcile_counts(
        files, qt30_aif["nodeset"].nunique(), arguments, relations, report, style
    )
    per_episode = arguments.groupby("episode").size().rename("arguments").reset_index()
    context.log.info(f"{len(arguments)} arguments over {arguments['episode'].nunique()} episodes")
    return dg.Output(
        arguments,
        metadata={
            "arguments": len(arguments),
            "published_arguments": kb_counts.PUBLISHED_ARGUMENTS,
            "difference_to_published": len(arguments) - kb_counts.PUBLISHED_ARGUMENTS,
            "episodes": int(arguments["episode"].nunique()),
            "speakers": int(arguments["speaker"].nunique()),
            "forces": dg.MetadataValue.json(kb_graph.counts_by(arguments["force"])),
            "arguments_per_episode": dg.MetadataValue.md(markdown_table(per_episode, max_rows=1000)),
            "count_reconciliation": dg.MetadataValue.md(markdown_table(reconciliation, max_rows=1000)),
            "note": dg.MetadataValue.md(
                "Arguments are counted over the union of the 1,478 distinct nodesets (node ids shared "
                "by several nodesets are one node). The published KB lists propositions once per nodeset "
                "file, so I-nodes repeated in the cross-segment nodesets count again; see "
                "docs/knowledge_base.md, 'Counts against the published KB'."
            ),
        },
    )


@dg.asset(group_name=GROUP, kinds={"pandas", "duckdb"})
def political_kb_relations(
    context: dg.AssetExecutionContext,
    political_kb_arguments: pd.DataFrame,
    qt30_aif: pd.DataFrame,
    qt30_aif_edges: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """KB relations between arguments: SUPPORTS, ATTACKS, IS_A_REPHRASE_OF, TRANSITIONS_TO."""
    graph = _graph(qt30_aif, qt30_aif_edges)
    relations, report = kb_graph.build_relations(political_kb_arguments, qt30_aif, qt30_aif_edges, graph)
    style = kb_counts.published_style_counts(qt30_aif, qt30_aif_edges, graph)
    reconciliation = kb_counts.reconcile_counts(
        qt30_aif["source_file"].nunique(),
        qt30_aif["nodeset"].nunique(),
        political_kb_arguments,
        relations,
        report,
        style,
    )
    context.log.info(f"{len(relations)} relations: {dict(Counter(relations['relation']))}")
    return dg.Output(
        relations,
        metadata={
            "relations": len(relations),
            "published_relations": kb_counts.PUBLISHED_RELATIONS,
            "difference_to_published": len(relations) - kb_counts.PUBLISHED_RELATIONS,
            "per_type": dg.MetadataValue.json({r: int((relations["relation"] == r).sum()) for r in aif.RELATIONS}),
            "mapping_report": dg.MetadataValue.md(markdown_table(report.as_frame(), max_rows=1000)),
            "count_reconciliation": dg.MetadataValue.md(markdown_table(reconciliation, max_rows=1000)),
        },
    )


class AspicConfig(dg.Config):
    """Bounds of argument construction (see argassets/lib/aspic.py)."""

    max_depth: int = aspic.DEFAULT_MAX_DEPTH
    max_per_rule: int = aspic.DEFAULT_MAX_PER_RULE


def _dung_arguments_metadata(
    arguments: list[aspic.Argument], report: aspic.ConstructionReport, config: AspicConfig, grounded_size: int
) -> dict[str, Any]:
    """The Dung arguments' page: counts, arguments per depth, and the construction's limits."""
    depth_table = (
        pd.Series(Counter(a.depth for a in arguments))
        .sort_index()
        .rename("arguments")
        .rename_axis("depth")
        .reset_index()
    )
    limits = {
        "max_depth": config.max_depth,
        "max_per_rule": config.max_per_rule,
        "depth_limit_hit": report.depth_limit_hit,
        "rules_truncated": len(report.rules_truncated),
    }
    return {
        "arguments": report.arguments,
        "premise_arguments": report.premise_arguments,
        "rule_arguments": report.rule_arguments,
        "rules_never_applicable": report.rules_without_arguments,
        "circular_combinations_skipped": report.circular_skipped,
        "grounded_extension_size": grounded_size,
        "arguments_per_depth": dg.MetadataValue.md(markdown_table(depth_table, max_rows=1000)),
        "construction_limits": dg.MetadataValue.json(limits),
    }


@dg.multi_asset(
    outs={
        "political_aspic": dg.AssetOut(
            description="ASPIC+ theory of the KB: ordinary premises, defeasible rules (RA), contraries (CA).",
            group_name=GROUP,
            kinds={"pandas", "duckdb"},
        ),
        "political_dung_arguments": dg.AssetOut(
            description="Dung arguments built from the ASPIC+ theory (premise and rule arguments).",
            group_name=GROUP,
            kinds={"pandas", "duckdb"},
        ),
        "political_dung_defeats": dg.AssetOut(
            description="Dung defeats (= attacks, no preferences): undermining and rebutting.",
            group_name=GROUP,
            kinds={"pandas", "duckdb"},
        ),
    },
)
def political_aspic_tables(
    context: dg.AssetExecutionContext,
    config: AspicConfig,
    qt30_aif: pd.DataFrame,
    qt30_aif_edges: pd.DataFrame,
    political_kb_arguments: pd.DataFrame,
):
    """Derive the ASPIC+ theory and its Dung framework from the union AIF graph."""
    graph = _graph(qt30_aif, qt30_aif_edges)
    theory = aspic.theory_from_graph(graph.node_type, graph.text, graph.preds, graph.succs)
    arguments, report = aspic.build_arguments(theory, max_depth=config.max_depth, max_per_rule=config.max_per_rule)
    defeats = aspic.defeats(theory, arguments)
    kb_of = political_kb_arguments.groupby("i_node_id")["argument_id"].apply(list).to_dict()
    grounded = aspic.grounded_extension([a.argument_id for a in arguments], [(d.attacker, d.attacked) for d in defeats])
    if report.depth_limit_hit or report.rules_truncated:
        context.log.warning(
            f"argument construction bounded: depth limit hit={report.depth_limit_hit}, "
            f"{len(report.rules_truncated)} rules truncated at {config.max_per_rule} combinations"
        )
    yield dg.Output(
        aspic.theory_table(theory),
        output_name="political_aspic",
        metadata={
            "propositions": len(theory.language),
            "ordinary_premises": len(theory.premises),
            "defeasible_rules": len(theory.rules),
            "contraries": len(theory.contraries),
            "undercutters_not_modelled": theory.undercutters,
        },
    )
    yield dg.Output(
        aspic.arguments_table(arguments, kb_of),
        output_name="political_dung_arguments",
        metadata=_dung_arguments_metadata(arguments, report, config, len(grounded)),
    )
    yield dg.Output(
        aspic.defeats_table(defeats),
        output_name="political_dung_defeats",
        metadata={
            "defeats": len(defeats),
            "by_type": dg.MetadataValue.json(dict(Counter(d.attack_type for d in defeats))),
            "grounded_extension_size": len(grounded),
        },
    )


def read_optional_tables(names: tuple[str, ...] = STATS_TABLES) -> tuple[list[pd.DataFrame], dict[str, str]]:
    """Tables of the platform's table storage that exist, and a status line per name.

    The export reads the political prediction statistics this way (not as Dagster inputs) so that
    the knowledge base can be exported before any model has been run: the asset declares them as
    dependencies for lineage, and attaches whatever exists at run time. The storage is the one
    runs write to (the DuckDB file, or the Parquet location of ``$ARGASSETS_TABLES``).
    """
    found: list[pd.DataFrame] = []
    status: dict[str, str] = {}
    for name in names:
        frame = read_stored_table(name)
        if frame is None:
            status[name] = "not materialised"
            continue
        found.append(frame)
        status[name] = f"{len(frame)} rows, {frame['system'].nunique() if 'system' in frame else 0} systems"
    return found, status


@dg.asset(
    group_name=GROUP,
    kinds={"neo4j"},
    deps=[dg.AssetKey(name) for name in STATS_TABLES],
    # one export step at a time per Dagster instance; the lease held in Neo4j itself serialises
    # exports from anywhere else (other instances, scripts)
    pool="neo4j",
)
def neo4j_political_kb(
    context: dg.AssetExecutionContext,
    neo4j: Neo4jResource,
    political_kb_arguments: pd.DataFrame,
    political_kb_relations: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """The KB in Neo4j: Argument nodes with every model's and ensemble's positions, and their relations."""
    stats, status = read_optional_tables()
    predictions = nx.prediction_properties(stats)
    settings = neo4j.settings()
    with neo4j.driver() as driver:
        result = nx.export_kb(
            driver,
            settings.database,
            political_kb_arguments,
            political_kb_relations,
            predictions=predictions,
            log=context.log.info,
        )
        counts = ng.graph_counts(driver, settings.database)
    expected = ng.expected_counts(political_kb_arguments, political_kb_relations)
    summary = pd.DataFrame(
        [
            {
                "element": "node" if name == ng.ARGUMENT_LABEL else "relationship",
                "name": name,
                "duckdb_count": expected[name],
                "neo4j_count": counts[name],
            }
            for name in expected
        ]
    )
    if counts != expected:
        raise RuntimeError(f"Neo4j holds {counts} after the export, expected {expected}")
    return dg.Output(
        summary,
        metadata={
            **{f"neo4j_{k}": v for k, v in settings.describe().items()},
            "nodes": counts[ng.ARGUMENT_LABEL],
            "relationships": sum(v for k, v in counts.items() if k != ng.ARGUMENT_LABEL),
            "batches": result.batches,
            "export_seconds": round(result.seconds, 2),
            "export_stamp": result.stamp,
            "lock_wait_seconds": round(result.lock_wait_s, 2),
            "leftover_nodes_removed": result.leftover_nodes_removed,
            "previous_nodes_removed": result.stale_nodes_removed,
            "previous_relationships_removed": result.stale_relationships_removed,
            "prediction_properties": result.prediction_properties,
            "prediction_sources": dg.MetadataValue.json(status),
            "counts": dg.MetadataValue.md(markdown_table(summary, max_rows=1000)),
        },
    )
