"""Positions across the 30 dated debates, and the speakers heard in several of them, traced."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.political.structure.intervals import N_BOOT, SEED, grouped_means, speaker_clusters
from argassets.political.structure.positions import political_positions

DEBATE_COLUMNS = [
    "system",
    "kind",
    "episode",
    "arguments",
    "political",
    "position",
    "position_low",
    "position_high",
    "prob_na",
    "prob_na_low",
    "prob_na_high",
]
SPEAKER_COLUMNS = ["system", "kind", "speaker", "role", "episode", "arguments", "political", "position", "prob_na"]
#: Roles whose speakers are traced across debates (the chair is in all of them, and anonymous
#: or unknown labels name no one).
TRACED_ROLES = ("panellist", "other named")


def debate_positions(
    positions: pd.DataFrame, facets: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """Per system and debate: mean position of the political arguments and mean P(NA), with
    intervals that resample speakers within each debate."""
    index = pd.Series(np.arange(len(facets)), index=facets["argument_id"].to_numpy())
    where = positions["argument_id"].map(index)
    if where.isna().any():
        raise ValueError(f"{int(where.isna().sum())} position rows name no KB argument")
    if positions.empty:
        return pd.DataFrame(columns=DEBATE_COLUMNS)
    at = where.to_numpy(dtype=int)
    episodes, labels = pd.factorize(facets["episode"], sort=True)
    clusters, weights = speaker_clusters(facets, n_boot, seed)
    system_code, names = pd.factorize(positions["system"])
    kinds = positions.groupby("system", sort=False)["kind"].first().reindex(names).to_numpy()
    groups = system_code * len(labels) + episodes[at]
    n_groups = len(names) * len(labels)
    political = political_positions(positions).to_numpy()
    columns: dict[str, object] = {
        "system": np.repeat(np.asarray(names, dtype=object), len(labels)),
        "kind": np.repeat(kinds, len(labels)),
        "episode": np.tile(np.asarray(labels, dtype=object), len(names)),
        "arguments": np.bincount(groups, minlength=n_groups),
        "political": np.bincount(groups, weights=np.isfinite(political), minlength=n_groups).astype("int64"),
    }
    for name, values in (("position", political), ("prob_na", positions["prob_na"].to_numpy(dtype=float))):
        boot = grouped_means(values, groups, n_groups, clusters[at], weights)
        low, high = boot.interval()
        columns[name], columns[f"{name}_low"], columns[f"{name}_high"] = boot.estimate, low, high
    out = pd.DataFrame(columns)
    return out[out["arguments"] > 0][DEBATE_COLUMNS].reset_index(drop=True)


def recurring_speakers(positions: pd.DataFrame, facets: pd.DataFrame, min_debates: int = 2) -> pd.DataFrame:
    """Per system, speaker (of :data:`TRACED_ROLES`, heard in ``min_debates``+ debates) and debate:
    arguments, political arguments, mean position and mean P(NA)."""
    traced = facets[facets["role"].isin(TRACED_ROLES)]
    debates = traced.groupby("speaker")["episode"].nunique()
    traced = traced[traced["speaker"].isin(debates[debates >= min_debates].index)]
    joined = positions.merge(traced[["argument_id", "speaker", "role", "episode"]], on="argument_id", how="inner")
    joined["political_position"] = political_positions(joined)
    grouped = joined.groupby(["system", "kind", "speaker", "episode"], sort=False)
    out = grouped.agg(
        arguments=("argument_id", "size"),
        political=("political_position", "count"),
        position=("political_position", "mean"),
        prob_na=("prob_na", "mean"),
        role=("role", lambda r: "/".join(sorted(set(r)))),
    ).reset_index()
    return out.sort_values(["system", "speaker", "episode"], kind="stable")[SPEAKER_COLUMNS].reset_index(drop=True)
