"""``argassets batch export`` / ``argassets batch import``: a partition's judgments through batch files.

The commands read the study inputs the instance has materialised (as ``argassets estimate`` does),
then call the plain functions :func:`argassets.platform.judging.batch_files.export_batch` and
:func:`~argassets.platform.judging.batch_files.import_batch_results` on the judgment cache.
docs/judgments.md, "Batch files".
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from argassets.cli.common import CliError, check_key, executor, get_instance, registry, say, studies
from argassets.platform.judging.batch_files import (
    BatchFormat,
    BatchScope,
    ExportReport,
    ImportReport,
    export_batch,
    import_batch_results,
)
from argassets.platform.registry.entries import ModelRegistry


def partition_scope(engine: Any, models: ModelRegistry, name: str, study: str) -> BatchScope:
    """What partition ``name`` of ``study`` asks, from the instance's materialised inputs."""
    import dagster as dg

    from argassets.platform.judging.identity import cache_model_key
    from argassets.platform.judging.study_asset import study_workload

    if study not in models.studies.names:
        raise CliError(f"{name}: no batch files for study {study} (possible: {', '.join(models.studies.names)})")
    entry = models.get(name)
    if entry.mode != "sample":
        raise CliError(f"{name}: mode {entry.mode!r} is not sent as batch files (only 'sample')")

    def load(key: str) -> Any:
        if engine.instance.get_latest_materialization_event(dg.AssetKey(key)) is None:
            raise CliError(f"{name} / {study}: input {key} is not materialised yet")
        return engine.repo_def.load_asset_value(dg.AssetKey(key), instance=engine.instance)

    requests, n_runs, sampling = study_workload(models.studies.get(study), entry, load)
    return BatchScope(cache_model_key(entry), sampling, n_runs, requests)


def _format(models: ModelRegistry, name: str) -> BatchFormat:
    from argassets.platform.resources.judges import STRUCTURED_OUTPUT_ENV_VAR

    entry = models.get(name)
    batch_format = entry.batch_format(os.environ.get(STRUCTURED_OUTPUT_ENV_VAR) or "json_schema")
    if batch_format is None:
        raise CliError(f"model '{name}': backend {entry.backend!r} has no batch files (openai and vllm_batch have)")
    return batch_format


def run_batch_command(args: argparse.Namespace) -> ExportReport | ImportReport:
    """Export or import for one partition (the command's logic, returning its report)."""
    from argassets.platform.storage.judgment_cache import open_judgment_cache
    from argassets.platform.storage.judgment_cache.location import default_cache_location

    check_key(args.model, f"batch {args.batch_command}")
    models = registry()
    if args.model not in models.names:
        raise CliError(f"{args.model}: not in the registry (known: {', '.join(models.names)})")
    engine = executor(get_instance())
    scope, batch_format = partition_scope(engine, models, args.model, args.study), _format(models, args.model)
    cache = open_judgment_cache(default_cache_location())
    try:
        if args.batch_command == "export":
            return export_batch(Path(args.out), scope, cache, batch_format, again=args.again)
        return import_batch_results([Path(f) for f in args.files], scope, cache, batch_format)
    finally:
        cache.close()


def cmd_batch(args: argparse.Namespace) -> int:
    from argassets.platform.judging.batch_files import BatchResultError

    try:
        say(run_batch_command(args).describe())
    except BatchResultError as exc:
        raise CliError(str(exc)) from None
    return 0


def add_command(sub: Any) -> None:
    """Register ``argassets batch export`` and ``argassets batch import``."""
    batch = sub.add_parser("batch", help="judge a partition through OpenAI-Batch files (export, import)")
    bsub = batch.add_subparsers(dest="batch_command", required=True)
    export = bsub.add_parser("export", help="write the partition's missing requests as OpenAI-Batch JSONL parts")
    export.add_argument("model", help="registry entry (backend openai or vllm_batch)")
    export.add_argument("--study", required=True, choices=studies().names, help="the study's partition")
    export.add_argument("--out", required=True, help="folder of the parts (requests-0001.jsonl, ...); resumable")
    export.add_argument("--again", action="store_true", help="also export exported requests still unanswered")
    export.set_defaults(func=cmd_batch)
    imp = bsub.add_parser("import", help="store a provider's result files in the judgment cache")
    imp.add_argument("model", help="registry entry the files were exported for")
    imp.add_argument("--study", required=True, choices=studies().names, help="the study's partition")
    imp.add_argument("files", nargs="+", help="result JSONL files")
    imp.set_defaults(func=cmd_batch)
