"""The judging step of every study's partitioned asset: one judge model, every request and run.

Every study's judging asset (built by :mod:`argassets.platform.judging.study_asset` from the
study's declaration) calls :func:`judge_partition` and describes the outcome with
:func:`judging_metadata`; only the requests and the table built from the completions differ.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import dagster as dg
import pandas as pd

from argassets.platform.judging.adaptive_rounds import AdaptiveOutcome, Send
from argassets.platform.judging.identity import cache_model_key, model_identity
from argassets.platform.judging.incremental import MAX_ATTEMPTS, judge_incrementally
from argassets.platform.judging.interface import CachedCompletion, ChatRequest, SamplingParams, run_seed
from argassets.platform.judging.label_probabilities import draw_label, label_distribution
from argassets.platform.judging.prefill_meter import PrefillMeter, partition_prefill
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.storage.judgment_cache.interface import JudgmentStore
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache
from argassets.platform.study import ImportKeys


@dataclass(frozen=True)
class PartitionJudgments:
    """What one judging step returned: the completions and how they were obtained."""

    completions: list[CachedCompletion]
    backend: str
    elapsed_s: float
    cache_location: str
    #: What answered (:func:`argassets.platform.judging.identity.model_identity`) and the cache key built from it.
    identity: dict[str, Any] = field(default_factory=dict)
    cache_model: str = ""
    #: HTTP requests and retries, for backends that count them (``openai``).
    http: dict[str, int] = field(default_factory=dict)
    #: Attempts after which a non-answer is kept (given up).
    max_attempts: int = MAX_ATTEMPTS
    #: The engine's computed and reused prompt tokens beside the floor (judging/prefill_meter.py).
    prefill: dict[str, Any] = field(default_factory=dict)
    #: How an adaptive entry's rounds went (``None``: every request was judged).
    design: AdaptiveOutcome | None = None

    @property
    def sent(self) -> int:
        return sum(not c.from_cache for c in self.completions)

    @property
    def non_answers(self) -> int:
        """Rows holding a non-answer (invalid in the table)."""
        return sum(not c.answered for c in self.completions)

    @property
    def asked_again(self) -> int:
        """Rows whose cached non-answer was sent again by this call."""
        return sum(not c.from_cache and c.attempts > 1 for c in self.completions)

    @property
    def non_answers_this_run(self) -> int:
        """Rows whose request was sent by this call and came back without an answer (an outage's mark)."""
        return sum(not c.from_cache and not c.answered for c in self.completions)

    @property
    def given_up(self) -> int:
        """Rows holding a non-answer that used up its attempts: it is not asked again."""
        return sum(not c.answered and c.attempts >= self.max_attempts for c in self.completions)


def outside_study(context: dg.AssetExecutionContext, entry: ModelEntry, study: str) -> bool:
    """Whether ``entry`` takes no part in ``study``; such a partition is not materialised.

    The one policy of every study: the asset yields nothing (``output_required=False``), so the
    partition stays unmaterialised, its checks are skipped, and downstream reads no rows for it.
    """
    if entry.takes_part_in(study):
        return False
    context.log.info(f"{entry.name} does not take part in {study}: nothing materialised")
    return True


def judge_partition(
    context: dg.AssetExecutionContext,
    entry: ModelEntry,
    judge: JudgeResource,
    judgment_cache: JudgmentCacheResource,
    requests: list[ChatRequest],
    sampling: SamplingParams,
    n_runs: int,
    import_keys: Sequence[ImportKeys] = (),
    rounds: Callable[[Send], AdaptiveOutcome] | None = None,
) -> PartitionJudgments:
    """Every request answered ``n_runs`` times by ``entry``'s judge, through the judgment cache.

    ``import_keys`` are those of the entry's studies (what a tidy import file of the entry may hold).
    ``rounds`` (an adaptive entry's) judges only the requests it chooses, round by round, each round
    through the same cache (:mod:`argassets.platform.judging.adaptive_rounds`).

    Imported judgments are re-read from their file every time (an in-memory cache); every other
    backend shares the persistent cache, so a re-run sends only what is missing, plus the cached
    non-answers (flagged by the backend, or empty text) that have had fewer than ``MAX_ATTEMPTS``
    attempts; text the study cannot parse is the model's answer and is not sent again. The cache is keyed by the model's identity
    (``<name>@<identity key>``), not by its registry name alone: answers of an entry whose model,
    weights or output-changing engine arguments changed are not reused.
    """
    identity = model_identity(entry)
    cache_model = cache_model_key(entry, identity)
    the_judge = judge.build(entry, import_keys=import_keys)
    meter = PrefillMeter(the_judge)
    cache = judgment_cache.open() if entry.caches_judgments else JudgmentCache(":memory:")
    started = time.perf_counter()
    design = None
    try:
        send = _CachedSender(meter, cache_model, sampling, n_runs, cache, entry, context.log)
        if rounds is None:
            completions = send(requests)
        else:
            design = rounds(send)
            completions = design.completions
        prefill = partition_prefill(meter, entry)
    finally:
        cache.close()
        the_judge.close()
    http: dict[str, int] = {}
    requests_sent = getattr(the_judge, "requests_sent", None)
    if requests_sent is not None:
        http = {"http_requests": int(requests_sent), "http_retries": int(getattr(the_judge, "retries", 0))}
    return PartitionJudgments(
        completions=completions,
        backend=the_judge.backend,
        elapsed_s=time.perf_counter() - started,
        cache_location=judgment_cache.location() if entry.caches_judgments else f"none ({entry.backend})",
        http=http,
        identity=identity,
        cache_model=cache_model,
        max_attempts=MAX_ATTEMPTS,
        prefill=prefill,
        design=design,
    )


@dataclass(frozen=True)
class _CachedSender:
    """Judges a list of requests through the open cache: every run, in request then run order."""

    meter: PrefillMeter
    cache_model: str
    sampling: SamplingParams
    n_runs: int
    cache: JudgmentStore
    entry: ModelEntry
    log: Any

    def __call__(self, requests: list[ChatRequest]) -> list[CachedCompletion]:
        probabilities_mode = self.entry.mode == "label_probabilities"
        completions = judge_incrementally(
            self.meter,
            self.cache_model,
            requests,
            probe_sampling(self.sampling, requests) if probabilities_mode else self.sampling,
            1 if probabilities_mode else self.n_runs,
            self.cache,
            batch_size=self.entry.default_batch_size,
            log=self.log,
        )
        if probabilities_mode:
            return runs_from_probabilities(completions, requests, self.sampling, self.n_runs)
        return completions


def probe_sampling(sampling: SamplingParams, requests: Sequence[ChatRequest]) -> SamplingParams:
    """The one forward pass of probabilities mode: one token, its log-probabilities, the knobs kept.

    Its cache key differs from the sampled runs' (``max_tokens`` 1), so a probe is never taken for
    a draw. Every request must restrict the answer to labels.
    """
    unrestricted = [request.key for request in requests if not request.choices]
    if unrestricted:
        raise ValueError(
            f"mode 'label_probabilities' needs label requests; {len(unrestricted)} have no choices "
            f"(first: {unrestricted[0]!r})"
        )
    return replace(sampling, max_tokens=1, logprobs=sampling.logprobs or 20)


def runs_from_probabilities(
    probes: Sequence[CachedCompletion], requests: Sequence[ChatRequest], sampling: SamplingParams, n_runs: int
) -> list[CachedCompletion]:
    """``n_runs`` completions per request drawn from its probe's label probabilities, in request then run order.

    Run ``r`` of a prompt is drawn by a numpy ``Generator`` seeded with the seed a sampled run would
    have had (:func:`~argassets.platform.judging.engines.vllm_backend.run_seed`: per prompt and run, so
    prompts are drawn independently), recorded in ``seed``. A probe without probabilities (a
    non-answer, no log-probabilities) is repeated as it is: invalid in every run.
    """
    by_key = {probe.key: probe for probe in probes}
    runs = []
    for request in requests:
        probe = by_key[request.key]
        distribution = label_distribution(probe.label_probs, request.choices or ())
        for run in range(n_runs):
            seed = run_seed(sampling.seed, request.prompt_sha256, run)
            if distribution is None:
                runs.append(replace(probe, run=run, seed=seed))
                continue
            label = draw_label(distribution.probabilities, request.choices or (), seed)
            runs.append(replace(probe, run=run, seed=seed, text=label))
    return runs


def judging_metadata(
    entry: ModelEntry,
    judged: PartitionJudgments,
    table: pd.DataFrame,
    sampling: SamplingParams,
    scope_text: str,
) -> dict[str, Any]:
    """The metadata every judged partition carries (``table`` has ``is_valid`` and ``raw_output``)."""
    invalid = int((~table["is_valid"]).sum())
    metadata: dict[str, Any] = {
        "dagster/row_count": len(table),
        "backend": entry.backend,
        "is_baseline": entry.is_baseline,
        "model_id": entry.model_id or "",
        "scope": scope_text,
        "sampling": dg.MetadataValue.json(
            {
                **sampling.as_dict(),
                "key": sampling.key(),
                "server_sampling_defaults": entry.uses_server_sampling_defaults,
            }
        ),
        "mode": entry.mode,
        "completions_sent": judged.sent,
        "completions_from_cache": len(judged.completions) - judged.sent,
        "non_answers": judged.non_answers,
        "asked_again": judged.asked_again,
        "non_answers_this_run": judged.non_answers_this_run,
        "given_up": judged.given_up,
        "invalid": invalid,
        "invalid_share": float(invalid / len(table)) if len(table) else 0.0,
        "elapsed_s": round(judged.elapsed_s, 3),
        "cache": judged.cache_location,
        "model_identity": dg.MetadataValue.json({**judged.identity, "cache_key": judged.cache_model}),
        **judged.http,
        **judged.prefill,
    }
    if judged.design is not None:
        design = judged.design.metadata()
        metadata.update({**design, "design_cells": dg.MetadataValue.json(design["design_cells"])})
    if entry.uses_server_sampling_defaults:
        metadata["server_sampling_defaults"] = (
            "the endpoint applies its own sampling defaults (top_k, min_p, repetition penalty are not sent): "
            "the runs may be drawn from a truncated distribution"
        )
    if judged.given_up:
        metadata["given_up_warning"] = (
            f"{judged.given_up} rows hold a non-answer after {judged.max_attempts} attempts and are never "
            "asked again; they stay invalid"
        )
    if invalid:
        examples = table.loc[~table["is_valid"], "raw_output"].head(5).astype(str).tolist()
        metadata["invalid_examples"] = dg.MetadataValue.json(json.loads(json.dumps(examples)))
    return metadata


def non_answer_failure(entry: ModelEntry, judged: PartitionJudgments) -> dg.Failure | None:
    """The failure of a run whose requests came back without an answer, or ``None``.

    The one policy of every study: the partition's table is written first (answers are kept and
    the non-answers are asked again next time), then the run fails, so an endpoint outage that
    returns HTTP 200 with nothing usable never passes as a finished model. Once a non-answer is
    given up it is no longer sent, and later runs succeed with ``given_up`` in their metadata.
    """
    fresh = judged.non_answers_this_run
    if not fresh:
        return None
    sent = judged.sent
    return dg.Failure(
        description=(
            f"{entry.name}: {fresh} of the {sent} completions sent in this run came back without an answer "
            f"(empty or unreadable responses: is the endpoint failing?). The partition's table was written "
            f"with them invalid; materialise it again to ask them again (up to {judged.max_attempts} "
            f"attempts each; {judged.given_up} given up so far)"
        ),
        metadata={"non_answers_this_run": fresh, "completions_sent": sent, "given_up": judged.given_up},
    )
