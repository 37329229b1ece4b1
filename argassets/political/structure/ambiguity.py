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
from argassets.political.structure.intervals import N_BOOT, SEED, Bootstrap, cluster_weights, grouped_means
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


def _clusters(facets: pd.DataFrame, facet: str) -> np.ndarray:
    """Debates, or speakers within a debate when the facet is the debate itself."""
    if facet == "debate":
        return pd.factorize(facets["episode"] + "\x00" + facets["speaker"], sort=True)[0]
    return pd.factorize(facets["episode"], sort=True)[0]


def _rows(
    values: dict[str, np.ndarray], codes: np.ndarray, labels: list, clusters: np.ndarray, weights: np.ndarray
) -> pd.DataFrame:
    frame = pd.DataFrame({"value": labels})
    boots: dict[str, Bootstrap] = {
        name: grouped_means(v, codes, len(labels), clusters, weights) for name, v in values.items()
    }
    frame["arguments"] = boots["prob_na"].count
    for name, boot in boots.items():
        low, high = boot.interval()
        frame[name], frame[f"{name}_low"], frame[f"{name}_high"] = boot.estimate, low, high
    return frame


def ambiguity_by_facet(
    positions: pd.DataFrame, facets: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED
) -> pd.DataFrame:
    """:data:`AMBIGUITY_COLUMNS` for every system, the ``across models`` spread and every facet."""
    if positions.empty or facets.empty:
        return pd.DataFrame(columns=AMBIGUITY_COLUMNS)
    index = pd.Series(np.arange(len(facets)), index=facets["argument_id"].to_numpy())
    spread = across_model_spread(positions)
    systems = [
        (name, str(rows["kind"].iloc[0]), rows, _rows_of(rows, index))
        for name, rows in positions.groupby("system", sort=False)
    ]
    systems.append((ACROSS_MODELS, "spread", spread, _rows_of(spread, index)))
    frames = []
    for facet, column in FACETS.items():
        codes, labels = _factorize(facets[column], facet)
        clusters = _clusters(facets, facet)
        weights = cluster_weights(int(clusters.max()) + 1, n_boot, seed)
        for name, kind, rows, at in systems:
            prob_na = rows["prob_na"].to_numpy(dtype=float)
            ambiguous = np.where(np.isnan(prob_na), np.nan, (prob_na >= AMBIGUOUS[0]) & (prob_na <= AMBIGUOUS[1]))
            if kind == "spread":
                dispersion = rows["spread"].to_numpy(dtype=float)
            else:
                dispersion = rows["std"].to_numpy(dtype=float)
                dispersion = np.where(rows["n_scores"].to_numpy() >= 2, dispersion, np.nan)
            values = {"prob_na": prob_na, "ambiguous_share": ambiguous, "spread": dispersion}
            frame = _rows(values, codes[at], list(labels), clusters[at], weights)
            frame["spread_kind"] = "std across models" if kind == "spread" else "std across repetitions"
            frames.append(frame.assign(system=name, kind=kind, facet=facet))
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
