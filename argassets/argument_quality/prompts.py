"""Study A prompts: the published zero-shot, few-shot and chain-of-thought chat texts, verbatim.

The texts reproduce the protocol in ``shared/specs/argument-quality.md`` byte for byte (including
its spellings, and the lowercase ``tie`` that ends the few-shot examples). ``{a}`` and ``{b}`` are the
two argument texts in the order of the comparison row; a swapped presentation (``order = "ba"``)
is rendered by :func:`render_user` with the texts exchanged and the same system message.

Few-shot examples are chosen per topic and dimension from the expert data
(:func:`select_few_shot_examples`) and are the same for every comparison of that topic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from argassets.platform.judging.interface import messages_sha256

__all__ = [
    "COT_CRITERIA",
    "DIMENSION_ADVERBS",
    "PromptError",
    "STRATEGIES",
    "USER_TEMPLATE",
    "cot_system",
    "few_system",
    "render_prompts",
    "render_user",
    "select_few_shot_examples",
    "system_message",
    "zero_system",
]

STRATEGIES: tuple[str, ...] = ("zero", "few", "cot")
DIMENSIONS: tuple[str, ...] = ("logic", "rhetoric", "dialectic")
DIMENSION_ADVERBS: dict[str, str] = {
    "logic": "logically",
    "rhetoric": "rhetorically",
    "dialectic": "dialectically",
}

_ZERO_SYSTEM = (
    "You are given two arguments: Argument A and Argument B. Decide which one is {dim_adverb} stronger: "
    "Reply with only one of the following options: A, B, or Tie."
)
_COT_SYSTEM = (
    "You are given two arguments: Argument A and Argument B.\n"
    "Decide which one is {dim_adverb} stronger considering these criteria:\n"
    "{dim_criterias}\n"
    "Let's think step by step and reply with only one of the following options: A, B, or Tie."
)
#: The protocol's user message (the "appendix" prompt variant has its bytes).
USER_TEMPLATE = "Argument A: {a}\nArgument B: {b}"

#: Criteria of the chain-of-thought prompt, verbatim from the protocol (spelling included).
COT_CRITERIA: dict[str, tuple[str, ...]] = {
    "logic": (
        "- which is more acceptable? A premise of an argument is acceptable if it is rationally worthy of being believed to be true.",
        "- which is more relevant to a conclusion? A premise of an argument is relevant if it contributes to the acceptance or rejection of the argument's conclusion.",
        "- which is more sufficient to justify a conclusion? An argument's premises are sufficient if, together, they give enough support to make it rational to draw its conclusion.",
    ),
    "dialectic": (
        "- which would be acceptable to the audience? Argumentation is acceptable if the target audience accepts both the consideration of the stated arguments for the issue and the way they are stated.",
        "- which contributes more to constructive dialogue? Argumentation is relevant if it contributes to the issue's resolution, i.e., if it states arguments or other information that help to arrive at an ultimate conclusion.",
        "- which better anticipates or refutes counterarguments? Argumentation is sufficient if it adequately rebuts those counterarguments to it that can be anticipated.",
    ),
    "rhetoric": (
        "- which appears more authorative/trust worthy? Argumentation creates credibility if it conveys arguments and similar in a way that makes the author worthy of credence.",
        "- which makes a stronger emotional appeal? Argumentation makes a successful emotional appeal if it creates emotions in a way that makes the target audience more open to the author's arguments.",
        "- which has a clearer style? Argumentation has a clear style if it uses correct and widely unambiguous language as well as if it avoids unnecessary complexity and deviation from the issue.",
        "- which has a more appropiate style? Argumentation has an appropriate style if the used language supports the creation of credibility and emotions as well as if it is proportional to the issue.",
        "- Which is better arranged? Argumentation is arranged properly if it presents the issue, the arguments, and its conclusion in the right order.",
    ),
}

#: Few-shot slots in prompt order, with the answer line each example ends with.
FEW_SHOT_SLOTS: tuple[tuple[str, str], ...] = (("A", "A"), ("B", "B"), ("Tie", "tie"))


class PromptError(ValueError):
    """Prompts that cannot be rendered (e.g. a topic without a usable few-shot example)."""


def _check_dimension(dimension: str) -> None:
    if dimension not in DIMENSION_ADVERBS:
        raise PromptError(f"unknown dimension {dimension!r}; expected one of {DIMENSIONS}")


def render_user(text_a: str, text_b: str) -> str:
    """The user message: ``Argument A: {a}`` and ``Argument B: {b}`` on two lines."""
    return USER_TEMPLATE.format(a=text_a, b=text_b)


def zero_system(dimension: str) -> str:
    """The zero-shot system message of a dimension."""
    _check_dimension(dimension)
    return _ZERO_SYSTEM.format(dim_adverb=DIMENSION_ADVERBS[dimension])


def cot_system(dimension: str) -> str:
    """The chain-of-thought system message of a dimension (criteria one per line)."""
    _check_dimension(dimension)
    return _COT_SYSTEM.format(dim_adverb=DIMENSION_ADVERBS[dimension], dim_criterias="\n".join(COT_CRITERIA[dimension]))


def few_system(dimension: str, examples: Sequence[tuple[str, str]]) -> str:
    """The few-shot system message: zero-shot text, a blank line, then the three examples.

    Parameters
    ----------
    dimension
        ``logic``, ``rhetoric`` or ``dialectic``.
    examples
        ``(text_a, text_b)`` of the "A", "B" and "Tie" examples, in that order.
    """
    if len(examples) != len(FEW_SHOT_SLOTS):
        raise PromptError(f"few-shot needs {len(FEW_SHOT_SLOTS)} examples, got {len(examples)}")
    blocks = [f"{render_user(a, b)}\n{answer}" for (a, b), (_, answer) in zip(examples, FEW_SHOT_SLOTS, strict=True)]
    return zero_system(dimension) + "\n\nExamples:\n" + "\n\n".join(blocks)


def system_message(strategy: str, dimension: str, examples: Sequence[tuple[str, str]] | None = None) -> str:
    """The system message of a strategy (``examples`` only for ``few``)."""
    if strategy == "zero":
        return zero_system(dimension)
    if strategy == "cot":
        return cot_system(dimension)
    if strategy == "few":
        if examples is None:
            raise PromptError("the few-shot strategy needs examples")
        return few_system(dimension, examples)
    raise PromptError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")


def _with_texts_and_scores(comparisons: pd.DataFrame, arguments: pd.DataFrame) -> pd.DataFrame:
    """Comparisons joined with both arguments' text and the published score of their dimension."""
    key = ["topic_id", "discussion_id", "argument_id"]
    scores = arguments[key + ["text", "published_logic", "published_rhetoric", "published_dialectic"]]
    frame = comparisons
    for side in ("a", "b"):
        renamed = scores.rename(
            columns={
                "discussion_id": f"discussion_id_{side}",
                "argument_id": f"argument_id_{side}",
                "text": f"text_{side}",
                "published_logic": f"logic_{side}",
                "published_rhetoric": f"rhetoric_{side}",
                "published_dialectic": f"dialectic_{side}",
            }
        )
        frame = frame.merge(
            renamed,
            on=["topic_id", f"discussion_id_{side}", f"argument_id_{side}"],
            how="left",
            validate="many_to_one",
        )
    missing = frame["text_a"].isna() | frame["text_b"].isna()
    if missing.any():
        row = frame[missing].iloc[0]
        raise PromptError(
            f"comparison {row.comparison_id}: an argument is not in webis_arguments for topic {row.topic_id}"
        )
    dims = frame["dimension"].to_numpy()
    score_a = np.select([dims == d for d in DIMENSIONS], [frame[f"{d}_a"] for d in DIMENSIONS], np.nan)
    score_b = np.select([dims == d for d in DIMENSIONS], [frame[f"{d}_b"] for d in DIMENSIONS], np.nan)
    frame = frame.assign(score_a=score_a, score_b=score_b)
    return frame.drop(columns=[f"{d}_{s}" for d in DIMENSIONS for s in ("a", "b")])


#: Columns of :func:`select_few_shot_examples`.
FEW_SHOT_COLUMNS = [
    "topic_id",
    "dimension",
    "shot",
    "comparison_id",
    "text_a",
    "text_b",
    "score_a",
    "score_b",
    "score_difference",
    "label",
]


def _require_every_slot(examples: pd.DataFrame, expected: pd.DataFrame) -> None:
    """Every (topic, dimension) of ``expected`` has an example for every few-shot slot."""
    for _, row in expected.iterrows():
        have = set(
            examples.loc[(examples["topic_id"] == row.topic_id) & (examples["dimension"] == row.dimension), "shot"]
        )
        for shot, _ in FEW_SHOT_SLOTS:
            if shot not in have:
                raise PromptError(
                    f"topic {row.topic_id}, dimension {row.dimension}: no comparison qualifies as the "
                    f"'{shot}' few-shot example"
                )


def select_few_shot_examples(comparisons: pd.DataFrame, arguments: pd.DataFrame) -> pd.DataFrame:
    """The three few-shot examples of every topic and dimension, from the expert data.

    Per topic and dimension, with ``d = score_a - score_b`` the difference of the published expert
    z-scores of the comparison's two arguments:

    - the "A" example maximises ``d`` among comparisons with ``d > 0``;
    - the "B" example maximises ``-d`` among comparisons with ``d < 0``;
    - the "Tie" example minimises ``|d|`` among comparisons the experts labelled Tie.

    Equal candidates are broken by the lowest ``source_row`` (file order), so the choice is
    deterministic.

    Returns
    -------
    pandas.DataFrame
        One row per (topic_id, dimension, shot) with ``shot`` in {A, B, Tie}, the example's
        ``comparison_id``, ``text_a``, ``text_b``, ``score_a``, ``score_b``, ``score_difference``
        (``score_a - score_b``) and the expert ``label``.

    Raises
    ------
    PromptError
        When a topic and dimension has no candidate for a slot.
    """
    frame = _with_texts_and_scores(comparisons, arguments)
    frame = frame.assign(score_difference=frame["score_a"] - frame["score_b"])
    frame = frame.sort_values(["topic_id", "dimension", "source_row"], kind="stable")
    candidates = {
        "A": (frame[frame["score_difference"] > 0], -frame["score_difference"]),
        "B": (frame[frame["score_difference"] < 0], frame["score_difference"]),
        "Tie": (frame[frame["label"] == "Tie"], frame["score_difference"].abs()),
    }
    picked = []
    for shot, (subset, order) in candidates.items():
        ranked = subset.assign(_order=order.loc[subset.index])
        ranked = ranked.sort_values(["topic_id", "dimension", "_order", "source_row"], kind="stable")
        best = ranked.groupby(["topic_id", "dimension"], sort=True).head(1)
        picked.append(best.assign(shot=shot))
    examples = pd.concat(picked, ignore_index=True)
    _require_every_slot(examples, frame[["topic_id", "dimension"]].drop_duplicates())
    columns = FEW_SHOT_COLUMNS
    shot_rank = {shot: i for i, (shot, _) in enumerate(FEW_SHOT_SLOTS)}
    examples = examples.assign(_rank=examples["shot"].map(shot_rank))
    examples = examples.sort_values(["dimension", "topic_id", "_rank"], kind="stable")
    return examples[columns].reset_index(drop=True)


def _few_shot_systems(examples: pd.DataFrame) -> dict[tuple[int, str], str]:
    """The few-shot system message of every (topic, dimension) of ``examples``."""
    few: dict[tuple[int, str], str] = {}
    for (topic, dimension), group in examples.groupby(["topic_id", "dimension"], sort=False):
        ordered = group.set_index("shot").loc[[shot for shot, _ in FEW_SHOT_SLOTS]]
        few[(int(topic), str(dimension))] = few_system(
            str(dimension), list(zip(ordered["text_a"], ordered["text_b"], strict=True))
        )
    return few


def _system_messages(frame: pd.DataFrame, strategy: str, few: dict[tuple[int, str], str]) -> list[str]:
    """The system message of every comparison of ``frame`` under ``strategy``."""
    if strategy != "few":
        by_dimension = {d: system_message(strategy, d) for d in DIMENSIONS}
        return [by_dimension[d] for d in frame["dimension"]]
    systems = []
    for topic, dimension in zip(frame["topic_id"], frame["dimension"], strict=True):
        key = (int(topic), str(dimension))
        if key not in few:
            raise PromptError(f"topic {topic}, dimension {dimension}: no few-shot examples")
        systems.append(few[key])
    return systems


def render_prompts(
    comparisons: pd.DataFrame,
    arguments: pd.DataFrame,
    strategies: Sequence[str] = STRATEGIES,
    examples: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every (comparison, strategy) chat request of Study A.

    Parameters
    ----------
    comparisons
        The ``webis_expert_comparisons`` table (or part of it).
    arguments
        The ``webis_arguments`` table.
    strategies
        Strategies to render, default all three.
    examples
        Few-shot examples (:func:`select_few_shot_examples`); selected from ``comparisons`` when
        omitted, so pass them when rendering a subset.

    Returns
    -------
    pandas.DataFrame
        The ``aq_prompts`` table: ``prompt_id`` (``<comparison_id>:<strategy>``), ``comparison_id``,
        ``dimension``, ``strategy``, ``topic_id``, ``system``, ``user``, ``prompt_sha256``; ordered
        by strategy, dimension, topic, then comparison id.
    """
    for strategy in strategies:
        if strategy not in STRATEGIES:
            raise PromptError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    frame = _with_texts_and_scores(comparisons, arguments)
    users = [render_user(a, b) for a, b in zip(frame["text_a"], frame["text_b"], strict=True)]
    few: dict[tuple[int, str], str] = {}
    if "few" in strategies:
        few = _few_shot_systems(select_few_shot_examples(comparisons, arguments) if examples is None else examples)
    parts = []
    for strategy in strategies:
        systems = _system_messages(frame, strategy, few)
        parts.append(
            pd.DataFrame(
                {
                    "prompt_id": frame["comparison_id"] + ":" + strategy,
                    "comparison_id": frame["comparison_id"].to_numpy(),
                    "dimension": frame["dimension"].to_numpy(),
                    "strategy": strategy,
                    "topic_id": frame["topic_id"].to_numpy(),
                    "system": systems,
                    "user": users,
                }
            )
        )
    prompts = pd.concat(parts, ignore_index=True)
    prompts["prompt_sha256"] = [messages_sha256(s, u) for s, u in zip(prompts["system"], prompts["user"], strict=True)]
    return _in_table_order(prompts)


def _in_table_order(prompts: pd.DataFrame) -> pd.DataFrame:
    """Ordered by strategy, dimension (in their declared orders), topic, then comparison id."""
    strategy_rank = prompts["strategy"].map({s: i for i, s in enumerate(STRATEGIES)})
    dimension_rank = prompts["dimension"].map({d: i for i, d in enumerate(DIMENSIONS)})
    prompts = (
        prompts.assign(_s=strategy_rank, _d=dimension_rank)
        .sort_values(["_s", "_d", "topic_id", "comparison_id"], kind="stable")
        .drop(columns=["_s", "_d"])
        .reset_index(drop=True)
    )
    return prompts
