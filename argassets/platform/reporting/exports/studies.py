"""What a study exports, declared beside it: ``<study package>.exports.EXPORT`` (a :class:`StudyExport`).

Found from the study's definition (the package of its asset modules), so the shared export code
and the CLI never name a study.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from argassets.platform.reporting.exports.records import Dataset, EvaluationRecord
from argassets.platform.study import get_study

#: Reads a stored table by name (``None`` when it was never materialised).
TableReader = Callable[[str], pd.DataFrame | None]


@dataclass(frozen=True)
class StudyExport:
    """A study's exports: its data, its judgments in the tidy format, its reports and its records."""

    study: str
    dataset: Dataset
    #: The judgments table (the study's root asset) and the function turning it into tidy rows.
    judgments_table: str
    tidy: Callable[[pd.DataFrame], pd.DataFrame]
    #: Report tables, each with what a row is and the column naming the model (the system).
    reports: Mapping[str, tuple[str, str]]
    #: ``(read, registry) -> records``: one evaluation record per model of the reports.
    records: Callable[[TableReader, Any], list[EvaluationRecord]]


def study_export(name: str) -> StudyExport:
    """The :class:`StudyExport` of the study ``name`` (``<package>.exports.EXPORT``)."""
    study = get_study(name)
    packages = {m.__name__.rpartition(".assets")[0] for m in study.asset_modules if ".assets" in m.__name__}
    if len(packages) != 1:
        raise LookupError(f"study {name!r}: cannot tell its package from its asset modules ({sorted(packages)})")
    module = importlib.import_module(f"{packages.pop()}.exports")
    export = getattr(module, "EXPORT", None)
    if not isinstance(export, StudyExport) or export.study != name:
        raise LookupError(f"study {name!r}: {module.__name__} declares no EXPORT for it")
    return export
