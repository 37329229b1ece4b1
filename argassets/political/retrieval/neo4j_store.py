"""The deployment store: the same queries in Neo4j, over a native vector index (no GDS plugin).

After the KB export, :func:`write_embeddings` sets each ``Argument``'s ``embedding`` (a float32
vector property) and :func:`ensure_retrieval_indexes` creates the cosine vector index and the range
indexes the filters use (force, and each system's mean position). Every value is a query parameter;
the only identifiers in query text are the fixed names below and the ``pred_<system>_*`` property
names, which :func:`argassets.political.neo4j_export.system_property_prefix` reduces to
``[0-9a-z_]``.

Search: ``vector`` queries the index (``db.index.vector.queryNodes``) for candidates, post-filters
them and scores them exactly (the index's own scores are approximate: Neo4j quantises its vectors),
widening the candidate set until ``k`` arguments pass or every node was a candidate; ``exact=True`` scans
instead (``vector.similarity.cosine`` over the pre-filtered nodes). The graph methods always scan
exactly over the arguments that have a matching relation: their top-``k`` is per (relation,
direction, neighbour force), which an index's global top-n cannot guarantee. Neo4j scores cosine
as ``(1 + cos) / 2``; results carry the cosine itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from neo4j import Driver

from argassets.political.neo4j_export import system_property_prefix
from argassets.political.neo4j_graph import ARGUMENT_LABEL
from argassets.political.retrieval.embedded_store import order_results
from argassets.political.retrieval.query import RetrievalError, RetrievalQuery, RetrievalResult

EMBEDDING_PROPERTY = "embedding"
EMBEDDING_MODEL_PROPERTY = "embedding_model"
VECTOR_INDEX = "argument_embedding"
FORCE_INDEX = "argument_force"
_IDENTIFIER = re.compile(r"^pred_[0-9a-z_]+$")
WRITE_QUERY = (
    f"UNWIND $rows AS row MATCH (a:{ARGUMENT_LABEL} {{argument_id: row.id}}) "
    f"CALL db.create.setNodeVectorProperty(a, '{EMBEDDING_PROPERTY}', row.vector) "
    f"SET a.{EMBEDDING_MODEL_PROPERTY} = $model RETURN count(a) AS n"
)


#: The command that fills Neo4j for retrieval, and its measured time (docs/retrieval.md, "Measured").
NEO4J_EXPORT = (
    "`dagster asset materialize -m argassets.definitions --select neo4j_political_kb,neo4j_political_kb_embeddings` "
    "(about 75 s: 29.1 s for the knowledge base and 72.6 s with its embeddings and indexes on the quiet 2-core "
    "AMD EPYC, Neo4j on the same cores; needs NEO4J_URI and the tables of `argassets run-default`)"
)


class Neo4jRetrievalError(RuntimeError):
    """Neo4j cannot answer a retrieval yet (missing index or embeddings); names what to materialise."""


def _property(system: str, stat: str) -> str:
    name = f"{system_property_prefix(system)}_{stat}"
    if not _IDENTIFIER.match(name):  # never reached: the prefix is already [0-9a-z_]
        raise RetrievalError(f"system {system!r} gives an unusable property name")
    return name


def write_embeddings(
    driver: Driver,
    database: str,
    embeddings: pd.DataFrame,
    batch_size: int = 2000,
    log: Callable[[str], None] | None = None,
) -> int:
    """Set every argument's embedding and model; raises when an embedded argument is not in the graph."""
    rows = [
        {"id": str(i), "vector": [float(x) for x in v]}
        for i, v in zip(embeddings["argument_id"], embeddings["embedding"], strict=True)
    ]
    model = str(embeddings["model"].iloc[0]) if len(embeddings) else ""
    written = 0
    for start in range(0, len(rows), batch_size):
        batch = rows[start : start + batch_size]
        records, _, _ = driver.execute_query(WRITE_QUERY, rows=batch, model=model, database_=database)
        written += int(records[0]["n"])
        if log is not None:
            log(f"neo4j embeddings: {min(start + batch_size, len(rows))}/{len(rows)} written")
    if written != len(rows):
        raise Neo4jRetrievalError(f"{len(rows) - written} embedded arguments are not in Neo4j: run {NEO4J_EXPORT}")
    return written


def ensure_retrieval_indexes(
    driver: Driver, database: str, dimensions: int, systems: Sequence[str] = (), wait_s: int = 300
) -> list[str]:
    """The cosine vector index, a range index on force and one on each system's mean; online on return."""
    queries = [
        f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (a:{ARGUMENT_LABEL}) ON a.{EMBEDDING_PROPERTY} "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimensions)}, `vector.similarity_function`: 'cosine'}}}}",
        f"CREATE INDEX {FORCE_INDEX} IF NOT EXISTS FOR (a:{ARGUMENT_LABEL}) ON (a.force)",
    ]
    names = [VECTOR_INDEX, FORCE_INDEX]
    if vector_index_dimensions(driver, database) not in (None, int(dimensions)):
        # another model's index (other dimensions) would silently leave the new vectors unindexed
        driver.execute_query(f"DROP INDEX {VECTOR_INDEX} IF EXISTS", database_=database)
    for system in systems:
        prop = _property(system, "mean")
        queries.append(f"CREATE INDEX {prop}_index IF NOT EXISTS FOR (a:{ARGUMENT_LABEL}) ON (a.`{prop}`)")
        names.append(f"{prop}_index")
    for query in queries:
        driver.execute_query(query, database_=database)
    driver.execute_query("CALL db.awaitIndexes($s)", s=int(wait_s), database_=database)
    return names


def vector_index_dimensions(driver: Driver, database: str) -> int | None:
    """The dimensions of the existing vector index, or ``None`` when there is none."""
    records, _, _ = driver.execute_query(
        "SHOW VECTOR INDEXES YIELD name, options WHERE name = $name RETURN options",
        name=VECTOR_INDEX,
        database_=database,
    )
    if not records:
        return None
    return int(records[0]["options"]["indexConfig"]["vector.dimensions"])


def drop_retrieval_indexes(driver: Driver, database: str) -> None:
    """Remove the vector index and the filters' range indexes (names read from the server)."""
    records, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name WHERE name = $vector OR name = $force OR (name STARTS WITH 'pred_' AND name ENDS WITH '_index') "
        "RETURN name",
        vector=VECTOR_INDEX,
        force=FORCE_INDEX,
        database_=database,
    )
    for record in records:
        # index names come from the server itself, never from user input
        driver.execute_query(f"DROP INDEX `{str(record['name']).replace('`', '')}` IF EXISTS", database_=database)


def check_ready(driver: Driver, database: str) -> dict[str, Any]:
    """The vector index's state and the embedded node count; a clear error when either is missing."""
    records, _, _ = driver.execute_query(
        "SHOW VECTOR INDEXES YIELD name, state WHERE name = $name RETURN state", name=VECTOR_INDEX, database_=database
    )
    if not records:
        raise Neo4jRetrievalError(f"Neo4j has no vector index '{VECTOR_INDEX}': run {NEO4J_EXPORT}")
    counted, _, _ = driver.execute_query(
        f"MATCH (a:{ARGUMENT_LABEL}) RETURN count(a) AS nodes, count(a.{EMBEDDING_PROPERTY}) AS embedded, "
        f"collect(DISTINCT a.{EMBEDDING_MODEL_PROPERTY}) AS models",
        database_=database,
    )
    nodes, embedded = int(counted[0]["nodes"]), int(counted[0]["embedded"])
    if embedded == 0:
        raise Neo4jRetrievalError(
            f"none of the {nodes} Argument nodes in Neo4j has an embedding: materialise neo4j_political_kb_embeddings"
        )
    return {"state": records[0]["state"], "nodes": nodes, "embedded": embedded, "models": list(counted[0]["models"])}


def _filter_clause(query: RetrievalQuery, params: dict[str, Any]) -> str:
    """The WHERE conditions on the similar argument ``a``; values go to ``params``."""
    clauses = [f"a.{EMBEDDING_PROPERTY} IS NOT NULL"]
    if query.force is not None:
        clauses.append("a.force = $force")
        params["force"] = query.force
    political = query.filter
    if political is not None:
        bounds = [
            ("mean", political.min_position, ">=", "min_position"),
            ("mean", political.max_position, "<=", "max_position"),
            ("std", political.max_std, "<=", "max_std"),
            ("prob_na", political.max_prob_na, "<=", "max_prob_na"),
        ]
        for stat, value, operator, name in bounds:
            if value is not None:
                clauses.append(f"a.`{_property(political.system, stat)}` {operator} ${name}")
                params[name] = float(value)
    return " AND ".join(clauses)


_RETURN_ARGUMENT = (
    "a.argument_id AS argument_id, coalesce(a.locution, '') AS locution, "
    "coalesce(a.proposition, '') AS proposition, coalesce(a.force, '') AS force, "
    "a[$position_property] AS position"
)


class Neo4jStore:
    """Retrieval over the exported KB; ``exact`` scans instead of querying the vector index."""

    def __init__(self, driver: Driver, database: str, exact: bool = False):
        self.driver = driver
        self.database = database
        self.exact = exact
        self._ready: dict[str, Any] | None = None
        self._systems: set[str] = set()

    def readiness(self) -> dict[str, Any]:
        """``check_ready``, once per store after it succeeds: it reads every node's embedding."""
        if self._ready is None:
            self._ready = check_ready(self.driver, self.database)
        return self._ready

    def embedding_model(self) -> str:
        """The model identity of the stored embeddings (an error when they mix models)."""
        models = self.readiness()["models"]
        if len(models) != 1:
            raise Neo4jRetrievalError(
                f"the Argument embeddings mix models {models}: materialise neo4j_political_kb_embeddings"
            )
        return str(models[0])

    def _run(self, cypher: str, **params: Any) -> list[Any]:
        records, _, _ = self.driver.execute_query(cypher, database_=self.database, **params)
        return list(records)

    def check_system(self, system: str) -> None:
        if system in self._systems:
            return
        prop = _property(system, "mean")
        found = self._run(f"MATCH (a:{ARGUMENT_LABEL}) WHERE a.`{prop}` IS NOT NULL RETURN a LIMIT 1")
        if not found:
            raise RetrievalError(
                f"system {system!r} has no positions in Neo4j: materialise its predictions (`argassets "
                f"materialize <model> --with-reports`, or run-default for the published ones), then run {NEO4J_EXPORT}"
            )
        self._systems.add(system)

    def search(self, query: RetrievalQuery, vector: np.ndarray) -> list[RetrievalResult]:
        """The results of ``query`` for the utterance's embedding ``vector``."""
        query.validate()
        self.readiness()
        params: dict[str, Any] = {
            "vector": [float(x) for x in np.asarray(vector).ravel()],
            "k": int(query.k),
            "position_property": _property(query.filter.system, "mean") if query.filter else "",
        }
        if query.filter is not None:
            self.check_system(query.filter.system)
        where = _filter_clause(query, params)
        if query.method == "vector":
            rows = self._exact_vector(where, params) if self.exact else self._indexed_vector(where, params, query.k)
            return order_results(_result(row) for row in rows)
        return order_results(_result(row) for row in self._graph(query, where, params))

    def _exact_vector(self, where: str, params: dict[str, Any]) -> list[Any]:
        return self._run(
            f"MATCH (a:{ARGUMENT_LABEL}) WHERE {where} "
            f"WITH a, vector.similarity.cosine(a.{EMBEDDING_PROPERTY}, $vector) * 2 - 1 AS similarity "
            f"RETURN {_RETURN_ARGUMENT}, similarity ORDER BY round(similarity, 5) DESC, argument_id LIMIT $k",
            **params,
        )

    def indexed_candidates(self, params: dict[str, Any], candidates: int) -> list[Any]:
        """The index's ``candidates`` nearest arguments, unfiltered (recall measurements)."""
        return self._run(
            "CALL db.index.vector.queryNodes($index, $candidates, $vector) YIELD node AS a, score "
            "RETURN a.argument_id AS argument_id, score * 2 - 1 AS similarity",
            index=VECTOR_INDEX,
            candidates=int(candidates),
            vector=params["vector"],
        )

    def _indexed_vector(self, where: str, params: dict[str, Any], k: int) -> list[Any]:
        total = int(self.readiness()["embedded"])
        candidates = min(max(4 * k, 50), total)
        while True:
            rows = self._run(
                "CALL db.index.vector.queryNodes($index, $candidates, $vector) YIELD node AS a "
                f"WITH a WHERE {where} "
                f"WITH a, vector.similarity.cosine(a.{EMBEDDING_PROPERTY}, $vector) * 2 - 1 AS similarity "
                f"RETURN {_RETURN_ARGUMENT}, similarity ORDER BY round(similarity, 5) DESC, argument_id LIMIT $k",
                index=VECTOR_INDEX,
                candidates=candidates,
                **params,
            )
            if len(rows) >= k or candidates >= total:
                return rows
            candidates = min(candidates * 4, total)

    def _graph(self, query: RetrievalQuery, where: str, params: dict[str, Any]) -> list[Any]:
        params.update(
            relations=list(query.relations),
            directions=list(query.directions),
            neighbour_forces=list(query.neighbour_forces) if query.neighbour_forces else None,
        )
        neighbour_ok = "type(r) IN $relations AND ($neighbour_forces IS NULL OR n.force IN $neighbour_forces)"
        return self._run(
            f"MATCH (a:{ARGUMENT_LABEL}) WHERE {where} "
            "CALL (a) { "
            f"  MATCH (n:{ARGUMENT_LABEL})-[r]->(a) WHERE 'incoming' IN $directions AND {neighbour_ok} "
            "  RETURN n, type(r) AS relation, 'incoming' AS direction "
            "  UNION "
            f"  MATCH (a)-[r]->(n:{ARGUMENT_LABEL}) WHERE 'outgoing' IN $directions AND {neighbour_ok} "
            "  RETURN n, type(r) AS relation, 'outgoing' AS direction "
            "} "
            "WITH DISTINCT a, n, relation, direction "
            f"WITH a, n, relation, direction, vector.similarity.cosine(a.{EMBEDDING_PROPERTY}, $vector) * 2 - 1 AS similarity "
            "ORDER BY round(similarity, 5) DESC, a.argument_id, n.argument_id "
            "WITH relation, direction, coalesce(n.force, '') AS neighbour_force, "
            "collect({a: a, n: n, similarity: similarity})[..$k] AS top "
            "UNWIND top AS t WITH t.a AS a, t.n AS n, t.similarity AS similarity, relation, direction, neighbour_force "
            f"RETURN {_RETURN_ARGUMENT}, similarity, relation, direction, neighbour_force, "
            "n.argument_id AS neighbour_id, coalesce(n.locution, '') AS neighbour_locution, "
            "coalesce(n.proposition, '') AS neighbour_proposition",
            **params,
        )


def _result(row: Any) -> RetrievalResult:
    data = dict(row)
    position = data.get("position")
    return RetrievalResult(
        argument_id=str(data["argument_id"]),
        locution=data["locution"],
        proposition=data["proposition"],
        force=data["force"],
        similarity=float(data["similarity"]),
        position=None if position is None else float(position),
        neighbour_id=str(data.get("neighbour_id") or ""),
        neighbour_locution=data.get("neighbour_locution") or "",
        neighbour_proposition=data.get("neighbour_proposition") or "",
        neighbour_force=data.get("neighbour_force") or "",
        relation=data.get("relation") or "",
        direction=data.get("direction") or "",
    )
