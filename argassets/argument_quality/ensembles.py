"""The multi-model ensemble of Study A: members chosen per dimension, majority labels, BT scores."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from argassets.argument_quality.agreement_reports import AGREEMENT_COLUMNS, agreement_report
from argassets.argument_quality.bradley_terry import DEFAULT_SETTINGS, ITEM_COLUMNS, BTSettings
from argassets.argument_quality.bt_scores import CONFIG_COLUMNS, llm_bt_scores
from argassets.argument_quality.configurations import ModelInfo
from argassets.platform.pairwise.ensembles import ensemble_votes
from argassets.platform.stats.intervals import DEFAULT_SETTINGS as DEFAULT_INTERVALS
from argassets.platform.stats.intervals import BootstrapSettings


def ensemble_members(
    info: dict[str, ModelInfo], present: Iterable[str], requested: Sequence[str] | None = None
) -> list[str]:
    """The members of an ensemble: ``requested`` if given, else every non-baseline model in the
    registry that has judgments, else (no such model yet) every model with judgments."""
    present = sorted(set(present))
    if requested:
        return [m for m in requested if m in present]
    members = [m for m in present if m in info and info[m].in_registry and not info[m].is_baseline]
    return members or present


def ensemble_report(
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    members: Sequence[str],
    name: str,
    settings: BTSettings = DEFAULT_SETTINGS,
    info: dict[str, ModelInfo] | None = None,
    *,
    intervals: BootstrapSettings | None = DEFAULT_INTERVALS,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A multi-model ensemble, reported like any configuration.

    Per (strategy, dimension, comparison), the ensemble's label is the plurality of its members'
    majority labels (:func:`argassets.platform.pairwise.ensembles.ensemble_votes`); its BT scores are fitted on the
    members' majority labels pooled (each member's verdict is one comparison). Its figures get
    intervals clustered over topics, as every configuration's (``intervals``); it is never in
    the best set (the best set ranks single configurations).

    Returns
    -------
    tuple of pandas.DataFrame
        ``(report, ensemble_majority, ensemble_scores)``: the agreement-report rows of the
        configurations ``model = "ensemble:<name>"`` with an extra ``members`` column, the
        ensemble's labels, and its BT scores.
    """
    model = f"ensemble:{name}"
    part = majority[majority["model"].isin(list(members))]
    empty_report = pd.DataFrame({c: pd.Series(dtype="object") for c in [*AGREEMENT_COLUMNS, "members"]})
    if part.empty:
        return empty_report, part.iloc[0:0], pd.DataFrame(columns=[*CONFIG_COLUMNS, *ITEM_COLUMNS, "bt_z"])
    ens_majority, member_names = ensemble_votes(part, "model", ["strategy", "dimension", "comparison_id"])
    ens_majority.insert(0, "model", model)

    pooled = part.assign(model=model)
    scores = llm_bt_scores(pooled, experts, arguments, settings)
    flags = dict(info or {})
    member_info = [flags[m] for m in member_names if m in flags]
    scopes = sorted({i.scope for i in member_info}) or ["unknown"]
    flags[model] = ModelInfo(
        is_baseline=bool(member_info) and all(i.is_baseline for i in member_info),
        scope=scopes[0] if len(scopes) == 1 else "mixed: " + " | ".join(scopes),
        in_registry=bool(member_info) and all(i.in_registry for i in member_info),
        position_bias=False,
    )
    report = agreement_report(scores, ens_majority, experts, arguments, flags, settings=intervals)
    report["best_set"] = False
    report["members"] = ",".join(str(m) for m in member_names)
    return report, ens_majority, scores
