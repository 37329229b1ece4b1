"""Connected components of undirected comparison graphs (both studies' Bradley-Terry inputs)."""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components


def components(n_nodes: int, node_a: np.ndarray, node_b: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of the undirected graph with an edge ``node_a[k]``--``node_b[k]``.

    Returns
    -------
    tuple[int, numpy.ndarray]
        The number of components and the component label of each node (``0..count-1``).
    """
    a = np.asarray(node_a, dtype=np.int64)
    b = np.asarray(node_b, dtype=np.int64)
    if a.shape != b.shape:
        raise ValueError(f"node_a and node_b differ in shape: {a.shape} and {b.shape}")
    if n_nodes == 0:
        return 0, np.zeros(0, dtype=np.int64)
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(n_nodes, n_nodes))
    count, labels = connected_components(graph, directed=False)
    return int(count), labels
