"""``argassets estimate MODEL``: a partition's work before it runs, from the instance's state.

Reads the study inputs the instance has materialised, the judgment cache, and the entry's
earlier judging runs (their metadata) to build :class:`argassets.platform.operations.estimate.WorkEstimate`.
``argassets slurm backfill`` (:mod:`argassets.cli.slurm`) uses the same estimate for each job's time limit and tags, and
refuses a partition over the budget.
"""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Callable
from typing import Any

import pandas as pd

from argassets.cli.common import CliError, check_key, chosen_studies, executor, get_instance, registry, say
from argassets.platform.judging.interface import ChatRequest, SamplingParams
from argassets.platform.judging.prompt_tokens import prompt_token_counts
from argassets.platform.operations.estimate import (
    WorkEstimate,
    estimate_partition,
    measured_throughput,
    missing_completions,
)
from argassets.platform.operations.run_engine import Executor
from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.secrets import redact
from argassets.platform.study import studies

Loader = Callable[[str], pd.DataFrame]
Workload = tuple[list[ChatRequest], int, SamplingParams]


def workloads() -> dict[str, tuple[str, Callable[[ModelEntry, Loader], Workload]]]:
    """The studies whose work can be estimated: their root asset and workload, from their definitions."""
    return {study.name: (study.root_asset, study.workload) for study in studies() if study.workload is not None}


def throughput_of(instance: Any, asset: str, entry: ModelEntry) -> tuple[float | None, str]:
    """Completions/s measured on the entry's earlier runs, else the registry's, else none."""
    import dagster as dg

    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[entry.name]), limit=20
    ).records
    history = []
    for record in records:
        metadata = record.asset_materialization.metadata if record.asset_materialization else {}
        if "completions_sent" in metadata and "elapsed_s" in metadata:
            history.append({k: float(metadata[k].value) for k in ("completions_sent", "elapsed_s")})
    measured = measured_throughput(history)
    if measured is not None:
        return measured, f"measured on {len(history)} earlier run(s)"
    if entry.throughput is not None:
        return entry.throughput, "declared in the registry"
    return None, "no earlier run sent anything and the registry declares no throughput"


def estimate_for(engine: Executor, registry: ModelRegistry, name: str, study: str) -> WorkEstimate:
    """The estimate of partition ``name`` of ``study`` on the run engine's instance."""
    import dagster as dg

    from argassets.platform.judging.identity import cache_model_key
    from argassets.platform.storage.judgment_cache import open_judgment_cache
    from argassets.platform.storage.judgment_cache.location import default_cache_location

    known = workloads()
    if study not in known:
        raise CliError(f"{name}: no estimate for study {study} (estimable: {', '.join(known)})")
    asset, workload = known[study]
    entry = registry.get(name)

    def load(key: str) -> pd.DataFrame:
        if engine.instance.get_latest_materialization_event(dg.AssetKey(key)) is None:
            raise CliError(f"{name} / {study}: input {key} is not materialised yet (argassets materialize {name})")
        return engine.repo_def.load_asset_value(dg.AssetKey(key), instance=engine.instance)

    requests, n_runs, sampling = workload(entry, load)
    try:
        cache = open_judgment_cache(default_cache_location())
        try:
            cached = missing_completions(cache, cache_model_key(entry), sampling.key(), requests, n_runs)
        finally:
            cache.close()
    except (ConnectionError, OSError, sqlite3.Error) as exc:  # one line: the cache's message is redacted
        raise CliError(f"{name} / {study}: {' '.join(redact(str(exc)).split())}") from None
    throughput = throughput_of(engine.instance, asset, entry)
    tokens = prompt_token_counts(entry, cached[2])
    return estimate_partition(entry, study, requests, n_runs, cached, throughput, sampling.max_tokens, tokens)


def cmd_estimate(args: argparse.Namespace) -> int:
    check_key(args.model, "estimate")
    models = registry()
    if args.model not in models.names:
        raise CliError(f"{args.model}: not in the registry (known: {', '.join(models.names)})")
    entry = models.get(args.model)
    wanted = chosen_studies(args.study)
    known = workloads()
    chosen = [s for s in entry.studies if s in known and (wanted is None or s in wanted)]
    if not chosen:
        raise CliError(f"{args.model}: takes part in no estimable study ({', '.join(known)}) selected")
    engine = executor(get_instance())
    for study in chosen:
        say(estimate_for(engine, models, args.model, study).describe())
    return 0


def add_command(sub: Any) -> None:
    """Register ``argassets estimate`` on the main parser's subcommands."""
    est = sub.add_parser("estimate", help="requests, tokens, cache, time and cost of a partition before it runs")
    est.add_argument("model", help="registry entry to estimate, e.g. smollm2-135m-vllm")
    est.add_argument(
        "--study",
        choices=["argument_quality", "political", "all"],
        default="all",
        help="estimate only this study (default: every study the model takes part in)",
    )
    est.set_defaults(func=cmd_estimate)
