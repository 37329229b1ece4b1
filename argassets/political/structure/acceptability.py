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
    joined = positions.merge(facets[["argument_id", "episode", *STATUSES]], on="argument_id", how="inner")
    if len(joined) < len(positions):
        raise ValueError(f"{len(positions) - len(joined)} position rows name no KB argument")
    if joined.empty:
        return pd.DataFrame(columns=ACCEPTABILITY_COLUMNS)
    clusters = pd.factorize(joined["episode"], sort=True)[0]
    weights = cluster_weights(int(clusters.max()) + 1, n_boot, seed)
    rows = []
    for system, part in joined.groupby("system", sort=False):
        at = part.index.to_numpy()
        political = political_positions(part).to_numpy()
        values = {
            "position": political,
            "extremity": np.abs(political - 50.0),
            "prob_na": part["prob_na"].to_numpy(dtype=float),
        }
        for status in STATUSES:
            group = part[status].astype(bool).to_numpy().astype(int)  # 1: with the status
            for measure in MEASURES:
                boot = grouped_means(values[measure], group, 2, clusters[at], weights)
                low, high = replicate_interval((boot.replicates[:, 1] - boot.replicates[:, 0])[:, None])
                rows.append(
                    {
                        "system": system,
                        "kind": str(part["kind"].iloc[0]),
                        "status": status,
                        "measure": measure,
                        "with_n": int(boot.count[1]),
                        "without_n": int(boot.count[0]),
                        "with": boot.estimate[1],
                        "without": boot.estimate[0],
                        "difference": boot.estimate[1] - boot.estimate[0],
                        "low": float(low[0]),
                        "high": float(high[0]),
                    }
                )
    return pd.DataFrame(rows, columns=ACCEPTABILITY_COLUMNS)
