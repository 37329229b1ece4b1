"""What a study exports, declared beside it (``<study package>/exports.py``) and named by its
definition (``StudyDefinition.export``), so the shared export code and the CLI never name a study."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from argassets.platform.reporting.exports.records import Dataset, EvaluationRecord
from argassets.platform.study import StudyDefinition

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


def study_export(study: StudyDefinition) -> StudyExport:
    """The :class:`StudyExport` that ``study`` declares (``StudyDefinition.export``)."""
    export = study.export
    if export is None or export.study != study.name:
        raise LookupError(f"study {study.name!r} declares no export for itself (StudyDefinition.export)")
    return export
