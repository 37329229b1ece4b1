"""A Hugging Face dataset folder: one Parquet file per table, a dataset card and Croissant metadata.

``data/<table>.parquet`` (each written whole by an atomic rename), ``README.md`` (the card: YAML
front matter with the licence and one config per table, then what each table holds) and
``croissant.json`` (Croissant 1.1, built and validated with ``mlcroissant``: one FileObject and
one RecordSet per table, every column a field with its type). List-valued columns are stored as
JSON text so that every field has one scalar type.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from argassets.platform.reporting.exports.records import Dataset

CROISSANT_FILE = "croissant.json"
CARD_FILE = "README.md"


@dataclass(frozen=True)
class TableExport:
    """A table to export: its name, rows and a line saying what a row is."""

    name: str
    frame: pd.DataFrame
    description: str


class CroissantError(ValueError):
    """mlcroissant found problems in the metadata (lists them)."""


def _scalar_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with list or array cells turned into JSON text (one scalar type per column)."""
    out = frame.reset_index(drop=True).copy()
    for column in out.columns:
        if out[column].dtype == object and out[column].map(lambda v: isinstance(v, list | tuple | np.ndarray)).any():
            out[column] = out[column].map(
                lambda v: json.dumps(list(np.asarray(v).tolist())) if isinstance(v, list | tuple | np.ndarray) else v
            )
    return out


def _data_type(series: pd.Series) -> Any:
    import mlcroissant as mlc

    if pd.api.types.is_bool_dtype(series):
        return mlc.DataType.BOOL
    if pd.api.types.is_integer_dtype(series):
        return mlc.DataType.INTEGER
    if pd.api.types.is_float_dtype(series):
        return mlc.DataType.FLOAT
    if pd.api.types.is_datetime64_any_dtype(series):
        return mlc.DataType.DATETIME
    return mlc.DataType.TEXT


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _atomic_bytes(path: Path, write: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    os.close(handle)
    try:
        write(Path(scratch))
        os.chmod(scratch, 0o644)  # a dataset to share: readable by all, as a plain write would leave it
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def croissant_metadata(name: str, dataset: Dataset, tables: Sequence[TableExport], root: Path) -> dict[str, Any]:
    """The Croissant JSON-LD of the exported tables (their Parquet files must be written)."""
    import mlcroissant as mlc

    files, record_sets = [], []
    for table in tables:
        relative = f"data/{table.name}.parquet"
        files.append(
            mlc.FileObject(
                id=f"{table.name}-file",
                name=f"{table.name}-file",
                content_url=relative,
                encoding_formats=[mlc.EncodingFormat.PARQUET],
                sha256=_sha256(root / relative),
            )
        )
        fields = [
            mlc.Field(
                id=f"{table.name}/{column}",
                name=str(column),
                data_types=[_data_type(table.frame[column])],
                source=mlc.Source(file_object=f"{table.name}-file", extract=mlc.Extract(column=str(column))),
            )
            for column in table.frame.columns
        ]
        record_sets.append(mlc.RecordSet(id=table.name, name=table.name, description=table.description, fields=fields))
    metadata = mlc.Metadata(
        name=name,
        description=dataset.description,
        cite_as=dataset.citation,
        license=[dataset.licence],
        url=dataset.urls[0] if dataset.urls else None,
        version="1.0.0",
        date_published=datetime.datetime.now(datetime.UTC).replace(microsecond=0),
        distribution=files,
        record_sets=record_sets,
    )
    return dict(metadata.to_json())


def validate_croissant(path: Path, read_rows: int = 3) -> list[str]:
    """Load ``path`` with ``mlcroissant`` (which validates it) and read the first ``read_rows`` rows
    of every record set; returns the warnings, raises :class:`CroissantError` on errors."""
    import mlcroissant as mlc

    try:
        dataset = mlc.Dataset(jsonld=str(path))
    except mlc.ValidationError as exc:
        raise CroissantError(f"{path}: {exc}") from exc
    for record_set in dataset.metadata.record_sets:
        for i, _ in enumerate(dataset.records(record_set=record_set.uuid)):
            if i + 1 >= read_rows:
                break
    return list(dataset.metadata.issues.warnings)


def dataset_card(name: str, dataset: Dataset, tables: Sequence[TableExport], notes: Mapping[str, str]) -> str:
    """The dataset card (README.md): front matter for the Hub, then what each table holds."""
    configs = "\n".join(f"- config_name: {t.name}\n  data_files: data/{t.name}.parquet" for t in tables)
    rows = "\n".join(
        f"| `{t.name}` | {len(t.frame)} | {t.description} | {', '.join(f'`{c}`' for c in t.frame.columns)} |"
        for t in tables
    )
    facts = "\n".join(f"- **{key}**: {value}" for key, value in notes.items())
    return (
        f"---\nlicense: {dataset.licence.lower()}\npretty_name: {name}\nconfigs:\n{configs}\n---\n\n"
        f"# {name}\n\n{dataset.description}\n\n"
        f"Exported by argassets from its results; Croissant metadata in `{CROISSANT_FILE}`.\n\n{facts}\n\n"
        f"| table | rows | a row is | columns |\n|---|---|---|---|\n{rows}\n\n"
        f"## Source data\n\n{', '.join(dataset.urls)}\n\n## Citation\n\n{dataset.citation}\n"
    )


def write_hf_dataset(
    root: Path, name: str, dataset: Dataset, tables: Sequence[TableExport], notes: Mapping[str, str]
) -> list[Path]:
    """Write the Parquet files, the card and the Croissant metadata under ``root``; returns the paths."""
    if not tables:
        raise ValueError(f"{name}: no table to export")
    scalar = [TableExport(t.name, _scalar_frame(t.frame), t.description) for t in tables]
    written = []
    for table in scalar:
        path = root / "data" / f"{table.name}.parquet"
        _atomic_bytes(path, lambda p, frame=table.frame: frame.to_parquet(p, index=False))
        written.append(path)
    metadata = croissant_metadata(name, dataset, scalar, root)
    for file_name, text in (
        (CROISSANT_FILE, json.dumps(metadata, indent=2, ensure_ascii=False) + "\n"),
        (CARD_FILE, dataset_card(name, dataset, scalar, notes)),
    ):
        _atomic_bytes(root / file_name, lambda p, text=text: p.write_text(text, encoding="utf-8"))
        written.append(root / file_name)
    return written
