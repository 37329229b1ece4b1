"""The operations layout of this code location's assets, computed once per list of studies.

The sensors need concrete asset keys when they are defined; they take them from here, so that they
follow the studies' assets instead of a hand-kept list.
"""

from __future__ import annotations

from functools import lru_cache

from argassets.platform.operations.automation import OperationsLayout, operations_layout
from argassets.platform.operations.study_definitions import code_location_assets
from argassets.platform.study import Studies
from argassets.studies import code_location_studies


def code_location_layout(studies: Studies | None = None) -> OperationsLayout:
    """The layout of every asset of ``studies`` (default: the code location's studies)."""
    return _layout_of(code_location_studies() if studies is None else studies)


@lru_cache(maxsize=4)
def _layout_of(studies: Studies) -> OperationsLayout:
    return operations_layout(code_location_assets(studies), studies)
