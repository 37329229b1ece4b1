"""The operations layout of this code location's assets, computed once at import.

Jobs and schedules need concrete asset keys when they are defined; they take them from here, so
that they follow the asset modules instead of a hand-kept list.
"""

from __future__ import annotations

from functools import lru_cache

import dagster as dg

from argassets.platform.automation import OperationsLayout, operations_layout


@lru_cache(maxsize=1)
def code_location_layout() -> OperationsLayout:
    """The layout of every asset the code location loads (same modules as definitions.py)."""
    from argassets.catalog import ASSET_MODULES

    return operations_layout(dg.load_assets_from_modules(ASSET_MODULES))
