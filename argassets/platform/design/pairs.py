"""Which pairs of items a pairwise study compares.

- :func:`strata_pairs`: the political paper's design. Items are binned (e.g. deciles of a system's
  position score); a stated number of pairs is drawn within each bin and between each two bins,
  so that every argument meets arguments of every bin. Within a block the pairs are drawn so that
  degrees stay even: the next pair is the one whose two items have been paired least so far (ties
  broken by a seeded random key), which keeps every item's partners spread over the bins.
- :func:`random_pairs`: distinct pairs drawn uniformly (within groups, e.g. topics).
- :func:`connection_entropy`: per item, the Shannon entropy (bits) of the strata of its partners.

Pairs are tables ``item_1, item_2`` (plus the strata and the kind of block); an unordered pair
occurs at most once.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

__all__ = ["PAIR_COLUMNS", "connection_entropy", "random_pairs", "strata_pairs"]

PAIR_COLUMNS = ["item_1", "item_2", "stratum_1", "stratum_2", "kind"]

#: Largest group whose pairs :func:`random_pairs` lists in full.
MAX_ITEMS_PER_GROUP = 5000


def _balanced_pick(candidates: list[tuple[int, int]], wanted: int, degree: np.ndarray, key: np.ndarray) -> list[int]:
    """Indices of ``wanted`` candidates, each time the one with the fewest pairs so far."""
    a = np.array([c[0] for c in candidates], dtype=np.int64)
    b = np.array([c[1] for c in candidates], dtype=np.int64)
    free = np.ones(len(candidates), dtype=bool)
    picked = []
    for _ in range(wanted):
        load = np.where(free, degree[a] + degree[b] + key, np.inf)
        k = int(np.argmin(load))
        free[k] = False
        degree[a[k]] += 1
        degree[b[k]] += 1
        picked.append(k)
    return picked


def strata_pairs(
    item_ids: Sequence[Hashable],
    strata: Sequence[Hashable],
    within_per_stratum: int,
    between_per_stratum_pair: int,
    seed: int,
    stratum_order: Sequence[Hashable] | None = None,
) -> pd.DataFrame:
    """Pairs within every stratum and between every two strata.

    Parameters
    ----------
    item_ids, strata
        The items and the stratum of each.
    within_per_stratum
        Pairs drawn inside each stratum (all of them when the stratum has fewer).
    between_per_stratum_pair
        Pairs drawn between each two strata (all when fewer exist).
    seed
        Seed of the random tie-breaking and orientation.
    stratum_order
        Order of the strata (default: sorted); ``item_1`` of a between pair lies in the earlier one.

    Returns
    -------
    pandas.DataFrame
        :data:`PAIR_COLUMNS`; ``kind`` is ``within`` or ``between``; blocks in stratum order.
    """
    ids = list(item_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique")
    if len(strata) != len(ids):
        raise ValueError(f"{len(ids)} items but {len(strata)} strata")
    if within_per_stratum < 0 or between_per_stratum_pair < 0:
        raise ValueError("pairs per block must be >= 0")
    order = list(stratum_order) if stratum_order is not None else sorted(set(strata), key=str)
    unknown = set(strata) - set(order)
    if unknown:
        raise ValueError(f"stratum {sorted(unknown, key=str)[0]!r} is not in stratum_order")
    members = {s: [i for i, t in enumerate(strata) if t == s] for s in order}
    rng = np.random.default_rng(seed)
    degree = np.zeros(len(ids), dtype=float)
    rows: list[tuple[object, object, object, object, str]] = []
    blocks = [(s, s, "within", within_per_stratum) for s in order]
    blocks += [(s, t, "between", between_per_stratum_pair) for s, t in combinations(order, 2)]
    for first, second, kind, quota in blocks:
        if kind == "within":
            candidates = list(combinations(members[first], 2))
        else:
            candidates = [(i, j) for i in members[first] for j in members[second]]
        if not candidates or quota == 0:
            continue
        key = rng.random(len(candidates)) * 1e-3  # tie-break only: below one pair of degree
        for k in _balanced_pick(candidates, min(quota, len(candidates)), degree, key):
            i, j = candidates[k]
            if kind == "within" and rng.random() < 0.5:
                i, j = j, i
            rows.append((ids[i], ids[j], first, second, kind))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def random_pairs(
    item_ids: Sequence[Hashable], n_pairs: int, seed: int, groups: Sequence[Hashable] | None = None
) -> pd.DataFrame:
    """``n_pairs`` distinct unordered pairs drawn uniformly among the pairs of items of one group.

    Returns :data:`PAIR_COLUMNS` with the group as both strata and ``kind`` ``random``; raises
    ``ValueError`` when fewer pairs exist.
    """
    ids = list(item_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique")
    labels = list(groups) if groups is not None else [None] * len(ids)
    if len(labels) != len(ids):
        raise ValueError(f"{len(ids)} items but {len(labels)} groups")
    candidates: list[tuple[int, int]] = []
    for group in dict.fromkeys(labels):
        members = [i for i, g in enumerate(labels) if g == group]
        if len(members) > MAX_ITEMS_PER_GROUP:
            raise ValueError(f"group {group!r} has {len(members)} items; at most {MAX_ITEMS_PER_GROUP} are supported")
        candidates += list(combinations(members, 2))
    if n_pairs > len(candidates):
        raise ValueError(f"{n_pairs} pairs wanted but only {len(candidates)} exist")
    rng = np.random.default_rng(seed)
    rows = []
    for k in rng.choice(len(candidates), size=n_pairs, replace=False):
        i, j = candidates[int(k)]
        if rng.random() < 0.5:
            i, j = j, i
        rows.append((ids[i], ids[j], labels[i], labels[j], "random"))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def connection_entropy(pairs: np.ndarray, item_strata: np.ndarray, n_strata: int) -> np.ndarray:
    """Per item, the Shannon entropy (base 2) of the strata of the items it is paired with.

    ``pairs``: ``(m, 2)`` item indices; ``item_strata``: stratum code ``0..n_strata-1`` per item.
    Ideal for ``s`` strata: ``log2(s)`` (partners spread evenly over every stratum).
    """
    index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    codes = np.asarray(item_strata, dtype=np.int64)
    counts = np.zeros((codes.size, n_strata))
    np.add.at(counts, (index[:, 0], codes[index[:, 1]]), 1.0)
    np.add.at(counts, (index[:, 1], codes[index[:, 0]]), 1.0)
    totals = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(p), 0.0)
    return terms.sum(axis=1)
