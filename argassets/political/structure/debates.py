"""Positions across the 30 dated debates, and the speakers heard in several of them, traced."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.political.structure.intervals import N_BOOT, SEED, cluster_weights, grouped_means
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
    intervals that resample the debate's speakers."""
    joined = positions.merge(facets[["argument_id", "episode", "speaker"]], on="argument_id", how="inner")
    if len(joined) < len(positions):
        raise ValueError(f"{len(positions) - len(joined)} position rows name no KB argument")
    if joined.empty:
        return pd.DataFrame(columns=DEBATE_COLUMNS)
    episodes, labels = pd.factorize(joined["episode"], sort=True)
    clusters = pd.factorize(joined["speaker"], sort=True)[0]
    weights = cluster_weights(int(clusters.max()) + 1, n_boot, seed)
    frames = []
    for system, rows in joined.groupby("system", sort=False):
        at = rows.index.to_numpy()
        political = political_positions(rows).to_numpy()
        frame = pd.DataFrame({"episode": list(labels)})
        frame["arguments"] = np.bincount(episodes[at], minlength=len(labels))
        frame["political"] = np.bincount(episodes[at], weights=np.isfinite(political), minlength=len(labels))
        for name, values in (("position", political), ("prob_na", rows["prob_na"].to_numpy(dtype=float))):
            boot = grouped_means(values, episodes[at], len(labels), clusters[at], weights)
            low, high = boot.interval()
            frame[name], frame[f"{name}_low"], frame[f"{name}_high"] = boot.estimate, low, high
        frames.append(frame.assign(system=system, kind=str(rows["kind"].iloc[0])))
    out = pd.concat(frames, ignore_index=True)[DEBATE_COLUMNS]
    return out.astype({"political": "int64"})


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
