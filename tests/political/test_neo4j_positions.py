"""The full knowledge base in a real Neo4j with the paper's positions: every model's and ensemble's
mean, variance, std, NA count and probability of NA on the Argument nodes, and the example queries of
docs/knowledge_base.md returning rows."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from argassets.political import neo4j_export as nx
from argassets.political import neo4j_graph as ng

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "knowledge_base.md"


def example_queries(markdown: str) -> list[tuple[str, str]]:
    """``(comment, query)`` for every statement of the docs' ```cypher blocks."""
    out = []
    for block in re.findall(r"```cypher\n(.*?)```", markdown, flags=re.DOTALL):
        comment, lines = "", []
        for line in block.splitlines():
            if line.strip().startswith("//"):
                comment = line.strip()[2:].strip()
                continue
            lines.append(line)
            if line.rstrip().endswith(";"):
                out.append((comment, "\n".join(lines).strip().rstrip(";")))
                lines = []
    return out


def test_the_docs_hold_example_queries():
    queries = example_queries(DOCS.read_text())
    assert len(queries) >= 5 and all(q for _, q in queries)


def test_full_kb_with_the_papers_positions_and_the_docs_queries(neo4j_driver, neo4j_server, qt30_kb, published_models):
    db = neo4j_server.database
    predictions = nx.prediction_properties([published_models.stats, published_models.ensembles])
    result = nx.export_kb(neo4j_driver, db, qt30_kb.arguments, qt30_kb.relations, predictions=predictions)
    assert ng.graph_counts(neo4j_driver, db) == ng.expected_counts(qt30_kb.arguments, qt30_kb.relations)
    assert result.prediction_properties == sum(len(p) for p in predictions.values())

    # one argument: every model's and ensemble's five statistics, as in the tables
    stats = published_models.stats
    some = stats.loc[stats["mean"].notna(), "argument_id"].iloc[1234]
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (a:Argument {argument_id: $id}) RETURN properties(a) AS p", id=some, database_=db
    )
    props = records[0]["p"]
    rows = [
        *stats[stats["argument_id"] == some].itertuples(),
        *published_models.ensembles[published_models.ensembles["argument_id"] == some].itertuples(),
    ]
    assert len(rows) == 22 + 3
    for row in rows:
        prefix = nx.system_property_prefix(row.system)
        for column in ng.STAT_COLUMNS:
            value = getattr(row, column)
            if isinstance(value, float) and math.isnan(value):
                assert f"{prefix}_{column}" not in props
            else:
                assert props[f"{prefix}_{column}"] == pytest.approx(value), (row.system, column)
    assert props["pred_e3_prob_na"] == pytest.approx(
        published_models.ensembles.set_index(["system", "argument_id"]).loc[("E3", some), "prob_na"]
    )
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (a:Argument) WHERE a.pred_e1_mean IS NOT NULL OR a.pred_e1_prob_na IS NOT NULL RETURN count(a) AS n",
        database_=db,
    )
    assert records[0]["n"] == 20557

    for comment, query in example_queries(DOCS.read_text()):
        records, _, _ = neo4j_driver.execute_query(query, database_=db)
        assert len(records) > 0, f"docs query returned nothing: {comment}\n{query}"
