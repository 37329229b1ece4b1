"""Study A judgments: which prompts a judge answers, the requests it gets, and the tidy result table."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from argassets.argument_quality.prompts import render_user
from argassets.argument_quality.scope import ArgumentQualityScope
from argassets.platform.judging.choice_parsing import parse_choice
from argassets.platform.judging.interface import PROVENANCE_COLUMNS, CachedCompletion, ChatRequest, SamplingParams
from argassets.platform.judging.label_probabilities import label_distribution
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.registry.model_entry import ModelEntry

__all__ = [
    "AQ_JUDGMENT_COLUMNS",
    "LABEL_PROBABILITY_COLUMNS",
    "N_RUNS",
    "aq_sampling",
    "build_requests",
    "judgment_table",
    "orders_for",
    "scope_prompts",
]

#: Runs per (comparison, dimension, strategy, order), as in the protocol.
N_RUNS = 3
#: Protocol default sampling for Study A (temperature 1; the seed is the entry's ``seed``); the
#: registry's ``sampling`` overrides each field. 16 tokens hold a bare label and ``{"label": "Tie"}``.
#: ``logprobs`` 20 keeps the label probabilities (OpenAI's ``top_logprobs`` allows at most 20).
AQ_DEFAULT_SAMPLING = SamplingParams(temperature=1.0, top_p=1.0, seed=None, max_tokens=16, logprobs=20)

AQ_JUDGMENT_COLUMNS: tuple[str, ...] = (
    "judge_model",
    "comparison_id",
    "dimension",
    "strategy",
    "topic_id",
    "order",
    "run",
    "raw_output",
    "presented_label",
    "label",
    "is_valid",
    "p_a",
    "p_b",
    "p_tie",
    "label_mass",
) + PROVENANCE_COLUMNS
#: The label-probability columns: P(A), P(B), P(Tie) in the comparison's orientation, renormalised
#: over the labels, and their raw mass; null where the backend gave no log-probabilities.
LABEL_PROBABILITY_COLUMNS: tuple[str, ...] = ("p_a", "p_b", "p_tie", "label_mass")


def aq_sampling(entry: ModelEntry) -> SamplingParams:
    """Sampling of a judge in Study A: protocol defaults overridden by the registry entry.

    The base seed is ``sampling.seed`` when set, else the entry's ``seed``.
    """
    return entry.sampling_for(AQ_DEFAULT_SAMPLING)


def orders_for(entry: ModelEntry) -> tuple[str, ...]:
    """``("ab",)``, plus ``"ba"`` (A and B swapped) for judges checked for position bias."""
    return ("ab", "ba") if entry.position_bias else ("ab",)


def scope_prompts(prompts: pd.DataFrame, scope: ArgumentQualityScope) -> pd.DataFrame:
    """The prompts a scoped judge answers.

    Filters by ``topics``, ``dimensions`` and ``strategies``; ``max_comparisons`` then keeps, per
    dimension, the first N comparisons of the filtered set by ``comparison_id`` (= file order), the
    same comparisons for every strategy.
    """
    keep = np.ones(len(prompts), dtype=bool)
    if scope.topics is not None:
        keep &= prompts["topic_id"].isin(scope.topics).to_numpy()
    if scope.dimensions is not None:
        keep &= prompts["dimension"].isin(scope.dimensions).to_numpy()
    if scope.strategies is not None:
        keep &= prompts["strategy"].isin(scope.strategies).to_numpy()
    scoped = prompts[keep]
    if scope.max_comparisons is not None:
        chosen = (
            scoped[["dimension", "comparison_id"]]
            .drop_duplicates()
            .sort_values(["dimension", "comparison_id"])
            .groupby("dimension", sort=False)
            .head(scope.max_comparisons)["comparison_id"]
        )
        scoped = scoped[scoped["comparison_id"].isin(set(chosen))]
    return scoped.reset_index(drop=True)


def build_requests(
    prompts: pd.DataFrame,
    comparisons: pd.DataFrame,
    arguments: pd.DataFrame,
    orders: Sequence[str] = ("ab",),
) -> tuple[list[ChatRequest], pd.DataFrame]:
    """Chat requests for the given prompts in each presentation order.

    ``ab`` uses the prompt row as rendered in ``aq_prompts``; ``ba`` keeps its system message and
    swaps the two texts in the user message. Each request's ``context`` carries the item ids and
    the two texts as presented (``text_a``, ``text_b``), which baselines read.

    Returns
    -------
    (list of ChatRequest, pandas.DataFrame)
        The requests (key ``<prompt_id>:<order>``) and one row of item ids per request, aligned.
    """
    for order in orders:
        if order not in ("ab", "ba"):
            raise ValueError(f"unknown order {order!r}")
    key = ["topic_id", "discussion_id", "argument_id"]
    texts = arguments.set_index(key)["text"]
    pairs = comparisons.set_index("comparison_id").loc[
        prompts["comparison_id"], ["topic_id", "discussion_id_a", "argument_id_a", "discussion_id_b", "argument_id_b"]
    ]
    text_a = texts.loc[
        list(zip(pairs["topic_id"], pairs["discussion_id_a"], pairs["argument_id_a"], strict=True))
    ].to_numpy()
    text_b = texts.loc[
        list(zip(pairs["topic_id"], pairs["discussion_id_b"], pairs["argument_id_b"], strict=True))
    ].to_numpy()
    requests: list[ChatRequest] = []
    rows = []
    for order in orders:
        for i, prompt in enumerate(prompts.itertuples(index=False)):
            first, second = (text_a[i], text_b[i]) if order == "ab" else (text_b[i], text_a[i])
            user = prompt.user if order == "ab" else render_user(first, second)
            request = ChatRequest(
                key=f"{prompt.prompt_id}:{order}",
                system=prompt.system,
                user=user,
                choices=LABELS,
                context={
                    "comparison_id": prompt.comparison_id,
                    "dimension": prompt.dimension,
                    "strategy": prompt.strategy,
                    "order": order,
                    "topic_id": int(prompt.topic_id),
                    "text_a": first,
                    "text_b": second,
                },
            )
            requests.append(request)
            rows.append(
                (request.key, prompt.comparison_id, prompt.dimension, prompt.strategy, int(prompt.topic_id), order)
            )
    items = pd.DataFrame(rows, columns=["key", "comparison_id", "dimension", "strategy", "topic_id", "order"])
    return requests, items


#: A verdict seen in the swapped order (``ba``), mapped back to the comparison's orientation.
_SWAP = {"A": "B", "B": "A", "Tie": "Tie"}


def _completions_frame(completions: Sequence[CachedCompletion]) -> pd.DataFrame:
    """One row per completion, with the columns the judgments table takes from it."""

    def column(values: list, dtype: str) -> pd.Series:
        return pd.Series(values, dtype=dtype)

    return pd.DataFrame(
        {
            "key": column([c.key for c in completions], "object"),
            "run": column([int(c.run) for c in completions], "int64"),
            "raw_output": column([c.text for c in completions], "object"),
            "prompt_sha256": column([c.prompt_sha256 for c in completions], "object"),
            "seed": column([c.seed for c in completions], "Int64"),
            "sampling_key": column([c.sampling_key for c in completions], "object"),
            "latency_s": column([float(c.latency_s) for c in completions], "float64"),
            "requested_at": column([c.requested_at for c in completions], "object"),
            "completed_at": column([c.completed_at for c in completions], "object"),
            "backend": column([c.backend for c in completions], "object"),
            "answered": column([c.answered for c in completions], "bool"),
        }
    ).join(_label_probability_frame(completions))


def _label_probability_frame(completions: Sequence[CachedCompletion]) -> pd.DataFrame:
    """P(A), P(B), P(Tie) as presented (renormalised) and the label mass, NaN without probabilities."""
    values = np.full((len(completions), 4), np.nan)
    for row, completion in enumerate(completions):
        distribution = label_distribution(completion.label_probs, LABELS)
        if distribution is not None:
            values[row, :3] = distribution.probabilities
            values[row, 3] = distribution.mass
    return pd.DataFrame(values, columns=list(LABEL_PROBABILITY_COLUMNS))


def judgment_table(
    items: pd.DataFrame,
    completions: Sequence[CachedCompletion],
    judge_model: str,
    sampling: SamplingParams,
    backend: str,
    is_baseline: bool,
    scope: str,
) -> pd.DataFrame:
    """The ``aq_judgments`` rows of one partition: one per (item, run), labels parsed and oriented.

    Parameters
    ----------
    items
        From :func:`build_requests` (one row per request key).
    completions
        From :func:`argassets.platform.judging.incremental.judge_incrementally` (one per request key and run).
    """
    parsed: dict[str, str | None] = {}
    for c in completions:
        if c.text not in parsed:
            parsed[c.text] = parse_choice(c.text, LABELS)
    done = _completions_frame(completions)
    items = items.astype({"key": object})
    frame = done.merge(
        items[["key", "comparison_id", "dimension", "strategy", "topic_id", "order"]],
        on="key",
        how="left",
        validate="many_to_one",
    )
    if frame["comparison_id"].isna().any():
        unknown = frame.loc[frame["comparison_id"].isna(), "key"].iat[0]
        raise ValueError(f"completion for unknown request key {unknown!r}")
    # A non-answer stays invalid even when what came back happens to parse (e.g. a bare body "A").
    frame["presented_label"] = frame["raw_output"].map(parsed).astype(object).where(frame["answered"], None)
    frame = frame.drop(columns=["key", "answered"])
    frame["presented_label"] = frame["presented_label"].where(frame["presented_label"].notna(), None)
    swapped = frame["presented_label"].map(_SWAP)
    frame["label"] = np.where(frame["order"] == "ba", swapped, frame["presented_label"])
    frame["label"] = frame["label"].where(pd.notna(frame["label"]), None)
    frame["is_valid"] = frame["presented_label"].notna()
    # Probabilities of the presented labels, oriented as the label is: A and B swap in "ba".
    swapped_order = (frame["order"] == "ba").to_numpy()
    p_a, p_b = frame["p_a"].to_numpy().copy(), frame["p_b"].to_numpy().copy()
    frame["p_a"] = np.where(swapped_order, p_b, p_a)
    frame["p_b"] = np.where(swapped_order, p_a, p_b)
    frame.insert(0, "judge_model", judge_model)
    frame["temperature"] = float(sampling.temperature)
    frame["top_p"] = float(sampling.top_p)
    frame["max_tokens"] = int(sampling.max_tokens)
    frame["is_baseline"] = bool(is_baseline)
    frame["scope"] = scope
    return _with_table_types(frame)[list(AQ_JUDGMENT_COLUMNS)]


def _with_table_types(frame: pd.DataFrame) -> pd.DataFrame:
    """The column types of ``aq_judgments`` (nullable seed, UTC times, object text columns)."""
    frame["judge_model"] = frame["judge_model"].astype(object)
    for name in ("topic_id", "run", "max_tokens"):
        frame[name] = frame[name].astype("int64")
    frame["seed"] = pd.array(frame["seed"], dtype="Int64")
    for name in ("latency_s", *LABEL_PROBABILITY_COLUMNS):
        frame[name] = frame[name].astype("float64")
    frame["is_valid"] = frame["is_valid"].astype(bool)
    frame["is_baseline"] = frame["is_baseline"].astype(bool)
    for name in ("requested_at", "completed_at"):
        frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601")
    for name in (
        "comparison_id",
        "dimension",
        "strategy",
        "order",
        "raw_output",
        "presented_label",
        "label",
        "prompt_sha256",
        "sampling_key",
        "backend",
        "scope",
    ):
        frame[name] = frame[name].astype(object)
    return frame


def expected_items(prompts_in_scope: pd.DataFrame, orders: Sequence[str], n_runs: int = N_RUNS) -> pd.DataFrame:
    """Every (comparison_id, strategy, order, run) a complete partition holds."""
    base = prompts_in_scope[["comparison_id", "dimension", "strategy"]]
    parts = [base.assign(order=order, run=run) for order in orders for run in range(n_runs)]
    if not parts:
        return pd.DataFrame(columns=["comparison_id", "dimension", "strategy", "order", "run"])
    return pd.concat(parts, ignore_index=True)


def completeness(table: pd.DataFrame, expected: pd.DataFrame) -> dict[str, int]:
    """Counts of expected, present, missing, duplicated and unexpected judgment rows."""
    key = ["comparison_id", "dimension", "strategy", "order", "run"]
    have = table[key].astype({"run": "int64"})
    want = expected[key].astype({"run": "int64"})
    duplicated = int(have.duplicated().sum())
    merged = want.merge(have.drop_duplicates(), on=key, how="outer", indicator=True)
    return {
        "expected": len(want),
        "present": int((merged["_merge"] == "both").sum()),
        "missing": int((merged["_merge"] == "left_only").sum()),
        "unexpected": int((merged["_merge"] == "right_only").sum()),
        "duplicated": duplicated,
    }


def label_problems(table: pd.DataFrame) -> dict[str, int]:
    """Rows breaking the label rules: a label outside {A, B, Tie}, or validity that disagrees with it."""
    allowed = set(LABELS)
    label_ok = table["label"].isna() | table["label"].isin(allowed)
    presented_ok = table["presented_label"].isna() | table["presented_label"].isin(allowed)
    valid_matches = table["is_valid"] == table["label"].notna()
    presented_matches = table["presented_label"].notna() == table["label"].notna()
    return {
        "bad_label": int((~label_ok).sum()),
        "bad_presented_label": int((~presented_ok).sum()),
        "validity_mismatch": int((~valid_matches).sum() + (~presented_matches).sum()),
        "invalid": int((~table["is_valid"]).sum()),
    }


def workload(entry: ModelEntry, load: Callable[[str], pd.DataFrame]) -> tuple[list[ChatRequest], int, SamplingParams]:
    """The requests ``aq_judgments`` sends for ``entry``, its runs and sampling (for estimates)."""
    prompts = scope_prompts(load("aq_prompts"), ArgumentQualityScope.of(entry))
    requests, _ = build_requests(prompts, load("webis_expert_comparisons"), load("webis_arguments"), orders_for(entry))
    return requests, N_RUNS, aq_sampling(entry)
