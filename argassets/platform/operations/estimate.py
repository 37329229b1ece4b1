"""The work of one model partition before it runs: requests, tokens, cache, time, cost (docs/operations.md)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from argassets.platform.judging.interface import ChatRequest
from argassets.platform.judging.prompt_tokens import APPROXIMATION, approx_tokens
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.storage.judgment_cache.interface import JudgmentStore

#: The Slurm time limit is this many times the estimate, plus ``STARTUP_S``.
TIME_MARGIN = 1.5
#: Loading the code location and the model before the first request (vLLM on a GPU: minutes).
STARTUP_S = 600.0
GPU_HOURS_ENV_VAR = "ARGASSETS_BUDGET_GPU_HOURS"
USD_ENV_VAR = "ARGASSETS_BUDGET_USD"


class BudgetExceeded(RuntimeError):
    """A partition whose estimate is above the configured budget; the message says both."""


@dataclass(frozen=True)
class WorkEstimate:
    """What judging one partition of one study will take."""

    model: str
    study: str
    requests: int
    runs: int
    completions: int
    cached: int
    prompt_tokens: int
    token_method: str
    throughput_per_s: float | None
    throughput_source: str
    seconds: float | None
    time_limit_minutes: int | None
    gpu_hours: float | None
    usd: float | None

    @property
    def to_send(self) -> int:
        return self.completions - self.cached

    def as_tags(self) -> dict[str, str]:
        """Run tags (strings) that carry the estimate into the UI."""
        return {f"argassets/estimate-{k.replace('_', '-')}": str(v) for k, v in asdict(self).items() if v is not None}

    def describe(self) -> str:
        lines = [
            f"{self.model} / {self.study}: {self.requests} requests x {self.runs} runs = {self.completions} completions, "
            f"{self.cached} in the cache, {self.to_send} to send",
            f"prompt tokens to send: {self.prompt_tokens} ({self.token_method})",
        ]
        if self.seconds is None:
            lines.append(f"time: unknown ({self.throughput_source})")
        else:
            lines.append(
                f"time: {self.seconds / 60:.1f} min at {self.throughput_per_s:.3g} completions/s "
                f"({self.throughput_source}); Slurm time limit {self.time_limit_minutes} min"
            )
        if self.gpu_hours is not None:
            lines.append(f"GPU-hours: {self.gpu_hours:.3g}")
        if self.usd is not None:
            lines.append(f"cost: ${self.usd:.2f}")
        return "\n".join(lines)


def missing_completions(
    cache: JudgmentStore, model_key: str, sampling_key: str, requests: Sequence[ChatRequest], n_runs: int
) -> tuple[int, int, list[ChatRequest]]:
    """Completions needed (distinct prompts x runs), those answered in the cache, and the
    distinct requests with at least one run to send."""
    distinct = {request.prompt_sha256: request for request in requests}
    stored = cache.lookup(model_key, sampling_key)
    answered = {item for item, row in stored.items() if row["answered"]}
    todo = [r for sha, r in distinct.items() if any((sha, run) not in answered for run in range(n_runs))]
    cached = sum((sha, run) in answered for sha in distinct for run in range(n_runs))
    return len(distinct) * n_runs, cached, todo


def time_limit_minutes(seconds: float) -> int:
    """The Slurm time limit for an estimate of ``seconds``: with the margin and the start-up."""
    return math.ceil((seconds * TIME_MARGIN + STARTUP_S) / 60.0)


def estimate_partition(
    entry: ModelEntry,
    study: str,
    requests: Sequence[ChatRequest],
    n_runs: int,
    cached: tuple[int, int, list[ChatRequest]],
    throughput: tuple[float | None, str],
    max_tokens: int,
    token_counts: tuple[Sequence[int], str] | None = None,
) -> WorkEstimate:
    """The estimate of ``entry``'s partition of ``study`` from its requests and the cache's state.

    ``token_counts``: the prompt tokens of each request to send (``cached``'s third item) and how
    they were counted; by default characters / 4.
    """
    completions, in_cache, todo = cached
    to_send = completions - in_cache
    counts, token_method = token_counts or ([approx_tokens(r) for r in todo], APPROXIMATION)
    if len(counts) != len(todo):
        raise ValueError(f"{len(counts)} token counts for {len(todo)} requests to send")
    prompt_tokens = sum(counts) * n_runs
    rate, source = throughput
    seconds = None if not rate else to_send / rate
    usd = entry.cost_usd(prompt_tokens, to_send * max_tokens)
    return WorkEstimate(
        model=entry.name,
        study=study,
        requests=len(requests),
        runs=n_runs,
        completions=completions,
        cached=in_cache,
        prompt_tokens=prompt_tokens,
        token_method=token_method,
        throughput_per_s=rate,
        throughput_source=source,
        seconds=seconds,
        time_limit_minutes=None if seconds is None else time_limit_minutes(seconds),
        gpu_hours=None if seconds is None or not entry.gpus_needed else entry.gpus_needed * seconds / 3600.0,
        usd=usd,
    )


def measured_throughput(history: Sequence[Mapping[str, float]]) -> float | None:
    """Completions per second over earlier runs' ``completions_sent`` and ``elapsed_s`` (runs
    that sent nothing say nothing about speed)."""
    useful = [h for h in history if h.get("completions_sent", 0) > 0 and h.get("elapsed_s", 0) > 0]
    if not useful:
        return None
    return sum(h["completions_sent"] for h in useful) / sum(h["elapsed_s"] for h in useful)


def check_budget(estimate: WorkEstimate, environ: Mapping[str, str] | None = None) -> None:
    """:class:`BudgetExceeded` when the estimate is above ``$ARGASSETS_BUDGET_GPU_HOURS`` or
    ``$ARGASSETS_BUDGET_USD`` (unset: no limit)."""
    env = os.environ if environ is None else environ
    for variable, value, unit in (
        (GPU_HOURS_ENV_VAR, estimate.gpu_hours, "GPU-hours"),
        (USD_ENV_VAR, estimate.usd, "US dollars"),
    ):
        raw = env.get(variable)
        if raw is None or value is None:
            continue
        try:
            limit = float(raw)
        except ValueError:
            raise ValueError(f"{variable}={raw!r} is not a number") from None
        if value > limit:
            raise BudgetExceeded(
                f"{estimate.model} / {estimate.study}: estimated {value:.3g} {unit} exceeds the budget of "
                f"{limit:g} ({variable}); {estimate.to_send} completions to send. Narrow the entry's scope or raise the budget."
            )
