"""Model partitions for tests: the keys in ``judge_models`` and in every study's definition."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from argassets.platform.registry.partitions import JUDGE_MODELS, study_partitions_name
from argassets.platform.study import Studies
from argassets.studies import code_location_studies


def add_partitions(instance: dg.DagsterInstance, names: Sequence[str], studies: Studies | None = None) -> None:
    """Add ``names`` everywhere: a test's entries may run in any study (the real code adds each to its own).

    ``studies`` default to the code location's (``argassets/studies.py``, with ``$ARGASSETS_EXTRA_STUDIES``).
    """
    instance.add_dynamic_partitions(JUDGE_MODELS, list(names))
    for study in code_location_studies() if studies is None else studies:
        instance.add_dynamic_partitions(study_partitions_name(study.name), list(names))
