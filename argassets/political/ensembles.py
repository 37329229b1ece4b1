"""Ensembles of political-position models (E1, E2, E3) by the paper's rules."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from argassets.political.model_stats import STATS_COLUMNS, scores_from_json, scores_to_json, summarise_scores

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


def ensemble_membership(
    stats: pd.DataFrame,
    reasoning: Mapping[str, bool],
    excluded: Mapping[str, str] | None = None,
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
        Models that are not pooled, with the reason (baselines; imports keyed by another KB).

    Returns
    -------
    list of EnsembleMember
        One per model of ``stats`` and of ``excluded``, sorted by name.
    """
    excluded = dict(excluded or {})
    members = []
    counts: dict[str, tuple[int, int, int]] = {}
    if not stats.empty:
        lengths = stats["scores"].map(lambda text: len(scores_from_json(text)))
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
        counts = {name: (int(r.n_scores), int(r.na), int(r.invalid)) for name, r in grouped.iterrows()}
    for name in sorted(set(counts) | set(excluded)):
        n_scores, n_na, n_invalid = counts.get(name, (0, 0, 0))
        flag = bool(reasoning.get(name, False))
        if name in excluded:
            members.append(
                EnsembleMember(name, flag, n_scores, n_na, n_invalid, False, excluded[name], False, False, False)
            )
            continue
        in_e3 = n_na > n_scores  # E3 rule: NA answers outnumber valid scores over the whole KB
        note = "NA answers outnumber valid scores" if in_e3 else "valid scores at least as many as NA answers"
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
    rows = []
    for argument_id, group in subset.groupby("argument_id", sort=True):
        scores: list[float] = []
        for text in group["scores"]:
            scores.extend(scores_from_json(text))
        na = int(group["na_count"].sum())
        invalid = int(group["invalid_count"].sum())
        n = int(group["n_repetitions"].sum())
        mean, var, std = summarise_scores(scores)
        rows.append(
            (
                name,
                argument_id,
                scores_to_json(scores),
                mean,
                var,
                std,
                na,
                invalid,
                n,
                na / n if n else math.nan,
                len(group),
            )
        )
    return pd.DataFrame(rows, columns=columns)
