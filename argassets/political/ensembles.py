"""Ensembles of political-position models (E1, E2, E3) by the paper's rules."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.political.model_stats import STATS_COLUMNS, count_scores, join_runs

#: The ensembles of the paper, in report order.
ENSEMBLES: tuple[str, ...] = ("E1", "E2", "E3")


@dataclass(frozen=True)
class EnsembleMember:
    """One model's standing in the ensembles and why."""

    system: str
    reasoning: bool
    n_scores: int
    n_na: int
    n_invalid: int
    eligible: bool
    note: str
    in_e1: bool
    in_e2: bool
    in_e3: bool


def _model_totals(stats: pd.DataFrame) -> dict[str, tuple[int, int, int]]:
    """``(n_scores, n_na, n_invalid)`` per model over its rows of ``stats``."""
    if stats.empty:
        return {}
    lengths = count_scores(stats["scores"])
    grouped = (
        pd.DataFrame(
            {
                "system": stats["system"],
                "n_scores": lengths,
                "na": stats["na_count"],
                "invalid": stats["invalid_count"],
            }
        )
        .groupby("system")[["n_scores", "na", "invalid"]]
        .sum()
    )
    return {name: (int(r.n_scores), int(r.na), int(r.invalid)) for name, r in grouped.iterrows()}


def ensemble_membership(
    stats: pd.DataFrame,
    reasoning: Mapping[str, bool],
    excluded: Mapping[str, str] | None = None,
    counts: Mapping[str, tuple[int, int, int]] | None = None,
) -> list[EnsembleMember]:
    """Which models make up E1, E2 and E3.

    - **E1**: every eligible model.
    - **E2**: eligible models whose registry entry says ``reasoning = true``.
    - **E3**: eligible models whose NA answers outnumber their valid scores over the whole KB
      (``n_na > n_scores``, strictly). The paper's formula prints the inequality the other way
      round; its stated purpose (keep the models able to say NA) and its published ensemble
      follow the rule used here.

    Parameters
    ----------
    stats
        :func:`model_stats` output for the models.
    reasoning
        Registry ``reasoning`` flag per model name (missing names count as ``False``).
    excluded
        Models that are not pooled, with the reason (baselines, models gone from the registry).
    counts
        ``(n_scores, n_na, n_invalid)`` per model that the E3 rule counts instead of its rows of
        ``stats``: for a published import, its whole published file (the paper's KB, where the
        rule was applied), since the KB carries one row per prompt text (see
        ``argassets.political.published_index``).

    Returns
    -------
    list of EnsembleMember
        One per model of ``stats`` and of ``excluded``, sorted by name.
    """
    excluded = dict(excluded or {})
    members = []
    totals = _model_totals(stats)
    overridden = {name for name in (counts or {}) if name in totals}
    for name in overridden:
        value = (counts or {})[name]
        totals[name] = (int(value[0]), int(value[1]), int(value[2]))
    for name in sorted(set(totals) | set(excluded)):
        n_scores, n_na, n_invalid = totals.get(name, (0, 0, 0))
        flag = bool(reasoning.get(name, False))
        if name in excluded:
            members.append(
                EnsembleMember(name, flag, n_scores, n_na, n_invalid, False, excluded[name], False, False, False)
            )
            continue
        in_e3 = n_na > n_scores  # E3 rule: NA answers outnumber valid scores over the whole KB
        note = "NA answers outnumber valid scores" if in_e3 else "valid scores at least as many as NA answers"
        if name in overridden:
            note += " (counted over its whole published file)"
        members.append(EnsembleMember(name, flag, n_scores, n_na, n_invalid, True, note, True, flag, in_e3))
    return members


def members_of(membership: Sequence[EnsembleMember], ensemble: str) -> list[str]:
    """Names of the members of ``E1``, ``E2`` or ``E3``."""
    attribute = {"E1": "in_e1", "E2": "in_e2", "E3": "in_e3"}.get(ensemble)
    if attribute is None:
        raise ValueError(f"unknown ensemble {ensemble!r} (known: {', '.join(ENSEMBLES)})")
    return [m.system for m in membership if getattr(m, attribute)]


def pool_ensemble(stats: pd.DataFrame, members: Sequence[str], name: str) -> pd.DataFrame:
    """Pool member models into one ensemble system per argument.

    An argument's ensemble array is the concatenation of its members' valid scores (in the order
    of ``members``, then repetition order); NA counts, invalid counts and repetitions add up, and
    ``prob_na = na_count / n_repetitions``. Arguments that no member scored are absent.

    Parameters
    ----------
    stats
        :func:`model_stats` output.
    members
        Model names to pool; an empty list gives an empty table.
    name
        The ensemble's system name (e.g. ``E3``).

    Returns
    -------
    pandas.DataFrame
        Same columns as :func:`model_stats`, plus ``n_members`` (members that scored the argument).
    """
    columns = STATS_COLUMNS + ["n_members"]
    subset = stats[stats["system"].isin(list(members))]
    if subset.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in columns})
    order = {member: position for position, member in enumerate(members)}
    subset = subset.assign(_order=subset["system"].map(order)).sort_values(["argument_id", "_order"], kind="stable")
    # the members' score arrays, concatenated in member order (as JSON text: "[a, b]" lists joined)
    inner = [text.strip()[1:-1].strip() for text in subset["scores"].astype(str)]
    grouped = subset.groupby("argument_id", sort=True)
    out = grouped.agg(
        na_count=("na_count", "sum"),
        invalid_count=("invalid_count", "sum"),
        n_repetitions=("n_repetitions", "sum"),
        n_members=("system", "size"),
    )
    joined = join_runs(inner, out["n_members"].to_numpy())
    out["scores"] = ["[" + ", ".join(part for part in text.split(", ") if part) + "]" for text in joined]
    # moments over the concatenated values (two passes, as numpy computes them on one array)
    lengths = np.array([0 if not text else text.count(",") + 1 for text in inner], dtype=np.int64)
    present = [text for text in inner if text]
    values = np.array(",".join(present).split(","), dtype=float) if present else np.zeros(0)
    codes = np.repeat(np.repeat(np.arange(len(out)), out["n_members"].to_numpy()), lengths)
    n = np.bincount(codes, minlength=len(out))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(codes, weights=values, minlength=len(out)) / n
        var = np.bincount(codes, weights=(values - mean[codes]) ** 2, minlength=len(out)) / n
    out["mean"], out["var"], out["std"] = mean, var, np.sqrt(var)
    out["prob_na"] = np.where(
        out["n_repetitions"] > 0, out["na_count"] / out["n_repetitions"].where(out["n_repetitions"] > 0, 1), math.nan
    )
    out = out.reset_index()
    out["system"] = name
    out = out[columns]
    return out.astype({"na_count": "int64", "invalid_count": "int64", "n_repetitions": "int64", "n_members": "int64"})
