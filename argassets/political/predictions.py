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

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from argassets.platform.judging.interface import PROVENANCE_COLUMNS, CachedCompletion, ChatRequest, SamplingParams
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.study import Inputs, RequestSet
from argassets.political.prompts import N_REPETITIONS
from argassets.political.published import published_predictions_file, published_tsv_to_predictions, read_published_tsv
from argassets.political.published_index import argument_published_rows
from argassets.political.scope import PoliticalScope
from argassets.political.score_parsing import ParsedScore, parse_score

#: The tables ``political_predictions`` reads (the published index for published files only).
JUDGING_INPUTS = ("political_prompts", "political_study_items", "political_published_index")

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


def judging_requests(entry: ModelEntry, scope: PoliticalScope, inputs: Inputs) -> RequestSet:
    """What ``political_predictions`` asks ``entry``: one request per in-scope argument."""
    prompts = scope_arguments(
        inputs["political_prompts"], study_first(inputs["political_study_items"]), scope.max_arguments
    )
    requests = build_requests(prompts)
    return RequestSet(
        requests,
        summary=f"{len(requests)} arguments",
        metadata={"repetitions": N_REPETITIONS, "arguments_in_scope": len(prompts)},
    )


#: The study's own columns of ``political_predictions``; the platform adds the provenance columns after them.
PREDICTION_ROW_COLUMNS: tuple[str, ...] = (
    "judge_model",
    "argument_id",
    "published_index",
    "repetition",
    "raw_output",
    "score",
    "is_na",
    "is_valid",
)
PREDICTION_COLUMNS: tuple[str, ...] = PREDICTION_ROW_COLUMNS + PROVENANCE_COLUMNS


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The study's columns in fixed types, so that every partition writes the same DuckDB schema (index kept)."""
    out = frame.copy()
    for column in ("judge_model", "argument_id", "raw_output"):
        # pandas' string dtype maps to VARCHAR even when a partition is empty or all null
        out[column] = out[column].astype("string")
    out["published_index"] = pd.array(out["published_index"].tolist(), dtype="Int64")
    out["repetition"] = out["repetition"].astype("int64")
    out["score"] = out["score"].astype("float64")
    for column in ("is_na", "is_valid"):
        out[column] = out[column].astype(bool)
    return out[list(PREDICTION_ROW_COLUMNS)]


def prediction_table(asked: RequestSet, completions: Sequence[CachedCompletion], judge_model: str) -> pd.DataFrame:
    """The study's columns of ``political_predictions`` rows from judged completions (one per argument
    and repetition), sorted by argument and repetition, each labelled by its completion's position.

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
        },
        columns=list(PREDICTION_ROW_COLUMNS),
    )
    return _typed(frame.sort_values(["argument_id", "repetition"], kind="stable"))


def prediction_metadata(table: pd.DataFrame) -> dict[str, Any]:
    """What Study B adds to a judged partition's metadata: its scores and NA answers."""
    return {"scores": int((table["is_valid"] & ~table["is_na"]).sum()), "na": int(table["is_na"].sum())}


def is_published_tsv(entry: ModelEntry) -> bool:
    """Whether ``entry`` imports the paper's published prediction files (read, not judged)."""
    return published_predictions_file(entry) is not None


def published_predictions(
    entry: ModelEntry, scope: PoliticalScope, inputs: Inputs, data_root: Path | None
) -> tuple[pd.DataFrame, dict[str, Any], list[str]]:
    """The partition of an entry of :func:`is_published_tsv`: its published rows on the KB's
    arguments (through ``political_published_index``), within its scope, their metadata, and the
    run's warnings (published scores outside 0-100)."""
    published_file = published_predictions_file(entry)
    assert published_file is not None, "published_predictions reads entries of is_published_tsv only"
    path = published_file.resolve(data_root)
    published = read_published_tsv(path)
    carried = argument_published_rows(inputs["political_prompts"], inputs["political_published_index"])
    if scope.max_arguments is not None:
        chosen = scope_arguments(carried, study_first(inputs["political_study_items"]), scope.max_arguments)
        carried = carried[carried["argument_id"].isin(set(chosen["argument_id"]))]
    expanded = published_tsv_to_predictions(published, entry.name, N_REPETITIONS, argument_rows=carried)
    scope_text = scope.describe()
    table = published_prediction_table(
        expanded, scope_text if scope_text != "full" else "full (published rows, KB arguments)"
    )
    out_of_range = int((table["raw_output"].str.fullmatch(r"-?\d+") & ~table["is_valid"]).sum())
    metadata = {
        "dagster/row_count": len(table),
        "backend": "import (published_tsv)",
        "file": str(path),
        "published_rows": len(published),
        "arguments": int(table["argument_id"].nunique()),
        "published_rows_carried": int(table["published_index"].nunique()),
        "keys": "KB argument_id, through political_published_index (published_index = the nodeID "
        "of the released row the argument carries: the first row of its prompt text)",
        "na": int(table["is_na"].sum()),
        "invalid": int((~table["is_valid"]).sum()),
        "out_of_range_published_values": out_of_range,
    }
    warnings = [out_of_range_warning(entry.name, path, table)] if out_of_range else []
    return table, metadata, warnings


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

    ``expanded`` comes from :func:`argassets.political.published.published_tsv_to_predictions`.
    The provenance columns say what the published files do not carry: no prompt hash (the
    paper's KB text is not in the files), no latency or timestamps; the sampling columns hold
    the paper's stated protocol (temperature 0, top_p 0.1, seed 123). The platform gives them
    their types (:func:`argassets.platform.judging.study_asset.typed_provenance`).
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
    return _typed(frame).join(frame[list(PROVENANCE_COLUMNS)]).reset_index(drop=True)
