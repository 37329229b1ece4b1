"""Asset checks: knowledge_base."""

import dagster as dg
import pandas as pd

from argassets.political import neo4j_graph as ng
from argassets.political.resources import Neo4jResource


@dg.asset_check(
    asset="political_kb_relations",
    additional_ins={"political_kb_arguments": dg.AssetIn()},
    blocking=True,
    description="Every relation's source and target is an argument of political_kb_arguments.",
)
def relation_endpoints_exist(
    political_kb_relations: pd.DataFrame, political_kb_arguments: pd.DataFrame
) -> dg.AssetCheckResult:
    ids = set(political_kb_arguments["argument_id"])
    missing_source = ~political_kb_relations["source_id"].isin(ids)
    missing_target = ~political_kb_relations["target_id"].isin(ids)
    bad = political_kb_relations[missing_source | missing_target]
    return dg.AssetCheckResult(
        passed=bad.empty,
        metadata={
            "relations": len(political_kb_relations),
            "dangling_relations": len(bad),
            "examples": dg.MetadataValue.json(bad.head(5).to_dict("records")),
        },
    )


@dg.asset_check(
    asset="political_kb_arguments",
    blocking=True,
    description="No argument lacks proposition text, and argument ids are unique.",
)
def arguments_have_propositions(political_kb_arguments: pd.DataFrame) -> dg.AssetCheckResult:
    empty = political_kb_arguments["proposition"].fillna("").str.strip() == ""
    duplicated = political_kb_arguments["argument_id"].duplicated()
    return dg.AssetCheckResult(
        passed=not empty.any() and not duplicated.any(),
        metadata={
            "arguments": len(political_kb_arguments),
            "without_proposition": int(empty.sum()),
            "duplicate_ids": int(duplicated.sum()),
            "examples": dg.MetadataValue.json(political_kb_arguments.loc[empty, "argument_id"].head(5).tolist()),
        },
    )


@dg.asset_check(
    asset="neo4j_political_kb",
    additional_ins={"political_kb_arguments": dg.AssetIn(), "political_kb_relations": dg.AssetIn()},
    description="Neo4j's Argument node count and per-type relationship counts equal the DuckDB tables.",
)
def neo4j_counts_match(
    neo4j: Neo4jResource, political_kb_arguments: pd.DataFrame, political_kb_relations: pd.DataFrame
) -> dg.AssetCheckResult:
    expected = ng.expected_counts(political_kb_arguments, political_kb_relations)
    with neo4j.driver() as driver:
        found = ng.graph_counts(driver, neo4j.database)
    table = pd.DataFrame([{"name": k, "duckdb": expected[k], "neo4j": found.get(k, 0)} for k in expected])
    return dg.AssetCheckResult(
        passed=found == expected,
        metadata={
            "mismatches": int((table["duckdb"] != table["neo4j"]).sum()),
            "counts": dg.MetadataValue.md(
                "| name | duckdb | neo4j |\n|---|---|---|\n"
                + "\n".join(f"| {r.name} | {r.duckdb} | {r.neo4j} |" for r in table.itertuples(index=False))
            ),
        },
    )
