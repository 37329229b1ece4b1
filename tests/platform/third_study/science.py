"""The persuasion study's science: its prompt, scope, requests, table and reports, over the platform.

Plain functions, no Dagster; nothing from the other studies. Votes, Bradley-Terry scores, agreement
and graph components come from the platform's pairwise core under this study's column names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pandas as pd
from pydantic import Field

from argassets.platform.judging.choice_parsing import parse_choice
from argassets.platform.judging.interface import CachedCompletion, ChatRequest, SamplingParams
from argassets.platform.pairwise.agreement import label_agreement
from argassets.platform.pairwise.graphs import components
from argassets.platform.pairwise.labels import LABELS, encode_labels, factorize_columns
from argassets.platform.pairwise.scores import PairColumns, bt_scores
from argassets.platform.pairwise.votes import majority_votes
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.study import Inputs, RequestSet, StudyScope

STUDY_NAME = "persuasion"
N_RUNS = 3
SAMPLING = SamplingParams(temperature=0.7, top_p=1.0, seed=None, max_tokens=8)
SYSTEM = "You compare two arguments on one topic. Answer with one word: A, B or Tie."
USER = "Which argument is more persuasive?\n\nArgument A: {a}\n\nArgument B: {b}"
PAIR = PairColumns(item_a=("text_id_a",), item_b=("text_id_b",), item=("text_id",), stratum="topic_id")


class PersuasionScope(StudyScope):
    """A judge restricted to some topics of the persuasion corpus."""

    study: ClassVar[str] = STUDY_NAME

    topics: list[int] | None = Field(default=None, min_length=1)


def scoped_pairs(pairs: pd.DataFrame, scope: PersuasionScope) -> pd.DataFrame:
    """The pairs a judge with ``scope`` answers."""
    return pairs if scope.topics is None else pairs[pairs["topic_id"].isin(scope.topics)]


def build_requests(pairs: pd.DataFrame, texts: pd.DataFrame) -> list[ChatRequest]:
    """One request per pair, its texts as presented in the context (baselines read them)."""
    text = texts.set_index("text_id")["text"]
    return [
        ChatRequest(
            key=pair.pair_id,
            system=SYSTEM,
            user=USER.format(a=text[pair.text_id_a], b=text[pair.text_id_b]),
            choices=LABELS,
            context={"text_a": text[pair.text_id_a], "text_b": text[pair.text_id_b]},
        )
        for pair in pairs.itertuples(index=False)
    ]


def judging_requests(entry: ModelEntry, scope: PersuasionScope, inputs: Inputs) -> RequestSet:
    """What the judging asset asks a judge: every pair of its scope (the pairs come back for the table)."""
    pairs = scoped_pairs(inputs["persuasion_pairs"], scope)
    return RequestSet(build_requests(pairs, inputs["persuasion_texts"]), items=pairs, summary=f"{len(pairs)} pairs")


def judgment_table(asked: RequestSet, completions: Sequence[CachedCompletion], judge_model: str) -> pd.DataFrame:
    """One row per (pair, run), in completion order: the raw answer, its label (``None`` when
    unreadable) and the pair's items (the platform adds the provenance columns)."""
    pairs = asked.items
    labels = [parse_choice(c.text, LABELS) if c.answered else None for c in completions]
    table = pd.DataFrame(
        {
            "judge_model": judge_model,
            "pair_id": [c.key for c in completions],
            "run": np.array([c.run for c in completions], dtype=np.int64),
            "raw_output": [c.text for c in completions],
            "label": pd.Series(labels, dtype=object),
            "is_valid": [label is not None for label in labels],
        }
    )
    items = pairs[["pair_id", "topic_id", "text_id_a", "text_id_b"]]
    return table.merge(items, on="pair_id", how="left", validate="many_to_one")


def votes(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per judge and pair: the labels of its runs and their majority (the platform's tie rule)."""
    return majority_votes(
        judgments, ["judge_model", "pair_id"], carry_columns=["topic_id", "text_id_a", "text_id_b"], min_runs=N_RUNS
    )


def strengths(votes_or_experts: pd.DataFrame, judge_column: str, label_column: str) -> pd.DataFrame:
    """Bradley-Terry scores per judge and text, fitted within each topic."""
    return bt_scores(votes_or_experts, [judge_column], columns=PAIR, label_column=label_column)


def agreement_with_experts(votes_table: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per judge: Cohen's kappa, Krippendorff's alpha and percent agreement of its majorities with the experts."""
    merged = votes_table.merge(pairs[["pair_id", "expert_label"]], on="pair_id", how="inner", validate="many_to_one")
    groups, judges = factorize_columns(merged, ["judge_model"])
    metrics = label_agreement(
        groups,
        encode_labels(merged["majority_label"]),
        encode_labels(merged["expert_label"]),
        len(judges),
    )
    return judges.assign(**metrics)


def disconnected_topics(pairs: pd.DataFrame) -> list[int]:
    """Topics whose expert comparison graph falls apart (BT strengths are not comparable across parts)."""
    split = []
    for topic, group in pairs.groupby("topic_id", sort=True):
        ends = pd.DataFrame({"text": pd.concat([group["text_id_a"], group["text_id_b"]], ignore_index=True)})
        node, texts = factorize_columns(ends, ["text"])
        count, _ = components(len(texts), node[: len(group)], node[len(group) :])
        if count > 1:
            split.append(int(topic))
    return split
