"""The embedded store: exact search over the tables the main job writes (DuckDB), no server.

Cosine similarity against every embedding with numpy (about 23,000 x 384 floats: milliseconds),
the political filter as a boolean mask over the positions table, and the graph methods as a join
with the relations table. :func:`order_results` is the one order of results, shared with the Neo4j
store so that both return the same list for the same query.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from argassets.political.neo4j_graph import RELATIONSHIP_TYPES
from argassets.political.retrieval.embeddings import embedding_matrix
from argassets.political.retrieval.query import PoliticalFilter, RetrievalError, RetrievalQuery, RetrievalResult

POSITION_COLUMNS = ["system", "argument_id", "mean", "std", "prob_na"]


def positions_table(stats: Iterable[pd.DataFrame | None]) -> pd.DataFrame:
    """The positions of every system (``political_model_stats`` and ``political_ensembles`` stacked)."""
    frames = [t[[c for c in POSITION_COLUMNS if c in t.columns]] for t in stats if t is not None and len(t)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in POSITION_COLUMNS})
    out = pd.concat(frames, ignore_index=True)
    for column in POSITION_COLUMNS:
        if column not in out.columns:
            out[column] = np.nan
    out["argument_id"] = out["argument_id"].astype(str)
    out["system"] = out["system"].astype(str)
    return out[POSITION_COLUMNS]


def cosine(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``matrix`` with ``vector`` (float64)."""
    rows = matrix.astype(np.float64)
    query = np.asarray(vector, dtype=np.float64).ravel()
    norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(query)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norms > 0, rows @ query / norms, 0.0)


def order_results(results: Iterable[RetrievalResult]) -> list[RetrievalResult]:
    """The one order: group (relation, direction, neighbour force), then similarity, then ids."""
    relation_rank = {r: i for i, r in enumerate(("", *RELATIONSHIP_TYPES))}
    return sorted(
        results,
        key=lambda r: (
            relation_rank[r.relation],
            r.direction,
            r.neighbour_force,
            -round(r.similarity, 5),
            r.argument_id,
            r.neighbour_id,
        ),
    )


@dataclass
class EmbeddedStore:
    """Arguments, relations, embeddings and positions in memory; exact search."""

    arguments: pd.DataFrame
    relations: pd.DataFrame
    vectors: np.ndarray
    positions: pd.DataFrame
    model: str
    _pairs: pd.DataFrame | None = field(default=None, repr=False)
    _unit: np.ndarray | None = field(default=None, repr=False)
    _stats: dict[str, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)
    _id_rank: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int), repr=False)

    @classmethod
    def from_tables(
        cls, arguments: pd.DataFrame, relations: pd.DataFrame, embeddings: pd.DataFrame, positions: pd.DataFrame
    ) -> EmbeddedStore:
        frame = arguments[["argument_id", "locution", "proposition", "force"]].copy()
        frame["argument_id"] = frame["argument_id"].astype(str)
        frame = frame.fillna("").reset_index(drop=True)
        _, vectors = embedding_matrix(embeddings, frame["argument_id"].tolist())
        model = str(embeddings["model"].iloc[0])
        rel = relations[["source_id", "target_id", "relation"]].astype(str)
        return cls(frame, rel, vectors, positions, model)

    @property
    def systems(self) -> list[str]:
        return sorted(self.positions["system"].unique())

    @property
    def forces(self) -> list[str]:
        """The illocutionary forces the KB's arguments have (their spelling in the KB)."""
        return sorted(force for force in self.arguments["force"].unique() if force)

    def _system_stats(self, system: str) -> dict[str, np.ndarray]:
        """Mean, std and probability of NA under ``system``, aligned with the arguments (cached)."""
        if system not in self._stats:
            rows = self.positions[self.positions["system"] == system]
            if rows.empty:
                raise RetrievalError(
                    f"system {system!r} has no positions; known: {', '.join(self.systems) or 'none'} "
                    "(materialise political_model_stats / political_ensembles)"
                )
            aligned = (
                rows.drop_duplicates("argument_id").set_index("argument_id").reindex(self.arguments["argument_id"])
            )
            self._stats[system] = {c: aligned[c].to_numpy(dtype=float) for c in ("mean", "std", "prob_na")}
        return self._stats[system]

    def filter_mask(self, political: PoliticalFilter | None, force: str | None) -> tuple[np.ndarray, np.ndarray]:
        """Which arguments pass, and each argument's position under the filter's system (NaN if none)."""
        mask = np.ones(len(self.arguments), dtype=bool)
        if force is not None:
            mask &= (self.arguments["force"] == force).to_numpy()
        position = np.full(len(self.arguments), np.nan)
        if political is None:
            return mask, position
        political.validate()
        stats = self._system_stats(political.system)
        position = stats["mean"]
        bounds = [
            (position, political.min_position, np.greater_equal),
            (position, political.max_position, np.less_equal),
            (stats["std"], political.max_std, np.less_equal),
            (stats["prob_na"], political.max_prob_na, np.less_equal),
        ]
        for values, bound, compare in bounds:
            if bound is not None:
                with np.errstate(invalid="ignore"):
                    mask &= compare(values, bound) & ~np.isnan(values)
        return mask, position

    def _result(self, row: int, sim: float, position: float, **neighbour: str) -> RetrievalResult:
        ids, locutions, propositions, forces = self._columns()
        return RetrievalResult(
            argument_id=str(ids[row]),
            locution=str(locutions[row]),
            proposition=str(propositions[row]),
            force=str(forces[row]),
            similarity=float(sim),
            position=None if np.isnan(position) else float(position),
            **neighbour,
        )

    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        frame = self.arguments
        return tuple(frame[c].to_numpy() for c in ("argument_id", "locution", "proposition", "force"))

    def pairs(self) -> pd.DataFrame:
        """Every (argument row, neighbour row, relation, direction) once, with its group's code."""
        if self._pairs is None:
            row_of = pd.Series(np.arange(len(self.arguments)), index=self.arguments["argument_id"])
            src = self.relations["source_id"].map(row_of)
            tgt = self.relations["target_id"].map(row_of)
            keep = src.notna() & tgt.notna()
            src, tgt, rel = src[keep].astype(int), tgt[keep].astype(int), self.relations["relation"][keep]
            incoming = pd.DataFrame({"arg": tgt, "nb": src, "relation": rel, "direction": "incoming"})
            outgoing = pd.DataFrame({"arg": src, "nb": tgt, "relation": rel, "direction": "outgoing"})
            pairs = pd.concat([incoming, outgoing], ignore_index=True).drop_duplicates()
            pairs["nb_force"] = self.arguments["force"].to_numpy()[pairs["nb"].to_numpy()]
            pairs["group"] = pd.factorize(pd.MultiIndex.from_frame(pairs[["relation", "direction", "nb_force"]]))[0]
            self._pairs = pairs.reset_index(drop=True)
        return self._pairs

    def _unit_vectors(self) -> np.ndarray:
        if self._unit is None:
            rows = self.vectors.astype(np.float64)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            # float32 halves the memory each query streams; rounding to 5 decimals absorbs the difference
            self._unit = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0).astype(np.float32)
            # rank of each argument id in string order: the tie-break, as integers
            self._id_rank = np.argsort(np.argsort(self.arguments["argument_id"].to_numpy().astype(str)))
        return self._unit

    def similarities(self, vector: np.ndarray) -> np.ndarray:
        """Cosine similarity of every argument with ``vector``."""
        query = np.asarray(vector, dtype=np.float64).ravel()
        norm = np.linalg.norm(query)
        if norm == 0:
            return np.zeros(len(self.arguments))
        return (self._unit_vectors() @ (query / norm).astype(np.float32)).astype(np.float64)

    def search(self, query: RetrievalQuery, vector: np.ndarray) -> list[RetrievalResult]:
        """The results of ``query`` for the utterance's embedding ``vector``."""
        query.validate()
        sims = self.similarities(vector)
        mask, position = self.filter_mask(query.filter, query.force)
        rank = -np.round(sims, 5)
        if query.method == "vector":
            rows = np.flatnonzero(mask)
            top = rows[np.lexsort((self._id_rank[rows], rank[rows]))][: query.k]
            return order_results(self._result(int(i), sims[i], position[i]) for i in top)
        return order_results(self._graph_results(query, sims, rank, mask, position))

    def _graph_results(
        self, query: RetrievalQuery, sims: np.ndarray, rank: np.ndarray, mask: np.ndarray, position: np.ndarray
    ) -> list[RetrievalResult]:
        pairs = self.pairs()
        arg, nb = pairs["arg"].to_numpy(), pairs["nb"].to_numpy()
        keep = mask[arg] & pairs["relation"].isin(query.relations).to_numpy()
        keep &= pairs["direction"].isin(query.directions).to_numpy()
        if query.neighbour_forces:
            keep &= pairs["nb_force"].isin(query.neighbour_forces).to_numpy()
        rows = np.flatnonzero(keep)
        group = pairs["group"].to_numpy()[rows]
        order = np.lexsort((self._id_rank[nb[rows]], self._id_rank[arg[rows]], rank[arg[rows]], group))
        rows, group = rows[order], group[order]
        # position of each pair within its group (groups are contiguous after the sort)
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        within = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
        ids, locutions, propositions, forces = self._columns()
        relations, directions = pairs["relation"].to_numpy(), pairs["direction"].to_numpy()
        out = []
        for i in rows[within < query.k]:
            a, n = int(arg[i]), int(nb[i])
            out.append(
                self._result(
                    a,
                    sims[a],
                    position[a],
                    neighbour_id=str(ids[n]),
                    neighbour_locution=str(locutions[n]),
                    neighbour_proposition=str(propositions[n]),
                    neighbour_force=str(forces[n]),
                    relation=str(relations[i]),
                    direction=str(directions[i]),
                )
            )
        return out
