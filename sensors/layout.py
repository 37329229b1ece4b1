"""The operations layout of this code location's assets, computed once at import.

Jobs and schedules need concrete asset keys when they are defined; they take them from here, so
that they follow the asset modules instead of a hand-kept list.
"""

from __future__ import annotations

from functools import lru_cache

import dagster as dg

from argassets.automation import OperationsLayout, operations_layout


@lru_cache(maxsize=1)
def code_location_layout() -> OperationsLayout:
    """The layout of every asset the code location loads (same modules as definitions.py)."""
    from argassets.assets import aggregation, corpora, judgments, knowledge_base, political, prompts, reports

    modules = [corpora, prompts, judgments, aggregation, reports, knowledge_base, political]
    return operations_layout(dg.load_assets_from_modules(modules))
