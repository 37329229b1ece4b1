"""Position bias: how often a judge's verdict follows the slot (A or B) rather than the item (docs/pairwise.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from argassets.platform.pairwise.labels import MISSING, encode_labels, factorize_columns
from argassets.platform.pairwise.votes import majority_of_runs

__all__ = ["POSITION_METRICS", "position_bias_metrics"]

POSITION_METRICS: tuple[str, ...] = (
    "order_consistency",
    "order_consistency_majority",
    "first_position_share",
    "first_position_pvalue",
    "tie_share",
)


def _runs_by_order(
    keys: np.ndarray, n_keys: int, run: np.ndarray, code: np.ndarray, swapped: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(n_keys, n_runs)`` codes in the pair's own order and in the swapped order (as given)."""
    n_runs = max(int(run.max()) + 1, 1)
    slot = keys * n_runs + run
    by_order = []
    for flag in (False, True):
        table = np.full(n_keys * n_runs, MISSING, dtype=np.int8)
        table[slot[swapped == flag]] = code[swapped == flag]
        by_order.append(table.reshape(n_keys, n_runs))
    return by_order[0], by_order[1]


def _bias_counts(
    key_group: np.ndarray, n_groups: int, row_group: np.ndarray, ab: np.ndarray, ba: np.ndarray, presented: np.ndarray
) -> dict[str, np.ndarray]:
    """Per group: pairs judged in both orders and consistent, the same for majorities, and the
    verdicts for the first item, the second and ties."""
    n_runs = ab.shape[1]
    both = (ab >= 0) & (ba >= 0)
    counts = {
        "pairs": np.bincount(np.repeat(key_group, n_runs), both.ravel(), n_groups),
        "consistent": np.bincount(np.repeat(key_group, n_runs), (both & (ab == ba)).ravel(), n_groups),
    }
    maj_ab, maj_ba = majority_of_runs(ab), majority_of_runs(ba)
    maj_both = (maj_ab >= 0) & (maj_ba >= 0)
    counts["maj_pairs"] = np.bincount(key_group, maj_both, n_groups)
    counts["maj_consistent"] = np.bincount(key_group, maj_both & (maj_ab == maj_ba), n_groups)
    for name, value in (("first", 0), ("second", 1), ("tie", 2)):
        counts[name] = np.bincount(row_group, presented == value, n_groups)
    counts["valid"] = np.bincount(row_group, presented >= 0, n_groups)
    return counts


def _metrics(table: pd.DataFrame) -> pd.DataFrame:
    """The shares and the binomial test from the counts of :func:`_bias_counts`."""
    with np.errstate(all="ignore"):
        decisive = table["first"] + table["second"]
        table["order_consistency"] = np.where(table["pairs"] > 0, table["consistent"] / table["pairs"], np.nan)
        table["order_consistency_majority"] = np.where(
            table["maj_pairs"] > 0, table["maj_consistent"] / table["maj_pairs"], np.nan
        )
        table["first_position_share"] = np.where(decisive > 0, table["first"] / decisive, np.nan)
        table["tie_share"] = np.where(table["valid"] > 0, table["tie"] / table["valid"], np.nan)
    table["first_position_pvalue"] = [
        float(stats.binomtest(int(f), int(d), 0.5).pvalue) if d else np.nan
        for f, d in zip(table["first"], decisive, strict=True)
    ]
    table["n_pairs"] = table["pairs"].astype(np.int64)
    table["n_pairs_majority"] = table["maj_pairs"].astype(np.int64)
    table["n_decisive"] = decisive.astype(np.int64)
    table["n_judgments"] = table["valid"].astype(np.int64)
    return table


def _runs_and_codes(
    judgments: pd.DataFrame, run_column: str, label_column: str, rows: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The run index and label code of every selected row."""
    run = judgments[run_column].to_numpy()
    label = judgments[label_column].to_numpy()
    if rows is not None:
        run, label = run[rows], label[rows]
    return run.astype(np.int64), encode_labels(label)


def position_bias_metrics(
    judgments: pd.DataFrame,
    group_columns: Sequence[str],
    facet_column: str,
    pair_column: str,
    swapped: np.ndarray,
    *,
    rows: np.ndarray | None = None,
    names: Mapping[str, str] | None = None,
    pooled_facet: str = "all",
    run_column: str = "run",
    label_column: str = "label",
) -> pd.DataFrame:
    """Position-bias metrics per (group, facet), and pooled over facets (``facet = pooled_facet``).

    Parameters
    ----------
    judgments
        One row per verdict: the ``group_columns``, ``facet_column``, ``pair_column``, run index
        and label (``A``/``B``/``Tie`` in the pair's own orientation, also for the swapped order;
        null when invalid).
    group_columns
        Columns that identify one judge (e.g. model and prompt strategy).
    facet_column, pair_column
        The facet judged (e.g. a quality dimension) and the pair.
    swapped
        Per (selected) row: ``True`` when the pair was shown in the swapped order (B first).
    rows
        Optional boolean mask of the rows to use (default all).
    names
        Output names of group columns that differ from the input names.
    pooled_facet
        Facet value of the rows pooled over all facets.
    run_column, label_column
        Names of the run index and the label.

    Returns
    -------
    pandas.DataFrame
        The group columns, the facet, :data:`POSITION_METRICS`, ``n_pairs``, ``n_pairs_majority``
        (pairs with a majority in both orders), ``n_decisive``,
        ``n_judgments`` and ``measured`` (``True``): the per-facet rows, then the pooled rows.
    """
    group_columns = list(group_columns)
    swapped = np.asarray(swapped, dtype=bool)
    keys, uniques = factorize_columns(judgments, [*group_columns, facet_column, pair_column], rows=rows)
    group, groups = factorize_columns(uniques, [*group_columns, facet_column])
    run, code = _runs_and_codes(judgments, run_column, label_column, rows)
    # The label as presented: swapping A and B back for the swapped order.
    presented = np.where(swapped & (code == 0), 1, np.where(swapped & (code == 1), 0, code))
    ab, ba = _runs_by_order(keys, len(uniques), run, code, swapped)
    counts = _bias_counts(group, len(groups), group[keys], ab, ba, presented)
    out_groups = [dict(names or {}).get(c, c) for c in group_columns]
    per_facet = groups.rename(columns=dict(names or {})).assign(**counts)
    pooled = per_facet.groupby(out_groups, sort=True)[list(counts)].sum().reset_index()
    pooled[facet_column] = pooled_facet
    table = _metrics(pd.concat([per_facet, pooled], ignore_index=True))
    table["measured"] = True
    return table.drop(columns=list(counts))
