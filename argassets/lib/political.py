"""Study B: political positions of arguments (prompts, score parsing, per-model stats, ensembles).

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

import ast
import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from argassets.lib.judging import PROVENANCE_COLUMNS, ChatRequest, SamplingParams

__all__ = [
    "ENSEMBLES",
    "N_REPETITIONS",
    "PROTOCOL_SAMPLING",
    "SCORE_JSON_SCHEMA",
    "SYSTEM_PROMPT",
    "USER_TEMPLATE",
    "PREDICTION_COLUMNS",
    "EnsembleMember",
    "ParsedScore",
    "build_requests",
    "describe_scope",
    "empty_predictions",
    "political_sampling",
    "prediction_table",
    "published_prediction_table",
    "scope_arguments",
    "ensemble_membership",
    "members_of",
    "model_stats",
    "parse_score",
    "pool_ensemble",
    "prompt_sha256",
    "render_prompt",
    "render_prompts",
    "scores_from_json",
    "scores_to_json",
    "summarise_scores",
]

#: Repetitions per argument and model (the paper's protocol).
N_REPETITIONS = 5

#: The paper's decoding parameters; a registry entry's ``sampling`` overrides each field.
#: ``max_tokens`` is ours: ``{"Score": 100}`` needs about eight tokens, so 32 leaves room for
#: spacing and code fences without letting a chatty model run on.
PROTOCOL_SAMPLING: dict[str, float | int] = {"temperature": 0.0, "top_p": 0.1, "seed": 123, "max_tokens": 32}

#: System message, verbatim from the paper (including its typographic quotes around NA).
SYSTEM_PROMPT = (
    "You will be provided with the text of a locution and its corresponding propositional content "
    "that forms part of an argument from a UK political debating TV programme.\n"
    "Your task is to decide where does the speaker stand on the 'left' to 'right' wing scale using "
    "the speaker's locution and propositional content?\n"
    "Provide your response as a score between 0 and 100 where 0 means 'Extremely left' and 100 means "
    "'Extremely right'. If the text does not have political content, set the score to \u201cNA\u201d.\n"
    "Output in JSON format using the following template: {'Score' : int}.\n"
    "\n"
    "Do not include any additional context, preamble, or explanation."
)

#: User message template, verbatim from the paper; ``{proposition}`` and ``{locution}`` are the only
#: placeholders (the literal ``{'Score' : int}`` is not one, so :func:`render_prompt` substitutes
#: by name instead of :meth:`str.format`).
USER_TEMPLATE = (
    "Score the speaker's political position between 0 ('Extremely left') and 100 ('Extremely right'), "
    "and 'NA' if there is no political content, using the following locution and proposition.\n"
    "\n"
    "Proposition: '{proposition}'\n"
    "\n"
    "Locution: '{locution}'\n"
    "\n"
    "Do not write an introduction or summary. Output in JSON format using the following template: "
    "{'Score' : int}"
)

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

#: The ensembles of the paper, in report order.
ENSEMBLES: tuple[str, ...] = ("E1", "E2", "E3")


def render_prompt(locution: str, proposition: str) -> tuple[str, str]:
    """The protocol's (system, user) messages for one argument.

    Parameters
    ----------
    locution
        The locution text with the speaker prefix removed.
    proposition
        The propositional content (I-node text).

    Returns
    -------
    tuple of str
        ``(SYSTEM_PROMPT, user message)``.
    """
    if locution is None or proposition is None:
        raise ValueError("render_prompt needs both a locution and a proposition (got None)")
    user = USER_TEMPLATE.replace("{proposition}", str(proposition)).replace("{locution}", str(locution))
    return SYSTEM_PROMPT, user


def prompt_sha256(system: str, user: str) -> str:
    """SHA-256 of the canonical JSON of the chat messages (same rule as the judging library)."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    canonical = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def render_prompts(arguments: pd.DataFrame) -> pd.DataFrame:
    """The protocol prompt for every knowledge-base argument.

    Parameters
    ----------
    arguments
        ``political_kb_arguments`` (needs ``argument_id``, ``locution``, ``proposition``).

    Returns
    -------
    pandas.DataFrame
        ``argument_id``, ``locution``, ``proposition``, ``system``, ``user``, ``prompt_sha256``,
        one row per argument in ``argument_id`` order.

    Raises
    ------
    ValueError
        When a column is missing, an ``argument_id`` repeats, or an argument lacks its text
        (the message names the argument).
    """
    missing = {"argument_id", "locution", "proposition"} - set(arguments.columns)
    if missing:
        raise ValueError(f"political_kb_arguments lacks column(s) {sorted(missing)}")
    duplicated = arguments["argument_id"][arguments["argument_id"].duplicated()]
    if len(duplicated):
        raise ValueError(f"political_kb_arguments: argument_id {duplicated.iloc[0]!r} occurs more than once")
    rows = []
    for argument_id, locution, proposition in zip(
        arguments["argument_id"], arguments["locution"], arguments["proposition"], strict=True
    ):
        if not isinstance(locution, str) or not isinstance(proposition, str):
            raise ValueError(f"political_kb_arguments: argument {argument_id!r} has no locution or proposition text")
        system, user = render_prompt(locution, proposition)
        rows.append((str(argument_id), locution, proposition, system, user, prompt_sha256(system, user)))
    frame = pd.DataFrame(rows, columns=["argument_id", "locution", "proposition", "system", "user", "prompt_sha256"])
    return frame.sort_values("argument_id", kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------------------------
# Parsing


@dataclass(frozen=True)
class ParsedScore:
    """One parsed answer: a score 0-100, NA, or invalid (see the module docstring)."""

    score: float | None
    is_na: bool
    is_valid: bool

    @classmethod
    def invalid(cls) -> ParsedScore:
        return cls(score=None, is_na=False, is_valid=False)

    @classmethod
    def na(cls) -> ParsedScore:
        return cls(score=None, is_na=True, is_valid=True)

    @classmethod
    def of(cls, value: int) -> ParsedScore:
        return cls(score=float(value), is_na=False, is_valid=True)


_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)
_OBJECT = re.compile(r"\{[^{}]*\}")
_INTEGER = re.compile(r"^[+]?\d+$")


def _value_to_parsed(value: object) -> ParsedScore:
    """A ``Score`` value: an integer 0-100 (int, integral float, or digit string), or ``"NA"``."""
    if isinstance(value, bool) or value is None:
        return ParsedScore.invalid()
    if isinstance(value, int):
        return ParsedScore.of(value) if 0 <= value <= 100 else ParsedScore.invalid()
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and 0 <= value <= 100:
            return ParsedScore.of(int(value))
        return ParsedScore.invalid()
    if isinstance(value, str):
        text = value.strip().strip("\"'\u201c\u201d\u2018\u2019").strip()
        if text.upper() == "NA":
            return ParsedScore.na()
        if _INTEGER.match(text):
            number = int(text)
            return ParsedScore.of(number) if 0 <= number <= 100 else ParsedScore.invalid()
    return ParsedScore.invalid()


def _object_to_parsed(text: str) -> ParsedScore | None:
    """Parse a JSON (or Python-literal, as in the prompt's template) object with a ``Score`` key."""
    value: object
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(value, dict):
        return None
    keys = [key for key in value if isinstance(key, str) and key.strip().lower() == "score"]
    if len(keys) != 1:
        return None
    return _value_to_parsed(value[keys[0]])


def parse_score(text: str | None) -> ParsedScore:
    """Parse one model answer into a score 0-100, NA, or invalid.

    Accepted, after stripping whitespace and one Markdown code fence:

    - a JSON object with one ``Score`` key (any case), also in the Python-literal spelling of the
      prompt's own template (``{'Score' : 45}``); its value an integer 0-100 (an integral float
      or a digit string count as that integer) or ``"NA"``;
    - exactly one such object inside other text (a model that adds a preamble);
    - the bare answer itself: ``45`` or ``NA``.

    Everything else is invalid: out-of-range or fractional numbers, several objects, prose,
    empty text, ``N/A`` and other spellings. Invalid answers are never guessed.

    Parameters
    ----------
    text
        The raw model output (``None`` is invalid).

    Returns
    -------
    ParsedScore
    """
    if text is None:
        return ParsedScore.invalid()
    candidate = text.strip()
    fenced = _FENCE.match(candidate)
    if fenced:
        candidate = fenced.group(1).strip()
    if not candidate:
        return ParsedScore.invalid()
    if candidate.startswith("{"):
        parsed = _object_to_parsed(candidate)
        if parsed is not None:
            return parsed
    bare = _value_to_parsed(candidate)
    if bare.is_valid:
        return bare
    objects = [found for found in (_object_to_parsed(m) for m in _OBJECT.findall(candidate)) if found is not None]
    if len(objects) == 1:
        return objects[0]
    return ParsedScore.invalid()


# ----------------------------------------------------------------------------------------------
# Per-argument statistics


def scores_to_json(scores: Iterable[float]) -> str:
    """Valid scores as JSON text (integers written without a decimal point), e.g. ``[40, 50]``."""
    return json.dumps([int(s) if float(s).is_integer() else float(s) for s in scores])


def scores_from_json(text: str) -> list[float]:
    """Inverse of :func:`scores_to_json`; raises ``ValueError`` on anything but a list of numbers."""
    value = json.loads(text)
    if not isinstance(value, list) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise ValueError(f"not a JSON list of numbers: {text[:80]!r}")
    return [float(v) for v in value]


def summarise_scores(scores: Sequence[float]) -> tuple[float, float, float]:
    """Mean, population variance (``ddof = 0``, as published) and standard deviation; NaN when empty."""
    if len(scores) == 0:
        return math.nan, math.nan, math.nan
    values = np.asarray(scores, dtype=float)
    mean = float(values.mean())
    var = float(((values - mean) ** 2).mean())
    return mean, var, math.sqrt(var)


STATS_COLUMNS = [
    "system",
    "argument_id",
    "scores",
    "mean",
    "var",
    "std",
    "na_count",
    "invalid_count",
    "n_repetitions",
    "prob_na",
]


def model_stats(predictions: pd.DataFrame, system_column: str = "judge_model") -> pd.DataFrame:
    """Per argument and model: valid scores, mean, variance, std, NA count, probability of NA.

    Parameters
    ----------
    predictions
        ``political_predictions`` rows (``argument_id``, ``repetition``, ``score``, ``is_na``,
        ``is_valid`` and the model column).
    system_column
        Column naming the model (written to ``system``).

    Returns
    -------
    pandas.DataFrame
        ``system``, ``argument_id``, ``scores`` (JSON list of the valid scores in repetition
        order), ``mean``, ``var`` (population, ``ddof = 0``), ``std``, ``na_count``,
        ``invalid_count``, ``n_repetitions`` (every repetition made, invalid ones included) and
        ``prob_na = na_count / n_repetitions``.
    """
    required = {system_column, "argument_id", "repetition", "score", "is_na", "is_valid"}
    missing = required - set(predictions.columns)
    if missing:
        raise ValueError(f"political_predictions lacks column(s) {sorted(missing)}")
    if predictions.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in STATS_COLUMNS})
    frame = predictions[[system_column, "argument_id", "repetition", "score", "is_na", "is_valid"]].sort_values(
        [system_column, "argument_id", "repetition"], kind="stable"
    )
    keys = [system_column, "argument_id"]
    is_na = frame["is_na"].astype(bool)
    is_valid = frame["is_valid"].astype(bool)
    counts = (
        frame.assign(_na=is_na.astype("int64"), _invalid=(~is_valid).astype("int64"))
        .groupby(keys, sort=True)
        .agg(na_count=("_na", "sum"), invalid_count=("_invalid", "sum"), n_repetitions=("repetition", "size"))
    )
    scored = frame[is_valid & ~is_na]
    values = scored["score"].astype(float)
    grouped = values.groupby([scored[system_column], scored["argument_id"]], sort=True)
    moments = pd.DataFrame({"mean": grouped.mean(), "var": grouped.var(ddof=0), "lists": grouped.agg(list)})
    out = counts.join(moments, how="left").reset_index().rename(columns={system_column: "system"})
    out["scores"] = [scores_to_json(v) if isinstance(v, list) else "[]" for v in out["lists"]]
    out["std"] = np.sqrt(out["var"])
    out["prob_na"] = out["na_count"] / out["n_repetitions"]
    out = out[STATS_COLUMNS]
    return out.astype({"na_count": "int64", "invalid_count": "int64", "n_repetitions": "int64"})


# ----------------------------------------------------------------------------------------------
# Ensembles


@dataclass(frozen=True)
class EnsembleMember:
    """One model's standing in the ensembles and why."""

    system: str
    reasoning: bool
    n_scores: int
    n_na: int
    n_invalid: int
    eligible: bool
    note: str
    in_e1: bool
    in_e2: bool
    in_e3: bool


def ensemble_membership(
    stats: pd.DataFrame,
    reasoning: Mapping[str, bool],
    excluded: Mapping[str, str] | None = None,
) -> list[EnsembleMember]:
    """Which models make up E1, E2 and E3.

    - **E1**: every eligible model.
    - **E2**: eligible models whose registry entry says ``reasoning = true``.
    - **E3**: eligible models whose NA answers outnumber their valid scores over the whole KB
      (``n_na > n_scores``, strictly). The paper's formula prints the inequality the other way
      round; its stated purpose (keep the models able to say NA) and its published ensemble
      follow the rule used here.

    Parameters
    ----------
    stats
        :func:`model_stats` output for the models.
    reasoning
        Registry ``reasoning`` flag per model name (missing names count as ``False``).
    excluded
        Models that are not pooled, with the reason (baselines; imports keyed by another KB).

    Returns
    -------
    list of EnsembleMember
        One per model of ``stats`` and of ``excluded``, sorted by name.
    """
    excluded = dict(excluded or {})
    members = []
    counts: dict[str, tuple[int, int, int]] = {}
    if not stats.empty:
        lengths = stats["scores"].map(lambda text: len(scores_from_json(text)))
        grouped = pd.DataFrame(
            {"system": stats["system"], "n_scores": lengths, "na": stats["na_count"], "invalid": stats["invalid_count"]}
        ).groupby("system")[["n_scores", "na", "invalid"]].sum()
        counts = {name: (int(r.n_scores), int(r.na), int(r.invalid)) for name, r in grouped.iterrows()}
    for name in sorted(set(counts) | set(excluded)):
        n_scores, n_na, n_invalid = counts.get(name, (0, 0, 0))
        flag = bool(reasoning.get(name, False))
        if name in excluded:
            members.append(EnsembleMember(name, flag, n_scores, n_na, n_invalid, False, excluded[name], False, False, False))
            continue
        in_e3 = n_na > n_scores  # E3 rule: NA answers outnumber valid scores over the whole KB
        note = "NA answers outnumber valid scores" if in_e3 else "valid scores at least as many as NA answers"
        members.append(EnsembleMember(name, flag, n_scores, n_na, n_invalid, True, note, True, flag, in_e3))
    return members


def members_of(membership: Sequence[EnsembleMember], ensemble: str) -> list[str]:
    """Names of the members of ``E1``, ``E2`` or ``E3``."""
    attribute = {"E1": "in_e1", "E2": "in_e2", "E3": "in_e3"}.get(ensemble)
    if attribute is None:
        raise ValueError(f"unknown ensemble {ensemble!r} (known: {', '.join(ENSEMBLES)})")
    return [m.system for m in membership if getattr(m, attribute)]


def pool_ensemble(stats: pd.DataFrame, members: Sequence[str], name: str) -> pd.DataFrame:
    """Pool member models into one ensemble system per argument.

    An argument's ensemble array is the concatenation of its members' valid scores (in the order
    of ``members``, then repetition order); NA counts, invalid counts and repetitions add up, and
    ``prob_na = na_count / n_repetitions``. Arguments that no member scored are absent.

    Parameters
    ----------
    stats
        :func:`model_stats` output.
    members
        Model names to pool; an empty list gives an empty table.
    name
        The ensemble's system name (e.g. ``E3``).

    Returns
    -------
    pandas.DataFrame
        Same columns as :func:`model_stats`, plus ``n_members`` (members that scored the argument).
    """
    columns = STATS_COLUMNS + ["n_members"]
    subset = stats[stats["system"].isin(list(members))]
    if subset.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in columns})
    order = {member: position for position, member in enumerate(members)}
    subset = subset.assign(_order=subset["system"].map(order)).sort_values(["argument_id", "_order"], kind="stable")
    rows = []
    for argument_id, group in subset.groupby("argument_id", sort=True):
        scores: list[float] = []
        for text in group["scores"]:
            scores.extend(scores_from_json(text))
        na = int(group["na_count"].sum())
        invalid = int(group["invalid_count"].sum())
        n = int(group["n_repetitions"].sum())
        mean, var, std = summarise_scores(scores)
        rows.append((name, argument_id, scores_to_json(scores), mean, var, std, na, invalid, n, na / n if n else math.nan, len(group)))
    return pd.DataFrame(rows, columns=columns)


# ----------------------------------------------------------------------------------------------
# Predictions table


def political_sampling(entry: Any) -> SamplingParams:
    """Sampling of a judge in Study B: the paper's protocol (temperature 0, top_p 0.1, seed 123),
    each field overridden by the registry entry's ``sampling`` when set."""
    s = entry.sampling
    return SamplingParams(
        temperature=float(PROTOCOL_SAMPLING["temperature"]) if s.temperature is None else float(s.temperature),
        top_p=float(PROTOCOL_SAMPLING["top_p"]) if s.top_p is None else float(s.top_p),
        seed=int(PROTOCOL_SAMPLING["seed"]) if s.seed is None else int(s.seed),
        max_tokens=int(PROTOCOL_SAMPLING["max_tokens"]) if s.max_tokens is None else int(s.max_tokens),
    )


def describe_scope(scope: Any) -> str:
    """The part of a registry ``scope`` that Study B uses: ``max_arguments`` (topics, dimensions,
    strategies and ``max_comparisons`` belong to Study A), or ``full``."""
    return "full" if scope.max_arguments is None else f"max_arguments={scope.max_arguments}"


def scope_arguments(prompts: pd.DataFrame, priority: Sequence[str] = (), max_arguments: int | None = None) -> pd.DataFrame:
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
    completions: Sequence[Any],
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
        :class:`argassets.lib.judging.CachedCompletion` objects (``key`` = argument id,
        ``run`` = repetition).
    """
    parsed = {}
    for c in completions:
        if c.text not in parsed:
            parsed[c.text] = parse_score(c.text)
    answers = [parsed[c.text] for c in completions]
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
        temperature=float(PROTOCOL_SAMPLING["temperature"]),
        top_p=float(PROTOCOL_SAMPLING["top_p"]),
        seed=[int(PROTOCOL_SAMPLING["seed"])] * n,
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
