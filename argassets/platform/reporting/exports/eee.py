"""Every Eval Ever (EEE) records: one aggregate JSON file per (study, model), in EEE's datastore layout.

The layout is ``data/<collection>/<developer>/<model>/<uuid>.json`` (the collection is
``argassets-<study>``); the uuid is derived from the record's content, so an export of the same
results writes the same file names. A judge's figures carry ``metric_config.llm_scoring``: the judge
(or the jury of an ensemble, with its aggregation) and, where the study has one, the human baseline.
Validated with EEE's own validator (:mod:`.eee_validator`); schema 0.3.0.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import uuid
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from argassets.platform.reporting.exports.records import EvaluationRecord, Metric, MetricResult, Model

SCHEMA_VERSION = "0.3.0"
LIBRARY = "argassets"


def _library_version() -> str:
    try:
        return metadata.version(LIBRARY)
    except metadata.PackageNotFoundError:
        return "unknown"


def _strings(values: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(values).items()}


def model_info(model: Model) -> dict[str, Any]:
    """EEE's ``model_info`` of a judge."""
    info: dict[str, Any] = {
        "name": model.name,
        "id": model.id,
        "additional_details": {
            "deployment_type": model.deployment,
            "model_availability": model.availability,
            **_strings(model.details),
        },
    }
    if model.developer:
        info["developer"] = model.developer
    if model.engine:
        info["inference_engine"] = {"name": model.engine}
    return info


def _bound(value: float | None, unbounded: str) -> float | str:
    return unbounded if value is None else float(value)


def metric_config(result: MetricResult) -> dict[str, Any]:
    """EEE's ``metric_config``, with the judges in ``llm_scoring``."""
    metric: Metric = result.metric
    scoring: dict[str, Any] = {
        "judges": [_judge(judge) for judge in result.judges],
        "input_prompt": result.prompt,
    }
    if result.aggregation is not None:
        scoring["aggregation_method"] = result.aggregation
    if result.human_baseline is not None and math.isfinite(result.human_baseline):
        scoring["expert_baseline"] = float(result.human_baseline)
    config: dict[str, Any] = {
        "evaluation_description": result.evaluation_name,
        "metric_id": metric.id,
        "metric_name": metric.name,
        "lower_is_better": metric.lower_is_better,
        "score_type": "continuous",
        "min_score": _bound(metric.min_score, "-Infinity"),
        "max_score": _bound(metric.max_score, "Infinity"),
        "llm_scoring": scoring,
    }
    if metric.unit:
        config["metric_unit"] = metric.unit
    return config


def _judge(model: Model) -> dict[str, Any]:
    judge: dict[str, Any] = {"model_info": model_info(model)}
    if model.temperature is not None:
        judge["temperature"] = float(model.temperature)
    return judge


def evaluation_result(result: MetricResult, source_data: dict[str, Any]) -> dict[str, Any]:
    """One entry of ``evaluation_results``."""
    score: dict[str, Any] = {"score": float(result.score)}
    if result.details:
        score["details"] = _strings(result.details)
    if result.num_samples is not None:
        score["uncertainty"] = {"num_samples": int(result.num_samples)}
    return {
        "evaluation_result_id": result.result_id,
        "evaluation_name": result.evaluation_name,
        "source_data": source_data,
        "metric_config": metric_config(result),
        "score_details": score,
    }


def eee_record(record: EvaluationRecord, retrieved: float, organisation: str = LIBRARY) -> dict[str, Any]:
    """The EEE aggregate document of ``record`` (figures whose score is not finite are left out)."""
    source_data: dict[str, Any] = {"dataset_name": record.dataset.name, "source_type": "other"}
    if record.dataset.urls:
        source_data.update(source_type="url", url=list(record.dataset.urls))
    results = [evaluation_result(r, source_data) for r in record.results if math.isfinite(r.score)]
    collection = f"{LIBRARY}-{record.study}"
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{collection}/{record.model.id}/{int(retrieved)}",
        "retrieved_timestamp": str(int(retrieved)),
        "source_metadata": {
            "source_name": f"{LIBRARY} ({record.study})",
            "source_type": record.source_type,
            "source_organization_name": organisation,
            "evaluator_relationship": "third_party",
            "additional_details": {"study": record.study, **_strings(record.details)},
        },
        "model_info": model_info(record.model),
        "eval_library": {"name": LIBRARY, "version": _library_version()},
        "evaluation_results": results,
    }


def record_path(record: EvaluationRecord, document: dict[str, Any]) -> str:
    """``data/<collection>/<developer>/<model>/<uuid>.json``; the uuid (version 4 form) hashes the
    document without its timestamps, so the same figures get the same name."""
    developer, _, name = record.model.id.strip("/").partition("/")
    stable = {k: v for k, v in document.items() if k not in ("evaluation_id", "retrieved_timestamp")}
    digest = hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).digest()
    name_uuid = uuid.UUID(bytes=digest[:16], version=4)
    return f"data/{LIBRARY}-{record.study}/{developer}/{name.replace('/', '_')}/{name_uuid}.json"


def write_eee(
    records: Sequence[EvaluationRecord], root: Path, retrieved: float, organisation: str = LIBRARY
) -> list[Path]:
    """Write one file per record under ``root`` (each replaced whole by an atomic rename)."""
    written = []
    for record in records:
        document = eee_record(record, retrieved, organisation)
        if not document["evaluation_results"]:
            continue
        path = root / record_path(record, document)
        path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        written.append(path)
    return written


def _atomic_write(path: Path, text: str) -> None:
    handle, scratch = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(scratch, 0o644)  # records to share: readable by all, as a plain write would leave them
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
