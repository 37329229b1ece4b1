"""Every study's judging asset, built from its declaration: the platform runs what a study declares.

A study declares its inputs, scope model, sampling, runs, request and table builders and hooks
(:class:`argassets.platform.study.StudyDefinition`); :func:`judging_asset` turns that into the
study's model-partitioned root asset. What every study needs is added here, so that no study can
leave it out: the policy for an entry outside the study, the provenance columns
(:data:`~argassets.platform.judging.interface.PROVENANCE_COLUMNS`), the shared metadata, and the
failure of a run whose requests came back without an answer.
"""

# No ``from __future__ import annotations``: Dagster checks the judging function's ``context`` annotation.
import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

import dagster as dg
import numpy as np
import pandas as pd

from argassets.platform.judging.adaptive_rounds import AdaptiveOutcome, Send, check_pairs, judge_in_rounds
from argassets.platform.judging.interface import PROVENANCE_COLUMNS, CachedCompletion, ChatRequest, SamplingParams
from argassets.platform.judging.partition import (
    PartitionJudgments,
    judge_partition,
    judging_metadata,
    non_answer_failure,
    outside_study,
)
from argassets.platform.registry.entries import ModelEntry, ModelRegistry
from argassets.platform.registry.partitions import PARTITION_METADATA, model_partition_key, study_partitions
from argassets.platform.study import Inputs, RequestSet, StudyDefinition

#: The group of every study's judging asset, its kinds (the table store) and the pool of its steps.
JUDGMENTS_GROUP = "judgments"
JUDGMENTS_KINDS = frozenset({"duckdb", "pandas"})
GPU_POOL = "gpu"
#: Provenance columns holding text: pandas' string type is VARCHAR even in an empty or all-null partition.
_TEXT_PROVENANCE = ("prompt_sha256", "sampling_key", "backend", "scope")


@cache
def judging_asset(study: StudyDefinition) -> dg.AssetsDefinition:
    """The judging asset of ``study``, one partition per judge model (built once per study)."""
    resources = {"registry", "judge", "judgment_cache"} | ({"data"} if study.judged_elsewhere else set())

    @dg.asset(
        name=study.root_asset,
        description=study.root_description,
        ins={name: dg.AssetIn(name) for name in study.inputs},
        partitions_def=study_partitions(study.name),
        metadata=PARTITION_METADATA,
        group_name=JUDGMENTS_GROUP,
        kinds=set(JUDGMENTS_KINDS),
        pool=GPU_POOL,
        output_required=False,
        required_resource_keys=resources,
    )
    def _judgments(context: dg.AssetExecutionContext, **inputs: pd.DataFrame) -> Iterator[dg.Output[pd.DataFrame]]:
        yield from judge_study_partition(context, study, inputs)

    return _judgments


def judge_study_partition(
    context: dg.AssetExecutionContext, study: StudyDefinition, inputs: Inputs
) -> Iterator[dg.Output[pd.DataFrame]]:
    """The body of every judging asset: read (judged elsewhere) or judge the partition's entry."""
    registry: ModelRegistry = context.resources.registry.load()
    entry = registry.get(model_partition_key(context))
    if outside_study(context, entry, study.name):
        return
    scope = study.scope_model.of(entry)
    elsewhere = study.judged_elsewhere
    if elsewhere is not None and elsewhere.applies(entry):
        table, metadata, warnings = elsewhere.table(entry, scope, inputs, context.resources.data.root())
        for warning in warnings:
            context.log.warning(warning)
        table = typed_provenance(table, study.name)
        yield dg.Output(table, metadata=dict(metadata), data_version=table_data_version(table))
        return
    scope_text = scope.describe()
    sampling = entry.sampling_for(study.default_sampling)
    asked = study.build_requests(entry, scope, inputs)
    context.log.info(
        f"{entry.name}: scope {scope_text}: {asked.summary or 'requests built'}; "
        f"{len(asked.requests)} requests x {study.n_runs} runs"
    )
    judged = judge_partition(
        context,
        entry,
        context.resources.judge,
        context.resources.judgment_cache,
        asked.requests,
        sampling,
        study.n_runs,
        import_keys=[registry.studies.get(name).import_keys for name in entry.studies],
        rounds=adaptive_rounds(study, entry, asked, inputs, context.log),
    )
    if judged.design is not None:
        # Every report reads the scope column: the partition says it is partial by design.
        scope_text = judged.design.note() if scope_text == "full" else f"{scope_text}; {judged.design.note()}"
    table = judged_table(study, asked, judged.completions, entry.name, sampling, entry.is_baseline, scope_text)
    metadata = partition_metadata(study, entry, judged, table, sampling, asked, scope_text)
    yield dg.Output(table, metadata=metadata, data_version=table_data_version(table))
    failure = non_answer_failure(entry, judged)
    if failure is not None:
        raise failure


def table_data_version(table: pd.DataFrame) -> dg.DataVersion:
    """The partition's content hash: a re-run that finds everything in the cache writes the same
    table, so its version is unchanged and nothing downstream is marked unsynced."""
    digest = hashlib.sha256(repr([(str(c), str(t)) for c, t in table.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes())
    return dg.DataVersion(digest.hexdigest()[:32])


def adaptive_rounds(
    study: StudyDefinition, entry: ModelEntry, asked: RequestSet, inputs: Inputs, log: Any
) -> Callable[[Send], AdaptiveOutcome] | None:
    """How an adaptive entry's partition is judged in rounds; ``None`` when the entry is not adaptive."""
    option = entry.adaptive
    if option is None:
        return None
    if study.adaptive_pairs is None:
        raise ValueError(f"model '{entry.name}': 'adaptive' needs pairs, and study '{study.name}' declares none")
    pairs = check_pairs(study.adaptive_pairs(asked, inputs), asked.requests, f"model '{entry.name}'")

    def verdicts(completions: Sequence[CachedCompletion]) -> list[Any]:
        rows = study.build_table(asked, completions, entry.name)
        return rows[study.verdict_column].sort_index().tolist()

    def rounds(send: Send) -> AdaptiveOutcome:
        outcome = judge_in_rounds(asked.requests, pairs, option.settings(), send, verdicts, log)
        return replace(outcome, stated=option.describe())

    return rounds


def partition_metadata(
    study: StudyDefinition,
    entry: ModelEntry,
    judged: PartitionJudgments,
    table: pd.DataFrame,
    sampling: SamplingParams,
    asked: RequestSet,
    scope_text: str,
) -> dict[str, Any]:
    """The shared metadata, then what the study knew before judging, then what its hook adds."""
    metadata = judging_metadata(entry, judged, table, sampling, scope_text)
    metadata.update(asked.metadata)
    if study.judging_metadata is not None:
        metadata.update(study.judging_metadata(table, asked))
    return metadata


def judged_table(
    study: StudyDefinition,
    asked: RequestSet,
    completions: Sequence[CachedCompletion],
    judge_model: str,
    sampling: SamplingParams,
    is_baseline: bool,
    scope_text: str,
) -> pd.DataFrame:
    """The study's rows of ``completions`` with the provenance columns, in the rows' order."""
    rows = study.build_table(asked, completions, judge_model)
    _check_rows(study.name, rows, len(completions))
    provenance = provenance_frame(completions, sampling, is_baseline, scope_text)
    return rows.join(provenance).reset_index(drop=True)


def _check_rows(study: str, rows: pd.DataFrame, n_completions: int) -> None:
    """One row per completion, labelled by its position, and no column the platform adds."""
    labels = rows.index.to_numpy()
    if len(rows) != n_completions or not np.array_equal(np.sort(labels), np.arange(n_completions)):
        raise ValueError(
            f"study '{study}': build_table must return one row per completion ({n_completions}), each labelled by "
            f"its completion's position; it returned {len(rows)} rows"
        )
    taken = [column for column in PROVENANCE_COLUMNS if column in rows.columns]
    if taken:
        raise ValueError(f"study '{study}': build_table returned {taken}, which the platform adds")


def provenance_frame(
    completions: Sequence[CachedCompletion], sampling: SamplingParams, is_baseline: bool, scope_text: str
) -> pd.DataFrame:
    """The provenance of each completion (:data:`PROVENANCE_COLUMNS`), one row each, in order."""
    n = len(completions)

    def each(value: Callable[[CachedCompletion], Any]) -> list[Any]:
        return [value(c) for c in completions]

    frame = pd.DataFrame(
        {
            "prompt_sha256": each(lambda c: c.prompt_sha256),
            "temperature": np.full(n, float(sampling.temperature)),
            "top_p": np.full(n, float(sampling.top_p)),
            "seed": each(lambda c: c.seed),
            "max_tokens": np.full(n, int(sampling.max_tokens), dtype=np.int64),
            "sampling_key": each(lambda c: c.sampling_key),
            "latency_s": np.array(each(lambda c: float(c.latency_s)), dtype=np.float64),
            "requested_at": pd.Series(each(lambda c: c.requested_at), dtype=object),
            "completed_at": pd.Series(each(lambda c: c.completed_at), dtype=object),
            "backend": each(lambda c: c.backend),
            "is_baseline": np.full(n, bool(is_baseline)),
            "scope": [scope_text] * n,
        },
        columns=list(PROVENANCE_COLUMNS),
    )
    return typed_provenance(frame, "")


def typed_provenance(table: pd.DataFrame, study: str) -> pd.DataFrame:
    """``table`` with its provenance columns in the one type every partition writes (a copy)."""
    missing = [column for column in PROVENANCE_COLUMNS if column not in table.columns]
    if missing:
        raise ValueError(f"study '{study}': a table judged elsewhere lacks the provenance columns {missing}")
    out = table.copy()
    for column in _TEXT_PROVENANCE:
        out[column] = out[column].astype("string")
    out["seed"] = pd.array(out["seed"].tolist(), dtype="Int64")
    out["max_tokens"] = out["max_tokens"].astype("int64")
    for column in ("temperature", "top_p", "latency_s"):
        out[column] = out[column].astype("float64")
    out["is_baseline"] = out["is_baseline"].astype(bool)
    for column in ("requested_at", "completed_at"):
        out[column] = pd.to_datetime(out[column], utc=True, format="ISO8601")
    return out


def study_workload(
    study: StudyDefinition, entry: ModelEntry, load: Callable[[str], pd.DataFrame]
) -> tuple[list[ChatRequest], int, SamplingParams]:
    """What the judging asset of ``study`` would send for ``entry``: requests, runs, sampling (estimates).

    ``load(asset)`` gives an input table; only the inputs the study's requests read are loaded.
    """
    asked = study.build_requests(entry, study.scope_model.of(entry), _LazyInputs(study.inputs, load))
    return asked.requests, study.n_runs, entry.sampling_for(study.default_sampling)


class _LazyInputs(Mapping[str, pd.DataFrame]):
    """The study's inputs, each loaded when first read."""

    def __init__(self, names: Sequence[str], load: Callable[[str], pd.DataFrame]):
        self._names = tuple(names)
        self._load = load
        self._loaded: dict[str, pd.DataFrame] = {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._names:
            raise KeyError(f"'{name}' is not an input of the study (inputs: {', '.join(self._names)})")
        if name not in self._loaded:
            self._loaded[name] = self._load(name)
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)
