"""Configurations and models of Study A's reports: which (model, strategy, dimension) rows exist and how they are labelled."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.argument_quality.scope import STUDY_NAME
from argassets.platform.registry.entries import ModelRegistry


@dataclass(frozen=True)
class ModelInfo:
    """What the reports say about a model besides its numbers."""

    is_baseline: bool
    scope: str
    in_registry: bool
    position_bias: bool


def model_info(recorded: pd.DataFrame | None, registry: ModelRegistry | None) -> dict[str, ModelInfo]:
    """Per model: baseline flag and scope as recorded with its judgments, and registry membership.

    Parameters
    ----------
    recorded
        Rows with ``model`` (or ``judge_model``) and, when known, ``is_baseline`` and ``scope`` as
        recorded in ``aq_judgments``; several scopes of one model are joined with `` | ``.
    registry
        The current registry; models no longer in it are reported with ``in_registry = False``.
    """
    info: dict[str, ModelInfo] = {}
    entries = {e.name: e for e in registry.models} if registry is not None else {}
    if recorded is not None and len(recorded):
        column = "model" if "model" in recorded.columns else "judge_model"
        for name, rows in recorded.groupby(column, sort=True):
            entry = entries.get(str(name))
            if "is_baseline" in rows.columns and rows["is_baseline"].notna().any():
                baseline = bool(rows["is_baseline"].dropna().astype(bool).any())
            else:
                baseline = bool(entry.is_baseline) if entry else False
            if "scope" in rows.columns and rows["scope"].notna().any():
                scope = " | ".join(sorted(str(s) for s in rows["scope"].dropna().unique()))
            else:
                scope = entry.scope_text(STUDY_NAME) if entry else "unknown"
            info[str(name)] = ModelInfo(
                is_baseline=baseline,
                scope=scope,
                in_registry=entry is not None,
                position_bias=bool(entry.position_bias) if entry else False,
            )
    for name, entry in entries.items():
        info.setdefault(
            name,
            ModelInfo(entry.is_baseline, entry.scope_text(STUDY_NAME), True, entry.position_bias),
        )
    return info


def add_flags(frame: pd.DataFrame, info: dict[str, ModelInfo]) -> pd.DataFrame:
    unknown = ModelInfo(False, "unknown", False, False)
    models = frame["model"].astype(str)
    frame["scope"] = [info.get(m, unknown).scope for m in models]
    frame["is_baseline"] = np.array([info.get(m, unknown).is_baseline for m in models], dtype=bool)
    frame["in_registry"] = np.array([info.get(m, unknown).in_registry for m in models], dtype=bool)
    return frame
