"""The operations layout of this code location's assets, computed once on first use.

Jobs and schedules need concrete asset keys when they are defined; they take them from here, so
that they follow the asset modules instead of a hand-kept list. A study registered later (a test's)
enters after ``code_location_layout.cache_clear()``.
"""

from __future__ import annotations

from functools import lru_cache

import dagster as dg

from argassets.platform.operations.automation import OperationsLayout, operations_layout


@lru_cache(maxsize=1)
def code_location_layout() -> OperationsLayout:
    """The layout of every asset the studies load (the modules definitions.py loads, read now)."""
    from argassets.catalog import asset_modules

    return operations_layout(dg.load_assets_from_modules(asset_modules()))
