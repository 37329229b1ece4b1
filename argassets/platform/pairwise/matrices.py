"""Win-count matrices of labelled pairs, and the connected components of comparison graphs."""

from __future__ import annotations

from typing import Literal

import numpy as np

from argassets.platform.pairwise.graphs import components

__all__ = ["TIE_HANDLING", "TieHandling", "comparison_components", "count_matrices"]

TieHandling = Literal["win_each", "half_each", "drop"]
TIE_HANDLING: tuple[str, ...] = ("win_each", "half_each", "drop")
_TIE_WEIGHT = {"win_each": 1.0, "half_each": 0.5, "drop": 0.0}


def count_matrices(
    n_items: int,
    cells: np.ndarray,
    n_cells: int,
    item_a: np.ndarray,
    item_b: np.ndarray,
    codes: np.ndarray,
    ties: TieHandling = "win_each",
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Stacked win-count matrices ``W[cell, i, j]`` = (weighted) times item *i* beat item *j*.

    Parameters
    ----------
    n_items
        Items per matrix (local indices ``0 .. n_items-1``).
    cells, n_cells
        Matrix of each comparison, and how many matrices.
    item_a, item_b
        Local index of item A and B of each comparison.
    codes
        Label codes (0 = A wins, 1 = B wins, 2 = tie, -1 = ignored).
    ties
        See :data:`TIE_HANDLING`.
    weights
        Multiplicity of each comparison (bootstrap); default 1.
    """
    w = np.ones(len(codes)) if weights is None else np.asarray(weights, dtype=float)
    tie_w = _TIE_WEIGHT[ties]
    base = cells.astype(np.int64) * n_items * n_items
    winner = np.where(codes == 1, item_b, item_a).astype(np.int64)
    loser = np.where(codes == 1, item_a, item_b).astype(np.int64)
    decisive = (codes == 0) | (codes == 1)
    tie = codes == 2
    size = n_cells * n_items * n_items
    flat = np.bincount(base[decisive] + winner[decisive] * n_items + loser[decisive], w[decisive], size)
    if tie_w > 0 and tie.any():
        ia, ib, bt = item_a[tie].astype(np.int64), item_b[tie].astype(np.int64), base[tie]
        flat += np.bincount(bt + ia * n_items + ib, tie_w * w[tie], size)
        flat += np.bincount(bt + ib * n_items + ia, tie_w * w[tie], size)
    return flat.reshape(n_cells, n_items, n_items)


def comparison_components(n_nodes: int, node_a: np.ndarray, node_b: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Connected components of comparison graphs, numbered within each group by size.

    Parameters
    ----------
    n_nodes
        Number of nodes (all groups together; every node belongs to one group, and edges join
        nodes of the same group).
    node_a, node_b
        The two nodes of each comparison (an undirected edge).
    groups
        Group of each node (e.g. one configuration and topic).

    Returns
    -------
    numpy.ndarray
        Component number of each node within its group: 0 for the largest component (ties broken
        by the smallest node), 1 for the next, ...; a connected group has only 0.
    """
    if n_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    n_components, labels = components(n_nodes, node_a, node_b)
    size = np.bincount(labels, minlength=n_components)
    first = np.full(n_components, n_nodes, dtype=np.int64)
    np.minimum.at(first, labels, np.arange(n_nodes))
    comp_group = np.asarray(groups)[first]
    order = np.lexsort((first, -size, comp_group))
    rank = np.empty(n_components, dtype=np.int64)
    sorted_groups = comp_group[order]
    group_start = np.searchsorted(sorted_groups, sorted_groups)
    rank[order] = np.arange(n_components) - group_start
    return rank[labels]
