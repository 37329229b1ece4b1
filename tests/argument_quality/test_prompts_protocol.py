"""Prompt texts against the published protocol, byte for byte, and few-shot selection on the real data."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from argassets.argument_quality.corpus import load_corpus, locate_corpus
from argassets.argument_quality.prompts import (
    PromptError,
    cot_system,
    few_system,
    render_prompts,
    render_user,
    select_few_shot_examples,
    zero_system,
)
from argassets.platform.judging.interface import messages_sha256
from argassets.platform.paths import resolve_specs_dir

SPEC_NAME = "argument-quality.md"

ZERO_LOGIC = (
    "You are given two arguments: Argument A and Argument B. Decide which one is logically stronger: "
    "Reply with only one of the following options: A, B, or Tie."
)


@pytest.fixture(scope="module")
def corpus(shared_data_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return load_corpus(locate_corpus(shared_data_dir))


@pytest.fixture(scope="module")
def spec_text() -> str:
    spec = resolve_specs_dir() / SPEC_NAME
    if not spec.is_file():
        pytest.fail(
            f"protocol not found at {spec}: set ARGASSETS_SPECS_DIR to the folder of the protocol specifications"
        )
    return spec.read_text(encoding="utf-8")


def test_zero_shot_texts():
    assert zero_system("logic") == ZERO_LOGIC
    assert zero_system("rhetoric") == ZERO_LOGIC.replace("logically", "rhetorically")
    assert zero_system("dialectic") == ZERO_LOGIC.replace("logically", "dialectically")
    assert render_user("first text", "second text") == "Argument A: first text\nArgument B: second text"


def test_zero_shot_matches_the_protocol_file(spec_text: str):
    template = re.search(r"### zero-shot\nSystem: `([^`]+)`", spec_text).group(1)
    for dimension, adverb in (("logic", "logically"), ("rhetoric", "rhetorically"), ("dialectic", "dialectically")):
        assert zero_system(dimension) == template.replace("{dim_adverb}", adverb)
    user = re.search(r"### zero-shot\n.*?User:\n```\n(.*?)\n```", spec_text, re.S).group(1)
    assert render_user("X", "Y") == user.replace("{a}", "X").replace("{b}", "Y")


def test_cot_matches_the_protocol_file(spec_text: str):
    template = re.search(r"### chain-of-thought\nSystem:\n```\n(.*?)\n```", spec_text, re.S).group(1)
    for dimension, adverb in (("logic", "logically"), ("rhetoric", "rhetorically"), ("dialectic", "dialectically")):
        block = re.search(rf"Criteria for {dimension}:\n((?:- .*\n)+)", spec_text).group(1).rstrip("\n")
        expected = template.replace("{dim_adverb}", adverb).replace("{dim_criterias}", block)
        assert cot_system(dimension) == expected
    # spelling kept verbatim
    assert "authorative/trust worthy" in cot_system("rhetoric")
    assert "appropiate style?" in cot_system("rhetoric")
    assert cot_system("rhetoric").count("\n- ") == 5
    assert cot_system("logic").count("\n- ") == 3


def test_cot_literal_logic():
    assert cot_system("logic") == (
        "You are given two arguments: Argument A and Argument B.\n"
        "Decide which one is logically stronger considering these criteria:\n"
        "- which is more acceptable? A premise of an argument is acceptable if it is rationally worthy of being believed to be true.\n"
        "- which is more relevant to a conclusion? A premise of an argument is relevant if it contributes to the acceptance or rejection of the argument's conclusion.\n"
        "- which is more sufficient to justify a conclusion? An argument's premises are sufficient if, together, they give enough support to make it rational to draw its conclusion.\n"
        "Let's think step by step and reply with only one of the following options: A, B, or Tie."
    )


def test_few_shot_layout(spec_text: str):
    text = few_system("logic", [("a1", "b1"), ("a2", "b2"), ("a3", "b3")])
    assert text == (
        ZERO_LOGIC + "\n\nExamples:\n"
        "Argument A: a1\nArgument B: b1\nA\n\n"
        "Argument A: a2\nArgument B: b2\nB\n\n"
        "Argument A: a3\nArgument B: b3\ntie"
    )
    block = re.search(r"### few-shot\n.*?```\n(Examples:\n.*?)\n```", spec_text, re.S).group(1)
    filled = (
        block.replace("{ex_A_argA}", "a1")
        .replace("{ex_A_argB}", "b1")
        .replace("{ex_B_argA}", "a2")
        .replace("{ex_B_argB}", "b2")
        .replace("{ex_tie_argA}", "a3")
        .replace("{ex_tie_argB}", "b3")
    )
    assert text == ZERO_LOGIC + "\n\n" + filled
    with pytest.raises(PromptError):
        few_system("logic", [("a", "b")])
    with pytest.raises(PromptError):
        zero_system("style")


def test_few_shot_selection_on_the_real_data(corpus):
    arguments, comparisons = corpus
    examples = select_few_shot_examples(comparisons, arguments)
    assert len(examples) == 180  # 3 shots x 20 topics x 3 dimensions
    assert examples.groupby("dimension").size().to_dict() == {"dialectic": 60, "logic": 60, "rhetoric": 60}
    assert (
        examples.groupby(["topic_id", "dimension"])["shot"].apply(list)
        == pd.Series([["A", "B", "Tie"]] * 60, index=examples.groupby(["topic_id", "dimension"]).size().index)
    ).all()

    # recompute the rule independently for every topic and dimension
    score = {
        (t, d, a): s
        for t, d, a, s in zip(
            arguments.topic_id, arguments.discussion_id, arguments.argument_id, arguments.published_logic, strict=False
        )
    }
    logic = comparisons[comparisons["dimension"] == "logic"].copy()
    logic["diff"] = [
        score[(t, da, aa)] - score[(t, db, ab)]
        for t, da, aa, db, ab in zip(
            logic.topic_id,
            logic.discussion_id_a,
            logic.argument_id_a,
            logic.discussion_id_b,
            logic.argument_id_b,
            strict=False,
        )
    ]
    chosen = examples[examples["dimension"] == "logic"].set_index(["topic_id", "shot"])
    for topic, group in logic.groupby("topic_id"):
        a_example = chosen.loc[(topic, "A")]
        b_example = chosen.loc[(topic, "B")]
        tie_example = chosen.loc[(topic, "Tie")]
        assert a_example.score_difference == pytest.approx(group["diff"].max())
        assert b_example.score_difference == pytest.approx(group["diff"].min())
        ties = group[group["label"] == "Tie"]
        assert abs(tie_example.score_difference) == pytest.approx(ties["diff"].abs().min())
        assert tie_example.label == "Tie"
        # the smallest row among equally good candidates
        best_a = group[group["diff"] == group["diff"].max()]["comparison_id"].min()
        assert a_example.comparison_id == best_a

    # topic 1, logic: concrete picks, stable over time
    t1 = chosen.loc[1]
    assert t1["comparison_id"].to_dict() == {"A": "logic-07274", "B": "logic-06957", "Tie": "logic-06882"}
    assert t1.loc["A", "score_difference"] == pytest.approx(3.765018, abs=1e-6)
    # the rule follows the scores, not the label: this pair's experts said B
    assert t1.loc["A", "label"] == "B"


def test_rendered_prompts_on_the_real_data(corpus):
    arguments, comparisons = corpus
    prompts = render_prompts(comparisons, arguments)
    assert len(prompts) == 125_568
    assert prompts["prompt_id"].is_unique
    assert prompts.groupby("strategy").size().to_dict() == {"cot": 41856, "few": 41856, "zero": 41856}
    assert list(prompts.columns) == [
        "prompt_id",
        "comparison_id",
        "dimension",
        "strategy",
        "topic_id",
        "system",
        "user",
        "prompt_sha256",
    ]
    # one few-shot system message per topic and dimension, fixed for all its comparisons
    few = prompts[prompts["strategy"] == "few"]
    assert few.groupby(["topic_id", "dimension"])["system"].nunique().eq(1).all()
    assert few["system"].nunique() == 60
    assert prompts[prompts["strategy"] == "zero"]["system"].nunique() == 3
    # the first dialectical raw row, rendered
    row = prompts[prompts["prompt_id"] == "dialectic-00000:zero"].iloc[0]
    key = arguments.set_index(["topic_id", "discussion_id", "argument_id"])["text"]
    text_a = key.loc[(row.topic_id, 42495, 1)]
    text_b = key.loc[(row.topic_id, 25519, 4)]
    assert row.user == f"Argument A: {text_a}\nArgument B: {text_b}"
    assert row.system == ZERO_LOGIC.replace("logically", "dialectically")
    assert row.prompt_sha256 == messages_sha256(row.system, row.user)
    # few-shot text of that topic ends with the lowercase tie example
    few_row = prompts[prompts["prompt_id"] == "dialectic-00000:few"].iloc[0]
    assert few_row.system.endswith("\ntie")
    assert few_row.system.startswith(row.system + "\n\nExamples:\nArgument A: ")
    assert few_row.user == row.user


def test_prompt_hash_is_the_canonical_json_of_the_messages():
    import hashlib
    import json

    expected = hashlib.sha256(
        json.dumps(
            [{"content": "S", "role": "system"}, {"content": "Ü", "role": "user"}],
            ensure_ascii=False,
            separators=(",", ":"),
            sort_keys=True,
        ).encode("utf-8")
    ).hexdigest()
    assert messages_sha256("S", "Ü") == expected
