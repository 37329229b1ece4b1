"""The political predictions table: requests, scope, and judged or published rows.

Study B: political positions of arguments (prompts, score parsing, per-model stats, ensembles).

The protocol follows "Validating Political Position Predictions of Arguments" (Robinson, Williams,
Atkinson, Cohn, 2026). Every knowledge-base argument (a locution and its proposition) is shown to a
model five times with the published prompt; the model answers a left-right score from 0 (extremely
left) to 100 (extremely right), or ``NA`` when the text has no political content.

An answer is one of three kinds (:func:`parse_score`):

- a **score**: an integer 0-100 (``is_valid`` and not ``is_na``, ``score`` set);
- **NA**: the apolitical answer (``is_valid`` and ``is_na``, ``score`` null);
- **invalid**: anything else (not ``is_valid``, ``score`` null); kept with its raw text and counted,
  never silently dropped and never counted as NA.

Per argument and model (:func:`model_stats`) the valid scores give mean, variance and standard
deviation (population moments, ``ddof = 0``, as in the published files), the NA count, and the
probability of NA = NA count / repetitions. Ensembles (:func:`pool_ensemble`) concatenate their
members' valid scores and add up their NA counts and repetitions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from argassets.platform.judging.interface import PROVENANCE_COLUMNS, CachedCompletion, ChatRequest, SamplingParams
from argassets.platform.registry.model_entry import ModelEntry
from argassets.political.prompts import N_REPETITIONS
from argassets.political.scope import PoliticalScope
from argassets.political.score_parsing import ParsedScore, parse_score

#: The paper's decoding parameters; a registry entry's ``sampling`` overrides each field.
#: ``max_tokens`` is ours: ``{"Score": 100}`` needs about eight tokens, so 32 leaves room for
#: spacing and code fences without letting a chatty model run on.
PROTOCOL_SAMPLING = SamplingParams(temperature=0.0, top_p=0.1, seed=123, max_tokens=32)

#: Structured output for backends that support it: ``{"Score": <int 0..100> | "NA"}``.
SCORE_JSON_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "Score": {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 100},
                {"type": "string", "enum": ["NA"]},
            ]
        }
    },
    "required": ["Score"],
    "additionalProperties": False,
}


def political_sampling(entry: ModelEntry) -> SamplingParams:
    """Sampling of a judge in Study B: the paper's protocol (temperature 0, top_p 0.1, seed 123),
    each field overridden by the registry entry's ``sampling`` when set."""
    return entry.sampling_for(PROTOCOL_SAMPLING)


def scope_arguments(
    prompts: pd.DataFrame, priority: Sequence[str] = (), max_arguments: int | None = None
) -> pd.DataFrame:
    """The prompts a judge answers: all of them, or the first ``max_arguments``.

    With a limit (pilot runs, slow judges), the arguments of the validation studies come first
    (``priority``, in the order given: the pairwise study's 100, then the pointwise study's), then
    the rest in ``argument_id`` order, so that a small pilot still feeds the validation reports.
    """
    if max_arguments is None or max_arguments >= len(prompts):
        return prompts.reset_index(drop=True)
    rank = {argument_id: position for position, argument_id in enumerate(dict.fromkeys(priority))}
    order = prompts["argument_id"].map(lambda a: rank.get(a, len(rank)))
    chosen = prompts.assign(_rank=order).sort_values(["_rank", "argument_id"], kind="stable").head(max_arguments)
    return chosen.drop(columns="_rank").sort_values("argument_id", kind="stable").reset_index(drop=True)


def build_requests(prompts: pd.DataFrame) -> list[ChatRequest]:
    """One structured-output request per argument (``json_schema`` = :data:`SCORE_JSON_SCHEMA`).

    ``context`` carries the ``argument_id`` (what the tidy import backend matches on) and the texts.
    """
    return [
        ChatRequest(
            key=str(row.argument_id),
            system=row.system,
            user=row.user,
            json_schema=SCORE_JSON_SCHEMA,
            context={"argument_id": str(row.argument_id), "locution": row.locution, "proposition": row.proposition},
        )
        for row in prompts.itertuples(index=False)
    ]


def study_first(study_items: pd.DataFrame) -> list[str]:
    """The validation studies' arguments, pairwise study first: what a pilot scope takes first."""
    priority = study_items.sort_values("study", key=lambda s: s.map({"pairwise": 0, "pointwise": 1}), kind="stable")
    return priority["argument_id"].dropna().tolist()


def workload(entry: ModelEntry, load: Callable[[str], pd.DataFrame]) -> tuple[list[ChatRequest], int, SamplingParams]:
    """The requests ``political_predictions`` sends for ``entry``, its runs and sampling (for estimates)."""
    scope = PoliticalScope.of(entry)
    prompts = scope_arguments(
        load("political_prompts"), study_first(load("political_study_items")), scope.max_arguments
    )
    return build_requests(prompts), N_REPETITIONS, political_sampling(entry)


PREDICTION_COLUMNS: tuple[str, ...] = (
    "judge_model",
    "argument_id",
    "published_index",
    "repetition",
    "raw_output",
    "score",
    "is_na",
    "is_valid",
) + PROVENANCE_COLUMNS


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Fix the column types so that every partition writes the same DuckDB schema."""
    out = frame.copy()
    for column in ("judge_model", "argument_id", "raw_output", "prompt_sha256", "sampling_key", "backend", "scope"):
        # pandas' string dtype maps to VARCHAR even when a partition is empty or all null
        out[column] = out[column].astype("string")
    out["published_index"] = pd.array(out["published_index"].tolist(), dtype="Int64")
    out["seed"] = pd.array(out["seed"].tolist(), dtype="Int64")
    for column in ("repetition", "max_tokens"):
        out[column] = out[column].astype("int64")
    for column in ("score", "temperature", "top_p", "latency_s"):
        out[column] = out[column].astype("float64")
    for column in ("is_na", "is_valid", "is_baseline"):
        out[column] = out[column].astype(bool)
    for column in ("requested_at", "completed_at"):
        out[column] = pd.to_datetime(out[column], utc=True, format="ISO8601")
    return out[list(PREDICTION_COLUMNS)].reset_index(drop=True)


def empty_predictions() -> pd.DataFrame:
    """An empty ``political_predictions`` partition with the table's column types."""
    return _typed(pd.DataFrame({column: [] for column in PREDICTION_COLUMNS}))


def prediction_table(
    completions: Sequence[CachedCompletion],
    judge_model: str,
    sampling: SamplingParams,
    backend: str,
    is_baseline: bool,
    scope: str,
) -> pd.DataFrame:
    """``political_predictions`` rows from judged completions (one per argument and repetition).

    Parameters
    ----------
    completions
        :class:`argassets.platform.judging.interface.CachedCompletion` objects (``key`` = argument id,
        ``run`` = repetition).
    """
    parsed = {}
    for c in completions:
        if c.text not in parsed:
            parsed[c.text] = parse_score(c.text)
    # A non-answer stays invalid even when what came back happens to parse.
    answers = [parsed[c.text] if c.answered else ParsedScore.invalid() for c in completions]
    frame = pd.DataFrame(
        {
            "judge_model": judge_model,
            "argument_id": [c.key for c in completions],
            "published_index": [None] * len(completions),
            "repetition": [int(c.run) for c in completions],
            "raw_output": [c.text for c in completions],
            "score": [a.score if a.score is not None else np.nan for a in answers],
            "is_na": [a.is_na for a in answers],
            "is_valid": [a.is_valid for a in answers],
            "prompt_sha256": [c.prompt_sha256 for c in completions],
            "temperature": float(sampling.temperature),
            "top_p": float(sampling.top_p),
            "seed": [c.seed for c in completions],
            "max_tokens": int(sampling.max_tokens),
            "sampling_key": [c.sampling_key for c in completions],
            "latency_s": [float(c.latency_s) for c in completions],
            "requested_at": [c.requested_at for c in completions],
            "completed_at": [c.completed_at for c in completions],
            "backend": [c.backend for c in completions],
            "is_baseline": bool(is_baseline),
            "scope": scope,
        },
        columns=list(PREDICTION_COLUMNS),
    )
    if frame.empty:
        return empty_predictions()
    return _typed(frame.sort_values(["argument_id", "repetition"], kind="stable"))


def out_of_range_warning(name: str, path: object, table: pd.DataFrame, shown: int = 5) -> str:
    """The terminal line for published scores outside 0-100: how many, where, a few examples.

    Such values are kept as invalid rows (``is_valid`` false), as the paper's NA-and-invalid
    counts treat them; the metadata carries the count (``out_of_range_published_values``).
    """
    integer = table["raw_output"].str.fullmatch(r"-?\d+").fillna(False).astype(bool)
    bad = table[integer & ~table["is_valid"]]
    examples = [f"{argument} = {raw}" for argument, raw in zip(bad["argument_id"], bad["raw_output"], strict=True)]
    return (
        f"{name}: {len(bad)} published score(s) outside 0-100 in {path}, kept as invalid rows "
        f"(first: {'; '.join(examples[:shown])})"
    )


def published_prediction_table(expanded: pd.DataFrame, scope: str) -> pd.DataFrame:
    """``political_predictions`` rows for an ``import`` entry in the published TSV format.

    ``expanded`` comes from :func:`argassets.lib.published_predictions.published_tsv_to_predictions`.
    The provenance columns say what the published files do not carry: no prompt hash (the
    paper's KB text is not in the files), no latency or timestamps; the sampling columns hold
    the paper's stated protocol (temperature 0, top_p 0.1, seed 123).
    """
    n = len(expanded)
    frame = expanded.assign(
        prompt_sha256=None,
        temperature=float(PROTOCOL_SAMPLING.temperature),
        top_p=float(PROTOCOL_SAMPLING.top_p),
        seed=[PROTOCOL_SAMPLING.seed] * n,
        max_tokens=0,
        sampling_key="published",
        latency_s=np.nan,
        requested_at=pd.NaT,
        completed_at=pd.NaT,
        backend="import",
        is_baseline=False,
        scope=scope,
    )
    if frame.empty:
        return empty_predictions()
    return _typed(frame)
