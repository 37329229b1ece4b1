"""The design of the pairwise study: connection entropy, components, label shares."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from argassets.platform.pairwise.graphs import components
from argassets.political.validation.win_matrices import N_BINS


def connection_entropy(pairs: np.ndarray, item_bins: np.ndarray) -> np.ndarray:
    """Per item, the Shannon entropy (base 2) of the bins of the items it is paired with.

    Ideal for 8 non-empty bins: ``log2(8) = 3`` (partners spread evenly over every bin).
    """
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    bins = np.asarray(item_bins, dtype=np.int64)
    counts = np.zeros((bins.size, N_BINS))
    np.add.at(counts, (index[:, 0], bins[index[:, 1]]), 1.0)
    np.add.at(counts, (index[:, 1], bins[index[:, 0]]), 1.0)
    totals = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(p), 0.0)
    return terms.sum(axis=1)


def graph_components(n_items: int, pairs: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of the comparison graph: (count, label per item)."""
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return components(n_items, index[:, 0], index[:, 1])


def distinct_label_shares(votes: pd.DataFrame) -> pd.DataFrame:
    """Share of pairs with 1, 2 or 3 distinct labels among their votes, per framing.

    Returns ``framing``, ``distinct_labels``, ``n_pairs``, ``share``.
    """
    rows = []
    for framing, group in votes.groupby("framing", sort=True):
        distinct = group.groupby(["meta_id1", "meta_id2"])["label"].nunique()
        total = len(distinct)
        for k in (1, 2, 3):
            n = int((distinct == k).sum())
            rows.append((framing, k, n, n / total if total else math.nan))
    return pd.DataFrame(rows, columns=["framing", "distinct_labels", "n_pairs", "share"])
