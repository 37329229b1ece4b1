"""Helpers shared by Study B's assets."""

import pandas as pd

from argassets.platform.registry.entries import ModelRegistry


def storable(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas strings, so DuckDB types them VARCHAR even when empty or all null."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object:
            out[column] = out[column].astype("string")
    return out


def system_kind(system: str, registry: ModelRegistry | None) -> str:
    if registry is not None:
        try:
            if registry.get(system).is_baseline:
                return "baseline"
        except KeyError:
            pass
    return "model"
