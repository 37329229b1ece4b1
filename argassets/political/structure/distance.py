"""Political distance along the KB's relations: do arguments that attack each other sit farther apart?

For every system, a relation between two political arguments (both P(NA) < 0.5) has a distance
|Δ| = |position(target) - position(source)| and crosses the spectrum when one end is below 45 and
the other above 55. Its null keeps the dialogue's structure: positions permuted within each debate,
whose expectation for a pair of debate *d* is the mean |Δ| over all pairs of political arguments of
*d* (computed exactly, no sampling). Intervals resample debates (:mod:`.intervals`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.political.aif import RELATIONS
from argassets.political.structure.intervals import N_BOOT, SEED, cluster_weights, grouped_means, replicate_interval
from argassets.political.structure.positions import LEFT_BELOW, RIGHT_ABOVE, counted_systems, political_positions

SIDES = ("all", "from left", "from centre", "from right")
DISTANCE_COLUMNS = [
    "system",
    "kind",
    "relation",
    "source_side",
    "pairs",
    "mean_abs_diff",
    "mean_abs_diff_low",
    "mean_abs_diff_high",
    "median_abs_diff",
    "crossing_share",
    "crossing_share_low",
    "crossing_share_high",
    "mean_signed_diff",
    "mean_signed_diff_low",
    "mean_signed_diff_high",
    "null_mean_abs_diff",
    "null_crossing_share",
    "ratio_to_null",
    "ratio_to_null_low",
    "ratio_to_null_high",
    "random_pair_mean_abs_diff",
    "random_pair_crossing_share",
]
ROBUSTNESS_COLUMNS = [
    "system",
    "kind",
    "attacks_mean_abs_diff",
    "supports_mean_abs_diff",
    "difference",
    "difference_low",
    "difference_high",
    "attacks_ratio_to_null",
    "supports_ratio_to_null",
]


def pair_null(values: np.ndarray) -> tuple[float, float]:
    """Mean |x_i - x_j| and share crossing the spectrum over all pairs i < j of ``values`` (exact)."""
    x = np.sort(values[np.isfinite(values)])
    n = len(x)
    if n < 2:
        return np.nan, np.nan
    pairs = n * (n - 1) / 2.0
    ranks = np.arange(1, n + 1, dtype=float)
    mean_abs = float(np.sum(x * (2.0 * ranks - n - 1.0)) / pairs)
    crossing = float(np.sum(x < LEFT_BELOW) * np.sum(x > RIGHT_ABOVE) / pairs)
    return mean_abs, crossing


def _side_codes(source: np.ndarray) -> np.ndarray:
    return np.where(source < LEFT_BELOW, 0, np.where(source > RIGHT_ABOVE, 2, 1))


def _system_rows(
    p: np.ndarray, src: np.ndarray, tgt: np.ndarray, rel: np.ndarray, debate: np.ndarray, weights: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """One system's rows (relation x side) and the replicates of mean |Δ| per relation (side "all")."""
    n_rel, n_debates = len(RELATIONS), weights.shape[1]
    nulls = np.array([pair_null(p[debate == d]) for d in range(n_debates)]).reshape(n_debates, 2)
    kb_abs, kb_cross = pair_null(p)
    ok = np.isfinite(p[src]) & np.isfinite(p[tgt])
    s, t, r, d = p[src[ok]], p[tgt[ok]], rel[ok], debate[src[ok]]
    absd, signed = np.abs(t - s), t - s
    cross = ((np.minimum(s, t) < LEFT_BELOW) & (np.maximum(s, t) > RIGHT_ABOVE)).astype(float)
    groups = np.concatenate([r, n_rel + r * 3 + _side_codes(s)])
    n_groups = n_rel * 4
    both = lambda v: np.concatenate([v, v])  # noqa: E731 - every pair counts once for "all" and once for its side
    clusters = both(d)
    observed = grouped_means(both(absd), groups, n_groups, clusters, weights)
    crossing = grouped_means(both(cross), groups, n_groups, clusters, weights)
    signed_b = grouped_means(both(signed), groups, n_groups, clusters, weights)
    null_abs = grouped_means(both(nulls[d, 0]), groups, n_groups, clusters, weights)
    null_cross = grouped_means(both(nulls[d, 1]), groups, n_groups, clusters, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = observed.replicates / null_abs.replicates
        ratio_estimate = observed.estimate / null_abs.estimate
    medians = pd.Series(both(absd)).groupby(groups).median().reindex(range(n_groups))
    labels = [(RELATIONS[g], "all") for g in range(n_rel)]
    labels += [(RELATIONS[g], SIDES[1 + k]) for g in range(n_rel) for k in range(3)]
    frame = pd.DataFrame(labels, columns=["relation", "source_side"])
    frame["pairs"] = observed.count
    for name, boot in (("mean_abs_diff", observed), ("crossing_share", crossing), ("mean_signed_diff", signed_b)):
        low, high = boot.interval()
        frame[name], frame[f"{name}_low"], frame[f"{name}_high"] = boot.estimate, low, high
    frame["median_abs_diff"] = medians.to_numpy()
    frame["null_mean_abs_diff"] = null_abs.estimate
    frame["null_crossing_share"] = null_cross.estimate
    frame["ratio_to_null"] = ratio_estimate
    frame["ratio_to_null_low"], frame["ratio_to_null_high"] = replicate_interval(ratio)
    frame["random_pair_mean_abs_diff"], frame["random_pair_crossing_share"] = kb_abs, kb_cross
    return frame, observed.replicates[:, :n_rel]


def _relation_codes(relations: pd.DataFrame, index: pd.Series) -> tuple[pd.Series, pd.Series, np.ndarray]:
    """Each relation's source and target positions in ``index`` and its type's code in :data:`RELATIONS`."""
    src = relations["source_id"].map(index)
    tgt = relations["target_id"].map(index)
    if src.isna().any() or tgt.isna().any():
        bad = relations[src.isna() | tgt.isna()].iloc[0]
        raise ValueError(f"relation {bad['source_id']} -> {bad['target_id']}: an end is no KB argument")
    unknown = set(relations["relation"]) - set(RELATIONS)
    if unknown:
        raise ValueError(f"political_kb_relations: unknown relation type(s) {sorted(unknown)}")
    return src, tgt, relations["relation"].map({r: i for i, r in enumerate(RELATIONS)}).to_numpy(dtype=int)


def _robustness_row(system: object, kind: str, frame: pd.DataFrame, difference: np.ndarray) -> dict[str, object]:
    """One system's attacks-minus-supports mean |Δ| with its interval from the replicates' ``difference``."""
    low, high = replicate_interval(difference[:, None])
    estimate = frame.loc[frame["source_side"] == "all"].set_index("relation")
    return {
        "system": system,
        "kind": kind,
        "attacks_mean_abs_diff": estimate.at["ATTACKS", "mean_abs_diff"],
        "supports_mean_abs_diff": estimate.at["SUPPORTS", "mean_abs_diff"],
        "difference": estimate.at["ATTACKS", "mean_abs_diff"] - estimate.at["SUPPORTS", "mean_abs_diff"],
        "difference_low": float(low[0]),
        "difference_high": float(high[0]),
        "attacks_ratio_to_null": estimate.at["ATTACKS", "ratio_to_null"],
        "supports_ratio_to_null": estimate.at["SUPPORTS", "ratio_to_null"],
    }


def relation_distances(
    positions: pd.DataFrame,
    relations: pd.DataFrame,
    facets: pd.DataFrame,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Distance by relation and source side for every system, and the attacks-vs-supports robustness.

    Parameters
    ----------
    positions
        :func:`~.positions.system_positions` output.
    relations
        ``political_kb_relations`` (``source_id``, ``target_id``, ``relation``).
    facets
        :func:`~.facets.argument_facets` output (the debate of each argument; a pair belongs to the
        debate of its source).

    Returns
    -------
    (distances, robustness)
        ``distances`` with :data:`DISTANCE_COLUMNS`; ``robustness`` with :data:`ROBUSTNESS_COLUMNS`,
        one row per system: mean |Δ| of attacks minus that of supports, with its interval.
    """
    index = pd.Series(np.arange(len(facets)), index=facets["argument_id"].to_numpy())
    src, tgt, rel = _relation_codes(relations, index)
    debate = pd.factorize(facets["episode"], sort=True)[0]
    if len(debate) == 0:
        return pd.DataFrame(columns=DISTANCE_COLUMNS), pd.DataFrame(columns=ROBUSTNESS_COLUMNS)
    weights = cluster_weights(int(debate.max()) + 1, n_boot, seed)
    src_i, tgt_i = src.to_numpy(dtype=int), tgt.to_numpy(dtype=int)
    frames, robust = [], []
    attacks, supports = RELATIONS.index("ATTACKS"), RELATIONS.index("SUPPORTS")
    for system, rows in positions.groupby("system", sort=False):
        p = np.full(len(facets), np.nan)
        where = rows["argument_id"].map(index)
        known = where.notna().to_numpy()
        p[where[known].to_numpy(dtype=int)] = political_positions(rows).to_numpy()[known]
        frame, replicates = _system_rows(p, src_i, tgt_i, rel, debate, weights)
        kind = str(rows["kind"].iloc[0])
        frames.append(frame.assign(system=system, kind=kind))
        robust.append(_robustness_row(system, kind, frame, replicates[:, attacks] - replicates[:, supports]))
    distances = (
        pd.concat(frames, ignore_index=True)[DISTANCE_COLUMNS] if frames else pd.DataFrame(columns=DISTANCE_COLUMNS)
    )
    return distances, pd.DataFrame(robust, columns=ROBUSTNESS_COLUMNS)


def robustness_summary(robustness: pd.DataFrame) -> dict[str, float]:
    """Over the counted systems (no baselines): how many show attacks farther apart, and by how much."""
    counted = robustness[robustness["kind"] != "baseline"]
    return {
        "systems": len(counted),
        "attacks_farther": int((counted["difference"] > 0).sum()),
        "interval_above_zero": int((counted["difference_low"] > 0).sum()),
        "median_difference": float(counted["difference"].median()) if len(counted) else np.nan,
        "min_difference": float(counted["difference"].min()) if len(counted) else np.nan,
        "max_difference": float(counted["difference"].max()) if len(counted) else np.nan,
    }


__all__ = ["counted_systems", "pair_null", "relation_distances", "robustness_summary"]
