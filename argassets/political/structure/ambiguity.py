"""Where ideological ambiguity concentrates: P(NA) and positional spread by facet of the dialogue.

Per system and facet value (illocutionary force, speaker role, debate, transition depth): the mean
P(NA), the share of arguments whose P(NA) is between 0.3 and 0.7 (the system cannot decide whether
they are political), and the mean std of the system's repetitions (arguments with 2+ valid scores).
The pseudo-system ``across models`` gives the std of the models' positions per argument instead
(the disagreement between models). Intervals resample debates, or speakers for the debate facet.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.political.structure.facets import DEPTH_BINS, IN_CYCLE, NO_TRANSITION, ROLES
from argassets.political.structure.intervals import (
    N_BOOT,
    SEED,
    Bootstrap,
    cluster_weights,
    grouped_means,
    speaker_clusters,
)
from argassets.political.structure.positions import ACROSS_MODELS, AMBIGUOUS, across_model_spread

#: facet name -> column of the facets table
FACETS = {"force": "force", "speaker role": "role", "debate": "episode", "transition depth": "depth_bin"}
AMBIGUITY_COLUMNS = [
    "system",
    "kind",
    "facet",
    "value",
    "arguments",
    "prob_na",
    "prob_na_low",
    "prob_na_high",
    "ambiguous_share",
    "ambiguous_share_low",
    "ambiguous_share_high",
    "spread",
    "spread_low",
    "spread_high",
    "spread_kind",
]


def _clusters(facets: pd.DataFrame, facet: str, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Cluster codes and bootstrap weights: debates, or speakers within their debate when the
    facet is the debate itself."""
    if facet == "debate":
        return speaker_clusters(facets, n_boot, seed)
    clusters = pd.factorize(facets["episode"], sort=True)[0]
    return clusters, cluster_weights(int(clusters.max()) + 1, n_boot, seed)


def _measures(name: str, kind: str, rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """P(NA), ambiguous (0/1) and the spread of one system's rows (NaN where undefined)."""
    prob_na = rows["prob_na"].to_numpy(dtype=float)
    ambiguous = np.where(np.isnan(prob_na), np.nan, (prob_na >= AMBIGUOUS[0]) & (prob_na <= AMBIGUOUS[1]))
    if kind == "spread":
        dispersion = rows["spread"].to_numpy(dtype=float)
    else:  # the std of one valid score is no spread
        dispersion = np.where(rows["n_scores"].to_numpy() >= 2, rows["std"].to_numpy(dtype=float), np.nan)
    return {"prob_na": prob_na, "ambiguous_share": ambiguous, "spread": dispersion}


def ambiguity_by_facet(
    positions: pd.DataFrame, facets: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """:data:`AMBIGUITY_COLUMNS` for every system, the ``across models`` spread and every facet."""
    if positions.empty or facets.empty:
        return pd.DataFrame(columns=AMBIGUITY_COLUMNS)
    index = pd.Series(np.arange(len(facets)), index=facets["argument_id"].to_numpy())
    systems = [(str(name), str(rows["kind"].iloc[0]), rows) for name, rows in positions.groupby("system", sort=False)]
    systems.append((ACROSS_MODELS, "spread", across_model_spread(positions)))
    # every system's rows end to end: one bootstrap per facet and measure serves them all
    at = np.concatenate([_rows_of(rows, index) for _, _, rows in systems])
    system_code = np.repeat(np.arange(len(systems)), [len(rows) for _, _, rows in systems])
    parts = [_measures(*system) for system in systems]
    values = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    names, kinds = [s[0] for s in systems], [s[1] for s in systems]
    frames = []
    for facet, column in FACETS.items():
        codes, labels = _factorize(facets[column], facet)
        clusters, weights = _clusters(facets, facet, n_boot, seed)
        groups = system_code * len(labels) + codes[at]
        n_groups = len(systems) * len(labels)
        columns: dict[str, object] = {
            "system": np.repeat(names, len(labels)),
            "kind": np.repeat(kinds, len(labels)),
            "facet": facet,
            "value": np.tile(np.asarray(labels, dtype=object), len(systems)),
        }
        for name, measure in values.items():
            boot: Bootstrap = grouped_means(measure, groups, n_groups, clusters[at], weights)
            low, high = boot.interval()
            if name == "prob_na":  # the arguments a system scored (P(NA) is defined for each)
                columns["arguments"] = boot.count
            columns[name], columns[f"{name}_low"], columns[f"{name}_high"] = boot.estimate, low, high
        frame = pd.DataFrame(columns)
        frame["spread_kind"] = np.where(frame["kind"] == "spread", "std across models", "std across repetitions")
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    return out[out["arguments"] > 0][AMBIGUITY_COLUMNS].reset_index(drop=True)


def _rows_of(rows: pd.DataFrame, index: pd.Series) -> np.ndarray:
    """Positions in the facets table of ``rows``' arguments; an unknown argument is an error."""
    where = rows["argument_id"].map(index)
    if where.isna().any():
        raise ValueError(f"argument {rows.loc[where.isna(), 'argument_id'].iloc[0]} is no KB argument")
    return where.to_numpy(dtype=int)


def _factorize(values: pd.Series, facet: str) -> tuple[np.ndarray, list[str]]:
    """Codes and labels of a facet, in reading order (roles and depth bins in their own order)."""
    order = {"speaker role": list(ROLES), "transition depth": [*(b[2] for b in DEPTH_BINS), NO_TRANSITION, IN_CYCLE]}
    labels = order.get(facet, sorted(set(values)))
    labels += sorted(set(values) - set(labels))
    codes = values.map({label: i for i, label in enumerate(labels)}).to_numpy(dtype=int)
    return codes, labels
