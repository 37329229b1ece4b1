"""Items for a study, stratified by any column and reproducible by seed.

A stratified sample draws, without replacement, a stated number of items from each stratum (a
bucket of a system's probability of NA, a decile of a position score, a topic, ...). The draw
sorts the eligible items by their id first, so the same seed and the same items give the same
sample whatever the order of the input rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd

__all__ = ["allocate_equally", "bucket", "stratified_sample"]

K = TypeVar("K")


def bucket(values: Sequence[float] | np.ndarray | pd.Series, buckets: Mapping[str, tuple[float, float]]) -> pd.Series:
    """The name of the closed interval ``[low, high]`` each value falls in; missing when in none.

    Raises ``ValueError`` when two intervals overlap (a value would belong to two buckets).
    """
    spans = sorted((low, high, name) for name, (low, high) in buckets.items())
    for low, high, name in spans:
        if low > high:
            raise ValueError(f"bucket {name!r}: low {low} is above high {high}")
    for (_, high, name), (next_low, _, next_name) in zip(spans, spans[1:], strict=False):
        if next_low <= high:
            raise ValueError(f"buckets {name!r} and {next_name!r} overlap")
    x = pd.Series(np.asarray(values, dtype=float))
    out = pd.Series([None] * len(x), dtype=object)
    for low, high, name in spans:
        out[(x >= low) & (x <= high)] = name
    return out


def allocate_equally(available: Mapping[K, int], total: int) -> dict[K, int]:
    """``total`` items spread as evenly as the strata allow (a stratum gives at most what it has).

    The largest level ``L`` with ``sum(min(available, L)) <= total`` is given to every stratum;
    the items left over go one each to the strata with the most items still available (ties to
    the later stratum in the mapping's order). Raises ``ValueError`` when fewer than ``total`` items
    are available in all.
    """
    if total < 0:
        raise ValueError(f"total must be >= 0, got {total}")
    names = list(available)
    capacity = np.array([int(available[name]) for name in names], dtype=np.int64)
    if capacity.sum() < total:
        raise ValueError(f"{total} items wanted but only {int(capacity.sum())} are available in the strata")
    level = 0
    while np.minimum(capacity, level + 1).sum() <= total and level < capacity.max(initial=0):
        level += 1
    counts = np.minimum(capacity, level)
    left = total - int(counts.sum())
    order = sorted(range(len(names)), key=lambda i: (-(capacity[i] - counts[i]), -i))
    for i in order[:left]:
        counts[i] += 1
    return {name: int(count) for name, count in zip(names, counts, strict=True)}


def stratified_sample(
    items: pd.DataFrame,
    stratum_column: str,
    allocation: Mapping[Any, int],
    seed: int,
    id_column: str,
) -> pd.DataFrame:
    """Draw ``allocation[stratum]`` items from each stratum, without replacement.

    Parameters
    ----------
    items
        The eligible items, one row each, with ``id_column`` (unique) and ``stratum_column``.
    allocation
        Items wanted per stratum (strata not named are not drawn from).
    seed
        Seed of ``numpy.random.default_rng``; strata are drawn in the mapping's order.

    Returns
    -------
    pandas.DataFrame
        The drawn rows, stratum after stratum in the allocation's order and in draw order within
        a stratum, with a column ``stratum`` (a copy of ``stratum_column``) and ``draw`` (0, 1, ...).

    Raises
    ------
    ValueError
        Missing columns, repeated ids, a stratum with fewer items than allocated (named).
    """
    for column in (id_column, stratum_column):
        if column not in items.columns:
            raise ValueError(f"items have no column {column!r}")
    repeated = items[id_column][items[id_column].duplicated()]
    if len(repeated):
        raise ValueError(f"item id {repeated.iloc[0]!r} occurs twice in column {id_column!r}")
    rng = np.random.default_rng(seed)
    ordered = items.sort_values(id_column, kind="stable")
    drawn = []
    for stratum, wanted in allocation.items():
        members = ordered[ordered[stratum_column] == stratum]
        if wanted > len(members):
            raise ValueError(f"stratum {stratum!r}: {wanted} items wanted, {len(members)} available")
        chosen = members.iloc[rng.permutation(len(members))[:wanted]]
        drawn.append(chosen.assign(stratum=stratum))
    if not drawn:
        return items.iloc[:0].assign(stratum=pd.Series(dtype=object), draw=pd.Series(dtype="int64"))
    sample = pd.concat(drawn, ignore_index=True)
    sample["draw"] = np.arange(len(sample), dtype=np.int64)
    return sample
