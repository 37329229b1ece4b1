"""Study A judgments: which prompts a judge answers, the requests it gets, and the tidy result table.

What the study declares for its judging asset (``aq_judgments``, built by the platform): the
requests of an entry (:func:`judging_requests`), the table's own columns (:func:`judgment_table`;
the platform adds the provenance columns) and its label counts (:func:`label_summary_markdown`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from argassets.argument_quality.prompt_axis import PROTOCOL, Presentation, presentation
from argassets.argument_quality.prompts import render_user
from argassets.argument_quality.scope import ArgumentQualityScope
from argassets.platform.judging.choice_parsing import parse_choice
from argassets.platform.judging.interface import PROVENANCE_COLUMNS, CachedCompletion, ChatRequest, SamplingParams
from argassets.platform.judging.label_probabilities import label_distribution
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.reporting.presentation import markdown_table
from argassets.platform.study import Inputs, RequestSet

__all__ = [
    "AQ_JUDGMENT_COLUMNS",
    "AQ_ROW_COLUMNS",
    "adaptive_pairs",
    "JUDGING_INPUTS",
    "LABEL_PROBABILITY_COLUMNS",
    "N_RUNS",
    "build_requests",
    "judging_requests",
    "judgment_table",
    "label_summary_markdown",
    "orders_for",
    "scope_prompts",
]

#: Runs per (comparison, dimension, strategy, order), as in the protocol.
N_RUNS = 3
#: Protocol default sampling for Study A (temperature 1; the seed is the entry's ``seed``); the
#: registry's ``sampling`` overrides each field. 16 tokens hold a bare label and ``{"label": "Tie"}``.
#: ``logprobs`` 20 keeps the label probabilities (OpenAI's ``top_logprobs`` allows at most 20).
AQ_DEFAULT_SAMPLING = SamplingParams(temperature=1.0, top_p=1.0, seed=None, max_tokens=16, logprobs=20)

#: The tables ``aq_judgments`` reads.
JUDGING_INPUTS = ("aq_prompts", "webis_expert_comparisons", "webis_arguments")

#: The study's own columns of ``aq_judgments``; the platform adds the provenance columns after them.
AQ_ROW_COLUMNS: tuple[str, ...] = (
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
)
AQ_JUDGMENT_COLUMNS: tuple[str, ...] = AQ_ROW_COLUMNS + PROVENANCE_COLUMNS
#: The label-probability columns: P(A), P(B), P(Tie) in the comparison's orientation, renormalised
#: over the labels, and their raw mass; null where the backend gave no log-probabilities.
LABEL_PROBABILITY_COLUMNS: tuple[str, ...] = ("p_a", "p_b", "p_tie", "label_mass")


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


def _pair_texts(
    prompts: pd.DataFrame, comparisons: pd.DataFrame, arguments: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray]:
    """The texts of each prompt's arguments A and B, in the comparison's order."""
    key = ["topic_id", "discussion_id", "argument_id"]
    texts = arguments.set_index(key)["text"]
    pairs = comparisons.set_index("comparison_id").loc[
        prompts["comparison_id"], ["topic_id", "discussion_id_a", "argument_id_a", "discussion_id_b", "argument_id_b"]
    ]
    text_a = texts.loc[list(zip(pairs["topic_id"], pairs["discussion_id_a"], pairs["argument_id_a"], strict=True))]
    text_b = texts.loc[list(zip(pairs["topic_id"], pairs["discussion_id_b"], pairs["argument_id_b"], strict=True))]
    return text_a.to_numpy(), text_b.to_numpy()


def _request(prompt: Any, order: str, text_a: str, text_b: str, shown: Presentation) -> ChatRequest:
    """The request of one prompt row in one order, as ``shown`` presents it."""
    where = f"prompt {prompt.prompt_id} ({order})"
    text_a, text_b = shown.texts(text_a, text_b)
    first, second = (text_a, text_b) if order == "ab" else (text_b, text_a)
    user = shown.user(first, second, prompt.dimension, where)
    if user is None:
        user = prompt.user if order == "ab" and shown.padding is None else render_user(first, second)
    return ChatRequest(
        key=f"{prompt.prompt_id}:{order}",
        system=shown.system(prompt.system, prompt.strategy, where),
        user=user,
        choices=shown.options,
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


def build_requests(
    prompts: pd.DataFrame,
    comparisons: pd.DataFrame,
    arguments: pd.DataFrame,
    orders: Sequence[str] = ("ab",),
    shown: Presentation = PROTOCOL,
) -> tuple[list[ChatRequest], pd.DataFrame]:
    """Chat requests for the given prompts in each presentation order.

    ``ab`` uses the prompt row as rendered in ``aq_prompts``; ``ba`` keeps its system message and
    swaps the two texts in the user message. ``shown`` (a prompt variant, a perturbation;
    :mod:`argassets.argument_quality.prompt_axis`) rewrites the messages. Each request's ``context``
    carries the item ids and the two texts as presented (``text_a``, ``text_b``), which baselines read.

    Returns
    -------
    (list of ChatRequest, pandas.DataFrame)
        The requests (key ``<prompt_id>:<order>``) and one row of item ids per request, aligned, with
        the answer ``options`` as presented (``A|B|Tie`` unless renamed).
    """
    for order in orders:
        if order not in ("ab", "ba"):
            raise ValueError(f"unknown order {order!r}")
    text_a, text_b = _pair_texts(prompts, comparisons, arguments)
    requests: list[ChatRequest] = []
    rows = []
    options = "|".join(shown.options)
    for order in orders:
        for i, prompt in enumerate(prompts.itertuples(index=False)):
            request = _request(prompt, order, str(text_a[i]), str(text_b[i]), shown)
            requests.append(request)
            rows.append(
                (
                    request.key,
                    prompt.comparison_id,
                    prompt.dimension,
                    prompt.strategy,
                    int(prompt.topic_id),
                    order,
                    options,
                )
            )
    columns = ["key", "comparison_id", "dimension", "strategy", "topic_id", "order", "options"]
    return requests, pd.DataFrame(rows, columns=columns)


def judging_requests(entry: ModelEntry, scope: ArgumentQualityScope, inputs: Inputs) -> RequestSet:
    """What ``aq_judgments`` asks ``entry``: every in-scope prompt in each of its orders."""
    orders = orders_for(entry)
    prompts = scope_prompts(inputs["aq_prompts"], scope)
    shown = presentation(scope.prompt_variant, scope.perturbation)
    comparisons, arguments = inputs["webis_expert_comparisons"], inputs["webis_arguments"]
    requests, items = build_requests(prompts, comparisons, arguments, orders, shown)
    axis = {"prompt_variant": scope.prompt_variant or "protocol", "perturbation": scope.perturbation or "none"}
    return RequestSet(
        requests,
        items=items,
        summary=f"{len(prompts)} prompts, orders {', '.join(orders)}, {axis['prompt_variant']}, {axis['perturbation']}",
        metadata={"orders": ", ".join(orders), "runs": N_RUNS, "prompts_in_scope": len(prompts), **axis},
    )


def adaptive_pairs(asked: RequestSet, inputs: Inputs) -> pd.DataFrame:
    """Study A's pairwise design for adaptive judging: a cell per dimension and strategy, the
    comparison as the pair (both orders judged together), BT per topic, arguments as items."""
    comparisons = inputs["webis_expert_comparisons"].drop_duplicates("comparison_id").set_index("comparison_id")
    items = asked.items
    sides = comparisons.loc[items["comparison_id"]]

    def argument(side: str) -> np.ndarray:
        return (sides[f"discussion_id_{side}"].astype(str) + "/" + sides[f"argument_id_{side}"].astype(str)).to_numpy()

    return pd.DataFrame(
        {
            "key": items["key"].to_numpy(),
            "cell": (items["dimension"].astype(str) + "/" + items["strategy"].astype(str)).to_numpy(),
            "pair_id": items["comparison_id"].to_numpy(),
            "group": items["topic_id"].to_numpy(),
            "item_a": argument("a"),
            "item_b": argument("b"),
        }
    )


def label_summary_markdown(table: pd.DataFrame) -> str:
    """Label counts (oriented to the comparison) per strategy, dimension and order, as Markdown."""
    if table.empty:
        return "_no judgments in this partition_"
    counts = (
        table.assign(outcome=table["label"].fillna("invalid"))
        .groupby(["strategy", "dimension", "order", "outcome"])
        .size()
        .unstack(fill_value=0)
    )
    outcomes = [c for c in ("A", "B", "Tie", "invalid") if c in counts.columns]
    summary = counts[outcomes].astype(int)
    share = summary.get("invalid", pd.Series(0, index=summary.index)) / summary.sum(axis=1)
    summary = summary.assign(**{"invalid share": share.map("{:.2%}".format)}).reset_index()
    return markdown_table(summary, max_rows=max(len(summary), 1))


#: A verdict seen in the swapped order (``ba``), mapped back to the comparison's orientation.
_SWAP = {"A": "B", "B": "A", "Tie": "Tie"}


def _completions_frame(completions: Sequence[CachedCompletion], options: Sequence[tuple[str, ...]]) -> pd.DataFrame:
    """One row per completion, with the columns the judgments table takes from it."""
    return pd.DataFrame(
        {
            "key": pd.Series([c.key for c in completions], dtype="object"),
            "run": pd.Series([int(c.run) for c in completions], dtype="int64"),
            "raw_output": pd.Series([c.text for c in completions], dtype="object"),
            "answered": pd.Series([c.answered for c in completions], dtype="bool"),
        }
    ).join(_label_probability_frame(completions, options))


def _label_probability_frame(
    completions: Sequence[CachedCompletion], options: Sequence[tuple[str, ...]]
) -> pd.DataFrame:
    """P(A), P(B), P(Tie) as presented (renormalised) and the label mass, NaN without probabilities.

    ``options[i]`` are the labels completion ``i`` was offered, in the order (first, second, tie).
    """
    values = np.full((len(completions), 4), np.nan)
    for row, (completion, offered) in enumerate(zip(completions, options, strict=True)):
        distribution = label_distribution(completion.label_probs, offered)
        if distribution is not None:
            values[row, :3] = distribution.probabilities
            values[row, 3] = distribution.mass
    return pd.DataFrame(values, columns=list(LABEL_PROBABILITY_COLUMNS))


def _presented_labels(texts: Sequence[str], options: Sequence[tuple[str, ...]]) -> list[str | None]:
    """Each text parsed among its offered options and named by the protocol's label (``1`` -> ``A``)."""
    parsed: dict[tuple[str, tuple[str, ...]], str | None] = {}
    labels = []
    for text, offered in zip(texts, options, strict=True):
        if (text, offered) not in parsed:
            choice = parse_choice(text, offered)
            parsed[(text, offered)] = None if choice is None else LABELS[offered.index(choice)]
        labels.append(parsed[(text, offered)])
    return labels


def judgment_table(asked: RequestSet, completions: Sequence[CachedCompletion], judge_model: str) -> pd.DataFrame:
    """Study A's columns of the ``aq_judgments`` rows of one partition: one per (item, run), labels
    parsed and oriented, in completion order (the platform adds the provenance columns).

    Parameters
    ----------
    asked
        From :func:`judging_requests` (``items``: one row per request key, from :func:`build_requests`).
    completions
        From :func:`argassets.platform.judging.incremental.judge_incrementally` (one per request key and run).
    """
    items = asked.items.astype({"key": object})
    if "options" not in items.columns:
        items = items.assign(options="|".join(LABELS))
    offered_by_key = dict(zip(items["key"], items["options"].str.split("|").map(tuple), strict=True))
    options = [offered_by_key.get(c.key, LABELS) for c in completions]
    frame = _completions_frame(completions, options).merge(
        items[["key", "comparison_id", "dimension", "strategy", "topic_id", "order"]],
        on="key",
        how="left",
        validate="many_to_one",
    )
    if frame["comparison_id"].isna().any():
        unknown = frame.loc[frame["comparison_id"].isna(), "key"].iat[0]
        raise ValueError(f"completion for unknown request key {unknown!r}")
    # A non-answer stays invalid even when what came back happens to parse (e.g. a bare body "A").
    presented = pd.Series(_presented_labels(frame["raw_output"].tolist(), options), index=frame.index, dtype=object)
    frame["presented_label"] = presented.where(frame["answered"], None)
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
    return _with_table_types(frame)[list(AQ_ROW_COLUMNS)]


def _with_table_types(frame: pd.DataFrame) -> pd.DataFrame:
    """The column types of Study A's own columns of ``aq_judgments`` (object text columns)."""
    frame["judge_model"] = frame["judge_model"].astype(object)
    for name in ("topic_id", "run"):
        frame[name] = frame[name].astype("int64")
    for name in LABEL_PROBABILITY_COLUMNS:
        frame[name] = frame[name].astype("float64")
    frame["is_valid"] = frame["is_valid"].astype(bool)
    for name in ("comparison_id", "dimension", "strategy", "order", "raw_output", "presented_label", "label"):
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
