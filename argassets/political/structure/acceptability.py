"""Acceptability and ideology: do justified, undermined or rebutted arguments sit elsewhere?

For each system and each status (justified: the proposition is concluded by an argument of the
grounded extension; undermined; rebutted), the arguments with the status against the rest: mean
position and extremity (|position - 50|) of the political ones, mean P(NA) of all, and the
difference (with - without) with an interval that resamples debates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.political.structure.intervals import N_BOOT, SEED, cluster_weights, grouped_means, replicate_interval
from argassets.political.structure.positions import political_positions

STATUSES = ("justified", "undermined", "rebutted")
MEASURES = ("position", "extremity", "prob_na")
ACCEPTABILITY_COLUMNS = [
    "system",
    "kind",
    "status",
    "measure",
    "with_n",
    "without_n",
    "with",
    "without",
    "difference",
    "low",
    "high",
]


def acceptability_differences(
    positions: pd.DataFrame, facets: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """:data:`ACCEPTABILITY_COLUMNS`, one row per system, status and measure."""
    index = pd.Series(np.arange(len(facets)), index=facets["argument_id"].to_numpy())
    where = positions["argument_id"].map(index)
    if where.isna().any():
        raise ValueError(f"{int(where.isna().sum())} position rows name no KB argument")
    if positions.empty:
        return pd.DataFrame(columns=ACCEPTABILITY_COLUMNS)
    at = where.to_numpy(dtype=int)
    clusters = pd.factorize(facets["episode"], sort=True)[0][at]
    weights = cluster_weights(int(clusters.max()) + 1, n_boot, seed)
    system_code, names = pd.factorize(positions["system"])
    kinds = positions.groupby("system", sort=False)["kind"].first().reindex(names).to_numpy()
    political = political_positions(positions).to_numpy()
    values = {
        "position": political,
        "extremity": np.abs(political - 50.0),
        "prob_na": positions["prob_na"].to_numpy(dtype=float),
    }
    frames = []
    for status in STATUSES:
        # group 2s + 1: system s with the status, 2s: without
        groups = system_code * 2 + facets[status].astype(bool).to_numpy()[at].astype(int)
        for measure in MEASURES:
            boot = grouped_means(values[measure], groups, 2 * len(names), clusters, weights)
            low, high = replicate_interval(boot.replicates[:, 1::2] - boot.replicates[:, 0::2])
            frames.append(
                pd.DataFrame(
                    {
                        "system": np.asarray(names, dtype=object),
                        "kind": kinds,
                        "status": status,
                        "measure": measure,
                        "with_n": boot.count[1::2],
                        "without_n": boot.count[0::2],
                        "with": boot.estimate[1::2],
                        "without": boot.estimate[0::2],
                        "difference": boot.estimate[1::2] - boot.estimate[0::2],
                        "low": low,
                        "high": high,
                    }
                )
            )
    out = pd.concat(frames, ignore_index=True)
    # one block per system, as the other tables
    order = {name: i for i, name in enumerate(names)}
    out = out.assign(_s=out["system"].map(order)).sort_values("_s", kind="stable").drop(columns="_s")
    return out[ACCEPTABILITY_COLUMNS].reset_index(drop=True)
