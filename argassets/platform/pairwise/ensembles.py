"""Ensembles of judges: one label per pair from the labels of several members, by plurality."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from argassets.platform.pairwise.labels import MISSING, decode_labels, encode_labels, factorize_columns
from argassets.platform.pairwise.votes import plurality_vote

__all__ = ["ensemble_votes"]


def ensemble_votes(
    labels: pd.DataFrame,
    member_column: str,
    key_columns: Sequence[str],
    *,
    label_column: str = "majority_label",
) -> tuple[pd.DataFrame, list[object]]:
    """The plurality of the members' labels on every key (e.g. facet and pair).

    Parameters
    ----------
    labels
        One row per (member, key): ``member_column``, the ``key_columns`` and the label
        (``A``/``B``/``Tie``, null for no verdict).
    member_column
        Column naming the member.
    key_columns
        Columns that identify one voted item.
    label_column
        Column holding each member's label.

    Returns
    -------
    tuple
        ``(votes, members)``: one row per key, sorted (the key columns, ``label_column`` with the
        ensemble's label and ``n_members_voting``), and the sorted member names.

    Raises
    ------
    ValueError
        A member labels the same key twice (naming the member).
    """
    labels = labels.reset_index(drop=True)
    member_codes, members = pd.factorize(labels[member_column], sort=True)
    item_codes, votes = factorize_columns(labels, key_columns)
    slots = item_codes.astype(np.int64) * len(members) + member_codes
    if len(slots) and np.bincount(slots).max() > 1:
        twice = int(np.flatnonzero(np.bincount(slots) > 1)[0])
        raise ValueError(f"ensemble labels: member {members[twice % len(members)]!r} labels the same item twice")
    grid = np.full((len(votes), len(members)), MISSING, dtype=np.int8)
    grid[item_codes, member_codes] = encode_labels(labels[label_column])
    votes[label_column] = pd.Series(decode_labels(plurality_vote(grid)))
    votes["n_members_voting"] = (grid >= 0).sum(axis=1)
    return votes, list(members)
