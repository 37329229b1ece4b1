"""Every system that answers the human studies' questions: the platform's and the paper's.

The platform's models and ensembles are joined to the study items by text (``political_study_items``);
the paper's 22 models and E1-E3 come with the study files (``published:<prefix>``). The validation
reports and the annotator reports read the same systems from here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from argassets.platform.registry.entries import ModelRegistry
from argassets.political.assets.common import system_kind
from argassets.political.assets.ensembles import counts_of, ensemble_table
from argassets.political.ensembles import ENSEMBLES
from argassets.political.human_studies import PairwiseStudy, PointwiseStudy
from argassets.political.validation.systems import item_keys, system_item_values


def platform_systems(
    stats: pd.DataFrame,
    registry: ModelRegistry,
    counts: dict[str, tuple[int, int, int]] | None = None,
    keys: list[list[str]] | None = None,
) -> pd.DataFrame:
    """Every platform model's and ensemble's per-argument stats.

    The ensembles are pooled here again from the stats with the same function and membership as
    ``political_ensembles`` (which these reports follow in the lineage): when no model is eligible
    that table is empty, and the DuckDB IO manager does not write empty tables. With ``keys``
    (:func:`item_keys`), only the arguments the study items can stand for are pooled.
    """
    arguments = None if keys is None else {key for candidates in keys for key in candidates}
    ensembles, _, _ = ensemble_table(stats, registry, counts, arguments)
    columns = ["system", "argument_id", "scores", "prob_na"]
    frames = [f[columns] for f in (stats, ensembles) if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def platform_item_values(
    stats: pd.DataFrame,
    registry: ModelRegistry,
    members: pd.DataFrame,
    study_items: pd.DataFrame,
    study: str,
    meta_ids: list[str],
    column: str,
) -> dict[str, list[Any]]:
    """Each platform model's and ensemble's ``column`` on the items of one human study, in ``meta_ids`` order."""
    keys = item_keys(study_items, study, meta_ids)
    return system_item_values(platform_systems(stats, registry, counts_of(members), keys), keys, column)


def _platform_kind(name: str, registry: ModelRegistry) -> str:
    return "ensemble" if name in ENSEMBLES else system_kind(name, registry)


def _published_kind(prefix: str) -> str:
    return "published-ensemble" if prefix.startswith("ensemble") else "published"


def pointwise_systems(
    study: PointwiseStudy, platform: dict[str, list[Any]], registry: ModelRegistry
) -> dict[str, tuple[str, np.ndarray]]:
    """``name -> (kind, P(NA) per pointwise item)``: the platform's, the paper's (``published:``) and
    two constant baselines (``baseline:always-political``, ``baseline:always-apolitical``)."""
    meta_ids = list(study.items["meta_id"])
    systems: dict[str, tuple[str, np.ndarray]] = {
        name: (_platform_kind(name, registry), np.array([np.nan if v is None else float(v) for v in values]))
        for name, values in platform.items()
    }
    for prefix, group in study.published.groupby("prefix"):
        values = group.set_index("meta_id").loc[meta_ids, "prob_na"].to_numpy(dtype=float)
        systems[f"published:{prefix}"] = (_published_kind(str(prefix)), values)
    systems["baseline:always-political"] = ("baseline", np.zeros(len(meta_ids)))
    systems["baseline:always-apolitical"] = ("baseline", np.ones(len(meta_ids)))
    return systems


def pairwise_systems(
    study: PairwiseStudy, platform: dict[str, list[Any]], registry: ModelRegistry
) -> dict[str, tuple[str, list[Any]]]:
    """``name -> (kind, valid scores per pairwise argument)``: the platform's, the paper's
    (``published:``) and a constant baseline that puts every argument at 50 (``baseline:all-equal``,
    every pair a tie)."""
    meta_ids = list(study.items["meta_id"])
    systems: dict[str, tuple[str, list[Any]]] = {
        name: (_platform_kind(name, registry), values) for name, values in platform.items()
    }
    for prefix, group in study.published.groupby("prefix"):
        systems[f"published:{prefix}"] = (
            _published_kind(str(prefix)),
            group.set_index("meta_id").loc[meta_ids, "scores"].map(list).tolist(),
        )
    systems["baseline:all-equal"] = ("baseline", [[50.0]] * len(meta_ids))
    return systems
