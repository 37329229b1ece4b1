"""Every system's position per argument, in one long table (models, ensembles, baselines apart)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.political.ensembles import ENSEMBLES

POSITION_COLUMNS = ["system", "kind", "argument_id", "position", "std", "prob_na", "n_scores"]
#: An argument is political for a system when its probability of NA is below this.
POLITICAL_BELOW = 0.5
#: Positions below LEFT_BELOW and above RIGHT_ABOVE are on opposite sides of the spectrum.
LEFT_BELOW = 45.0
RIGHT_ABOVE = 55.0
#: P(NA) in this closed range counts as ambiguous (neither clearly political nor clearly not).
AMBIGUOUS = (0.3, 0.7)
#: The pseudo-system of the spread across the models (std of their positions per argument).
ACROSS_MODELS = "across models"


def system_positions(stats: pd.DataFrame, ensembles: pd.DataFrame, members: pd.DataFrame) -> pd.DataFrame:
    """Positions of the models (``political_model_stats``) and ensembles (``political_ensembles``).

    ``kind`` is ``ensemble`` for E1-E3, ``model`` for a model the ensembles may pool (``eligible``
    in ``political_ensemble_members``) and ``baseline`` for the rest (kept, but never counted among
    the systems a finding holds for). Systems come in the order models, baselines, ensembles.
    """
    missing = {"system", "eligible"} - set(members.columns)
    if missing:
        raise ValueError(f"political_ensemble_members lacks column(s) {sorted(missing)}")
    eligible = set(members.loc[members["eligible"].astype(bool), "system"])
    frames = []
    for table, name in ((stats, "political_model_stats"), (ensembles, "political_ensembles")):
        needed = {"system", "argument_id", "mean", "std", "prob_na", "na_count", "invalid_count", "n_repetitions"}
        lacking = needed - set(table.columns)
        if lacking:
            raise ValueError(f"{name} lacks column(s) {sorted(lacking)}")
        frames.append(
            pd.DataFrame(
                {
                    "system": table["system"].astype(str).to_numpy(),
                    "argument_id": table["argument_id"].astype(str).to_numpy(),
                    "position": table["mean"].astype(float).to_numpy(),
                    "std": table["std"].astype(float).to_numpy(),
                    "prob_na": table["prob_na"].astype(float).to_numpy(),
                    "n_scores": (table["n_repetitions"] - table["na_count"] - table["invalid_count"])
                    .astype("int64")
                    .to_numpy(),
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out["kind"] = np.where(
        out["system"].isin(ENSEMBLES), "ensemble", np.where(out["system"].isin(eligible), "model", "baseline")
    )
    rank = {"model": 0, "baseline": 1, "ensemble": 2}
    # the input order within a system (the statistics come sorted by argument), systems by name
    out = out.assign(_r=out["kind"].map(rank)).sort_values(["_r", "system"], kind="stable")
    return out[POSITION_COLUMNS].reset_index(drop=True)


def systems_in_order(positions: pd.DataFrame) -> list[str]:
    """The systems of ``positions`` in table order."""
    return list(dict.fromkeys(positions["system"]))


def counted_systems(positions: pd.DataFrame) -> list[str]:
    """The systems a finding is counted over: models and ensembles, not baselines."""
    return list(dict.fromkeys(positions.loc[positions["kind"] != "baseline", "system"]))


def political_positions(positions: pd.DataFrame, threshold: float = POLITICAL_BELOW) -> pd.Series:
    """Each row's position where the system deems the argument political (P(NA) < threshold), else NaN."""
    political = (positions["prob_na"] < threshold) & positions["position"].notna()
    return positions["position"].where(political)


def across_model_spread(positions: pd.DataFrame) -> pd.DataFrame:
    """Per argument: the std of the models' positions (2+ models) and the models' mean P(NA)."""
    models = positions[positions["kind"] == "model"]
    grouped = models.groupby("argument_id", sort=True)
    frame = pd.DataFrame(
        {
            "spread": grouped["position"].std(ddof=0),
            "n_models": grouped["position"].count(),
            "prob_na": grouped["prob_na"].mean(),
        }
    )
    frame.loc[frame["n_models"] < 2, "spread"] = np.nan
    return frame.reset_index()
