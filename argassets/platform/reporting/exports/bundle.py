"""The two exports end to end, for any study, model or report: what ``argassets export`` runs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from argassets.platform.operations.remedies import missing
from argassets.platform.reporting.exports.eee import write_eee
from argassets.platform.reporting.exports.eee_validator import validate_tree
from argassets.platform.reporting.exports.hf import CROISSANT_FILE, TableExport, validate_croissant, write_hf_dataset
from argassets.platform.reporting.exports.studies import StudyExport, TableReader


class ExportError(RuntimeError):
    """Nothing to export, or an export its own validator refuses (says which file and why)."""


def export_eee(
    exports: Sequence[StudyExport], read: TableReader, registry: Any, root: Path, model: str | None = None
) -> list[Path]:
    """Every Eval Ever records of the studies' models (of ``model`` only when given), validated."""
    records = [r for export in exports for r in export.records(read, registry)]
    if model is not None:
        records = [r for r in records if r.model.name == model]
    if not records:
        raise ExportError(missing(f"no reports to export{f' for {model!r}' if model else ''}"))
    written = write_eee(records, root, retrieved=time.time())
    problems = validate_tree(root)
    if problems:
        shown = "; ".join(f"{path}: {' | '.join(found[:3])}" for path, found in list(problems.items())[:3])
        raise ExportError(f"Every Eval Ever's validator refused {len(problems)} file(s): {shown}")
    return written


def _only(frame: pd.DataFrame, column: str, model: str | None) -> pd.DataFrame:
    return frame if model is None or column not in frame.columns else frame[frame[column] == model]


def hf_tables(
    export: StudyExport, read: TableReader, model: str | None = None, reports: Sequence[str] | None = None
) -> list[TableExport]:
    """The study's judgments (tidy, importable again) and reports, of ``model`` only when given."""
    tables = []
    judgments = read(export.judgments_table)
    if judgments is not None and len(judgments):
        tidy = export.tidy(_only(judgments, "judge_model", model))
        if len(tidy):
            tables.append(TableExport(f"{export.judgments_table}_tidy", tidy, "one judgment (tidy import format)"))
    for name in export.reports if reports is None else reports:
        if name not in export.reports:
            raise ExportError(f"{export.study}: {name!r} is not one of its reports ({', '.join(export.reports)})")
        frame = read(name)
        description, column = export.reports[name]
        if frame is not None and len(rows := _only(frame, column, model)):
            tables.append(TableExport(name, rows, description))
    return tables


def export_hf(
    export: StudyExport,
    read: TableReader,
    root: Path,
    model: str | None = None,
    reports: Sequence[str] | None = None,
) -> list[Path]:
    """A Hugging Face dataset folder of the study (Parquet, card, Croissant), validated by mlcroissant."""
    tables = hf_tables(export, read, model, reports)
    if not tables:
        raise ExportError(missing(f"{export.study}: nothing to export{f' for {model!r}' if model else ''}"))
    suffix = f" ({model})" if model else ""
    notes = {"study": export.study, "exported": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "model": model or "every model"}
    written = write_hf_dataset(root, f"argassets {export.study}{suffix}", export.dataset, tables, notes)
    validate_croissant(root / CROISSANT_FILE)
    return written
