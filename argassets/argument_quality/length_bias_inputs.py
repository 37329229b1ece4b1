"""The length-bias report's inputs: the argument table and every expert comparison with its arguments'
log length ratio and length stratum (plain pandas, without Dagster)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.argument_quality.bradley_terry import ITEM_COLUMNS
from argassets.argument_quality.length_bias import length_strata, log_length_ratio
from argassets.argument_quality.scope import DIMENSIONS
from argassets.argument_quality.voting import encode_labels


def item_table(arguments: pd.DataFrame) -> pd.DataFrame:
    """One row per argument (its keys and ``text_length``): the item order of the report's fits."""
    missing = [c for c in (*ITEM_COLUMNS, "text_length") if c not in arguments.columns]
    if missing:
        raise ValueError(f"webis_arguments: missing column(s) {', '.join(missing)}")
    items = arguments[[*ITEM_COLUMNS, "text_length"]].drop_duplicates(list(ITEM_COLUMNS))
    bad = ~np.isfinite(items["text_length"].to_numpy(dtype=float)) | (items["text_length"].to_numpy(dtype=float) < 0)
    if bad.any():
        row = items.iloc[int(np.flatnonzero(bad)[0])]
        raise ValueError(
            f"webis_arguments: argument (topic {row['topic_id']}, discussion {row['discussion_id']}, "
            f"argument {row['argument_id']}) has text_length {row['text_length']}"
        )
    return items.reset_index(drop=True)


def comparison_lengths(
    experts: pd.DataFrame, arguments: pd.DataFrame, n_strata: int = 4
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every expert comparison with its arguments' item indices, log length ratio and length stratum.

    Returns
    -------
    tuple of pandas.DataFrame
        ``(comparisons, edges)``: ``comparisons`` holds ``dimension, comparison_id, topic_id,
        item_a, item_b, log_ratio, stratum, expert_code`` (item indices into :func:`item_table`
        order); ``edges`` holds per dimension the stratum edges of :math:`|\\log(L_a/L_b)|` and
        the corresponding length ratios.
    """
    _require_expert_columns(experts)
    items = item_table(arguments)
    positions = {side: _item_positions(experts, items, side) for side in ("a", "b")}
    length = items["text_length"].to_numpy(dtype=float)
    out = pd.DataFrame(
        {
            "dimension": experts["dimension"].astype(str).to_numpy(),
            "comparison_id": experts["comparison_id"].astype(str).to_numpy(),
            "topic_id": experts["topic_id"].to_numpy(dtype=np.int64),
            "item_a": positions["a"],
            "item_b": positions["b"],
            "log_ratio": log_length_ratio(length[positions["a"]], length[positions["b"]]),
            "expert_code": encode_labels(experts["label"].reset_index(drop=True)),
        }
    )
    return out, _assign_strata(out, n_strata)


def _require_expert_columns(experts: pd.DataFrame) -> None:
    needed = [
        "comparison_id",
        "dimension",
        "topic_id",
        "discussion_id_a",
        "argument_id_a",
        "discussion_id_b",
        "argument_id_b",
        "label",
    ]
    missing = [c for c in needed if c not in experts.columns]
    if missing:
        raise ValueError(f"webis_expert_comparisons: missing column(s) {', '.join(missing)}")


def _item_positions(experts: pd.DataFrame, items: pd.DataFrame, side: str) -> np.ndarray:
    """Index into ``items`` of each comparison's argument ``side``; an unknown argument is an error."""
    index = pd.MultiIndex.from_frame(items[list(ITEM_COLUMNS)].astype(np.int64))
    keys = pd.MultiIndex.from_arrays(
        [
            experts["topic_id"].astype(np.int64),
            experts[f"discussion_id_{side}"].astype(np.int64),
            experts[f"argument_id_{side}"].astype(np.int64),
        ]
    )
    pos = index.get_indexer(keys)
    if (pos < 0).any():
        row = experts.iloc[int(np.flatnonzero(pos < 0)[0])]
        raise ValueError(
            f"webis_expert_comparisons: comparison {row['comparison_id']!r} names argument "
            f"{row[f'discussion_id_{side}']}/{row[f'argument_id_{side}']} of topic {row['topic_id']}, "
            "which webis_arguments lacks"
        )
    return pos


def _assign_strata(out: pd.DataFrame, n_strata: int) -> pd.DataFrame:
    """Set ``out["stratum"]`` per dimension (in place); the stratum edges, one row per stratum."""
    out["stratum"] = 0
    edge_rows = []
    for dimension in [d for d in DIMENSIONS if d in set(out["dimension"])]:
        mask = (out["dimension"] == dimension).to_numpy()
        absolute = np.abs(out.loc[mask, "log_ratio"].to_numpy())
        stratum, edges = length_strata(absolute, n_strata=n_strata)
        out.loc[mask, "stratum"] = stratum
        for k in range(n_strata):
            edge_rows.append(
                {
                    "dimension": dimension,
                    "stratum": f"q{k + 1}",
                    "abs_log_ratio_low": float(edges[k]),
                    "abs_log_ratio_high": float(edges[k + 1]),
                    "length_ratio_low": float(np.exp(edges[k])),
                    "length_ratio_high": float(np.exp(edges[k + 1])),
                    "n_comparisons": int((stratum == k).sum()),
                }
            )
    return pd.DataFrame(edge_rows)
