"""``argassets run-default``: study inputs, every baseline and published import, then every report."""

from __future__ import annotations

import argparse
from typing import Any

from argassets.cli.common import (
    CliError,
    check_key,
    dagster_home,
    executor,
    get_instance,
    preflight_partitions,
    refused_summary,
    registry,
    say,
    sync_partitions,
)
from argassets.platform.paths import resolve_data_dir
from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.registry.model_entry import ModelEntry


def default_models(registry: ModelRegistry, published_data: bool) -> list[str]:
    """What ``run-default`` judges: every baseline and, with the published data, every entry a study
    of it reads from elsewhere (Study B's published prediction files: the KB then holds the paper's
    22 models and its ensembles)."""
    names = [e.name for e in registry.models if e.is_baseline]
    if published_data:
        names += [e.name for e in registry.models if _judged_elsewhere(registry, e)]
    return names


def _judged_elsewhere(registry: ModelRegistry, entry: ModelEntry) -> bool:
    """Whether a study ``entry`` takes part in reads its judgments from elsewhere instead of judging."""
    studies = [registry.studies.get(name) for name in entry.studies]
    return any(study.judged_elsewhere is not None and study.judged_elsewhere.applies(entry) for study in studies)


def _studies_with_data(registry: ModelRegistry, studies: list[str]) -> list[str]:
    """``studies`` less those that need the published data when there is none (said why)."""
    needing = [registry.studies.get(s) for s in studies if registry.studies.get(s).needs_published_data]
    left_out = needing if resolve_data_dir() is None else []
    if left_out:
        # The other studies fall back to what they have without it (Study A: the embedded sample).
        say(
            "no published data folder (ARGASSETS_DATA_DIR or ../shared/data); left out, as they need it: "
            + "; ".join(study.title for study in left_out)
        )
    return [s for s in studies if s not in {study.name for study in left_out}]


def cmd_run_default(args: argparse.Namespace) -> int:
    instance = get_instance()
    models = registry()
    synced = sync_partitions(instance, models)
    say(f"partitions added: {', '.join(synced['added']) or 'none'}")
    names = (
        [check_key(p.strip(), "--models") for p in args.models.split(",") if p.strip()]
        if args.models
        else default_models(models, resolve_data_dir() is not None)
    )
    unknown = [n for n in names if n not in models.names]
    if unknown:
        raise CliError(f"not in the registry: {', '.join(unknown)}")
    names, refused = preflight_partitions(models, names)
    if not names:
        return 2
    engine = executor(instance)
    studies = _studies_with_data(
        models, [s for s in engine.layout.roots if any(models.get(n).takes_part_in(s) for n in names)]
    )
    say(f"models: {', '.join(names)}; studies: {', '.join(studies) or 'none'}")
    for name in [n for n in names if not any(s in models.get(n).studies for s in studies)]:
        say(f"{name}: takes part in no selected study with assets here; nothing to run")
    ok = engine.run_default(models, names, studies)
    if ok:
        say(f"done; see the results with `argassets ui` (DAGSTER_HOME={dagster_home()})")
    if refused:
        say(refused_summary(refused))
    return 0 if ok and not refused else 1


def add_command(sub: Any) -> None:
    """Register ``argassets run-default``."""
    default = sub.add_parser(
        "run-default",
        help="every unpartitioned input and table, the baselines and published imports, then every report",
    )
    default.add_argument("--models", help="comma-separated entries instead of the baselines and published imports")
    default.set_defaults(func=cmd_run_default)
