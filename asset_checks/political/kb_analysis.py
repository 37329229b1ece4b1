"""Asset checks: Study B's KB analysis (facets cover the KB; pairs add up; intervals hold their estimates)."""

import dagster as dg
import numpy as np
import pandas as pd

from argassets.platform.reporting.presentation import markdown_table
from argassets.political.assets.kb_analysis import (
    political_acceptability,
    political_ambiguity,
    political_debate_positions,
    political_kb_facets,
)
from argassets.political.structure.facets import ROLES


def estimates_outside_intervals(frame: pd.DataFrame, names: list[tuple[str, str, str]]) -> pd.DataFrame:
    """Rows where an estimate lies outside its own interval (``(estimate, low, high)`` column names)."""
    bad = pd.Series(False, index=frame.index)
    for estimate, low, high in names:
        finite = frame[[estimate, low, high]].notna().all(axis=1)
        tolerance = 1e-9 * np.maximum(1.0, frame[estimate].abs())
        bad |= finite & ((frame[estimate] < frame[low] - tolerance) | (frame[estimate] > frame[high] + tolerance))
    return frame[bad]


def _intervals_result(frame: pd.DataFrame, names: list[tuple[str, str, str]]) -> dg.AssetCheckResult:
    bad = estimates_outside_intervals(frame, names)
    return dg.AssetCheckResult(
        passed=bad.empty and len(frame) > 0,
        metadata={
            "rows": len(frame),
            "outside": len(bad),
            "examples": dg.MetadataValue.md(markdown_table(bad.head(10))),
        },
    )


@dg.asset_check(asset=political_kb_facets, additional_ins={"political_kb_arguments": dg.AssetIn()}, blocking=True)
def political_kb_facets_cover_the_kb(
    political_kb_facets: pd.DataFrame, political_kb_arguments: pd.DataFrame
) -> dg.AssetCheckResult:
    """Every KB argument has exactly one row of facets, with a known speaker role."""
    ids = political_kb_facets["argument_id"]
    missing = set(political_kb_arguments["argument_id"]) - set(ids)
    duplicated = int(ids.duplicated().sum())
    unknown_roles = sorted(set(political_kb_facets["role"]) - set(ROLES))
    return dg.AssetCheckResult(
        passed=not missing and duplicated == 0 and not unknown_roles and len(ids) == len(political_kb_arguments),
        metadata={
            "missing": len(missing),
            "duplicated": duplicated,
            "unknown_roles": dg.MetadataValue.json(unknown_roles),
        },
    )


@dg.asset_check(asset=dg.AssetKey("political_relation_distance"), blocking=True)
def political_relation_sides_add_up(political_relation_distance: pd.DataFrame) -> dg.AssetCheckResult:
    """Per system and relation, the pairs from the left, centre and right add up to all its pairs."""
    table = political_relation_distance
    keys = ["system", "relation"]
    total = table[table["source_side"] == "all"].set_index(keys)["pairs"]
    sides = table[table["source_side"] != "all"].groupby(keys)["pairs"].sum()
    joined = pd.concat([total.rename("all"), sides.rename("sides")], axis=1).fillna(-1)
    bad = joined[joined["all"] != joined["sides"]].reset_index()
    return dg.AssetCheckResult(
        passed=bad.empty and len(total) > 0,
        metadata={"compared": len(joined), "differing": dg.MetadataValue.md(markdown_table(bad.head(10)))},
    )


@dg.asset_check(asset=dg.AssetKey("political_relation_distance"))
def political_relation_intervals_hold_estimates(political_relation_distance: pd.DataFrame) -> dg.AssetCheckResult:
    """Each bootstrap interval of the distance table contains its own estimate."""
    names = [(n, f"{n}_low", f"{n}_high") for n in ("mean_abs_diff", "crossing_share", "mean_signed_diff")]
    return _intervals_result(political_relation_distance, names)


@dg.asset_check(asset=political_ambiguity)
def political_ambiguity_intervals_hold_estimates(political_ambiguity: pd.DataFrame) -> dg.AssetCheckResult:
    """Each bootstrap interval of the ambiguity table contains its own estimate."""
    names = [(n, f"{n}_low", f"{n}_high") for n in ("prob_na", "ambiguous_share", "spread")]
    return _intervals_result(political_ambiguity, names)


@dg.asset_check(asset=political_debate_positions)
def political_debate_intervals_hold_estimates(political_debate_positions: pd.DataFrame) -> dg.AssetCheckResult:
    """Each bootstrap interval of the per-debate table contains its own estimate."""
    names = [(n, f"{n}_low", f"{n}_high") for n in ("position", "prob_na")]
    return _intervals_result(political_debate_positions, names)


@dg.asset_check(asset=political_acceptability)
def political_acceptability_intervals_hold_differences(political_acceptability: pd.DataFrame) -> dg.AssetCheckResult:
    """Each difference (with the status minus without) lies in its bootstrap interval."""
    return _intervals_result(political_acceptability, [("difference", "low", "high")])
