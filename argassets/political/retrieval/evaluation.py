"""How well retrieval does on a fixed query set: filter compliance, own-argument rank, relation
coverage, positions against the requested range, latency; and whether opposite filters separate.

Queries are KB arguments (their own text as the utterance: their own embedding, so the argument
itself should come first when it passes the filter) and a few written utterances.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.political.retrieval.embedded_store import EmbeddedStore
from argassets.political.retrieval.query import PoliticalFilter, RetrievalQuery, RetrievalResult

WRITTEN_QUERIES = (
    "Rich people should pay higher taxes",
    "We need to control immigration and protect our borders",
    "The NHS needs more money, not more privatisation",
    "Brexit has been a disaster for British businesses",
    "The government handled the pandemic well",
)
#: The opposite filters of the separation check (on the positions' 0-100 left-right scale).
LEFT_RANGE = (10.0, 30.0)
RIGHT_RANGE = (60.0, 90.0)


@dataclass(frozen=True)
class EvaluationQuery:
    utterance: str
    argument_id: str  # "" for a written utterance
    vector: np.ndarray


def kb_queries(store: EmbeddedStore, n: int, seed: int = 0) -> list[EvaluationQuery]:
    """``n`` KB arguments with a proposition, drawn with ``seed``; each queries with its own embedding."""
    texts = store.arguments["proposition"].str.len() > 0
    rows = np.flatnonzero(texts.to_numpy())
    chosen = np.sort(np.random.default_rng(seed).choice(rows, size=min(n, len(rows)), replace=False))
    return [
        EvaluationQuery(
            store.arguments.iloc[int(i)]["proposition"],
            store.arguments.iloc[int(i)]["argument_id"],
            store.vectors[int(i)],
        )
        for i in chosen
    ]


def _inside(result: RetrievalResult, political: PoliticalFilter | None) -> bool:
    if political is None:
        return True
    if result.position is None:
        return False
    low = political.min_position if political.min_position is not None else -np.inf
    high = political.max_position if political.max_position is not None else np.inf
    return bool(low <= result.position <= high)


def _rank(results: Sequence[RetrievalResult], argument_id: str) -> float:
    ids = list(dict.fromkeys(r.argument_id for r in results))
    return float(ids.index(argument_id) + 1) if argument_id in ids else np.nan


def run_queries(
    search: Callable[[RetrievalQuery, np.ndarray], list[RetrievalResult]],
    queries: Sequence[EvaluationQuery],
    templates: Sequence[tuple[str, RetrievalQuery]],
) -> pd.DataFrame:
    """One row per (template, query): counts, compliance, own rank, relations, mean position, latency."""
    rows = []
    for label, template in templates:
        for item in queries:
            query = RetrievalQuery(
                item.utterance,
                template.method,
                template.k,
                template.force,
                template.relations,
                template.neighbour_forces,
                template.direction,
                template.filter,
            )
            started = time.perf_counter()
            results = search(query, item.vector)
            latency = time.perf_counter() - started
            positions = [r.position for r in results if r.position is not None]
            rows.append(
                {
                    "setting": label,
                    "method": template.method,
                    "filter": _describe(template.filter),
                    "query_argument": item.argument_id,
                    "results": len(results),
                    "inside": sum(_inside(r, template.filter) for r in results),
                    "own_rank": _rank(results, item.argument_id) if item.argument_id else np.nan,
                    "own_found": float(item.argument_id in {r.argument_id for r in results})
                    if item.argument_id
                    else np.nan,
                    "relations": len({r.relation for r in results if r.relation}),
                    "mean_position": float(np.mean(positions)) if positions else np.nan,
                    "latency_ms": latency * 1000,
                }
            )
    return pd.DataFrame(rows)


def _describe(political: PoliticalFilter | None) -> str:
    if political is None:
        return "none"
    return f"{political.system} {political.min_position:g}-{political.max_position:g}"


def summarise(per_query: pd.DataFrame) -> pd.DataFrame:
    """Per setting: share inside the filter, own-argument rank, relations covered, positions, latency."""
    grouped = per_query.groupby(["setting", "method", "filter"], sort=False)
    out = grouped.agg(
        queries=("results", "size"),
        results_per_query=("results", "mean"),
        inside=("inside", "sum"),
        total=("results", "sum"),
        own_found=("own_found", "mean"),
        own_rank_median=("own_rank", "median"),
        relations_covered=("relations", "mean"),
        mean_position=("mean_position", "mean"),
        latency_p50_ms=("latency_ms", lambda s: float(np.percentile(s, 50))),
        latency_p95_ms=("latency_ms", lambda s: float(np.percentile(s, 95))),
    ).reset_index()
    out["share_inside_filter"] = np.where(out["total"] > 0, out["inside"] / out["total"].clip(lower=1), 1.0)
    return out.drop(columns=["inside", "total"])


def separation(per_query: pd.DataFrame, left: str, right: str) -> dict[str, float | bool]:
    """Mean positions of the results under two opposite filters, their difference and the required gap."""
    left_mean = float(per_query.loc[per_query["setting"] == left, "mean_position"].mean())
    right_mean = float(per_query.loc[per_query["setting"] == right, "mean_position"].mean())
    gap = RIGHT_RANGE[0] - LEFT_RANGE[1]
    return {
        "left_mean_position": round(left_mean, 2),
        "right_mean_position": round(right_mean, 2),
        "difference": round(right_mean - left_mean, 2),
        "required_gap": gap,
        "separated": bool(right_mean - left_mean >= gap),
    }


def evaluation_templates(system: str, k: int = 5) -> list[tuple[str, RetrievalQuery]]:
    """The settings evaluated: each method without a filter and under the two opposite filters."""
    filters = {
        "none": None,
        "left": PoliticalFilter(system, *LEFT_RANGE),
        "right": PoliticalFilter(system, *RIGHT_RANGE),
    }
    templates = []
    for name, political in filters.items():
        templates += [
            (f"vector/{name}", RetrievalQuery("-", "vector", k, filter=political)),
            (f"typical/{name}", RetrievalQuery("-", "typical", k, filter=political)),
            (
                f"chosen/{name}",
                RetrievalQuery(
                    "-",
                    "chosen",
                    k,
                    relations=("SUPPORTS", "ATTACKS"),
                    neighbour_forces=("Asserting",),
                    filter=political,
                ),
            ),
        ]
    return templates
