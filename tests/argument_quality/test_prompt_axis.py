"""Prompt variants and perturbations as Study A presents them: byte-checked requests and the parser's map back."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from argassets.argument_quality.judgments import build_requests, judgment_table
from argassets.argument_quality.prompt_axis import (
    FILLER_UNIT,
    PROMPT_VARIANTS_PATH,
    PROTOCOL,
    filler,
    pad,
    presentation,
    study_prompt_variants,
)
from argassets.argument_quality.prompts import USER_TEMPLATE, render_user
from argassets.argument_quality.scope import ArgumentQualityScope
from argassets.platform.judging.engines.baselines import LongerWinsJudge
from argassets.platform.judging.interface import CachedCompletion, messages_sha256
from argassets.platform.study import RequestSet


@pytest.fixture(scope="module")
def inputs(upstream_db: Path) -> dict[str, pd.DataFrame]:
    with duckdb.connect(str(upstream_db), read_only=True) as con:
        tables = {
            t: con.execute(f"select * from {t}").df()
            for t in ("aq_prompts", "webis_expert_comparisons", "webis_arguments")
        }
    tables["zero"] = tables["aq_prompts"][tables["aq_prompts"]["strategy"] != "few"].reset_index(drop=True)
    return tables


def _requests(inputs, shown, orders=("ab", "ba")):
    return build_requests(inputs["zero"], inputs["webis_expert_comparisons"], inputs["webis_arguments"], orders, shown)


def test_the_appendix_variant_is_the_protocols_bytes_and_the_prompts_sent(inputs):
    variants = study_prompt_variants()
    assert list(variants) == ["appendix", "reworded"]
    assert variants["appendix"].template == USER_TEMPLATE
    protocol, _ = _requests(inputs, PROTOCOL)
    appendix, _ = _requests(inputs, presentation("appendix", None))
    assert [(r.system, r.user) for r in appendix] == [(r.system, r.user) for r in protocol]
    # ab requests are aq_prompts' rows, byte for byte, so their prompt hash (the cache key) is the same.
    ab = [r for r in appendix if r.key.endswith(":ab")]
    assert [messages_sha256(r.system, r.user) for r in ab] == inputs["zero"]["prompt_sha256"].tolist()


def test_a_reworded_variant_changes_the_user_message_only_and_so_its_hash(inputs):
    protocol, _ = _requests(inputs, PROTOCOL)
    reworded, _ = _requests(inputs, presentation("reworded", None))
    template = study_prompt_variants()["reworded"].template
    for old, new in zip(protocol, reworded, strict=True):
        assert new.system == old.system and new.choices == old.choices
        assert new.user == template.format(a=new.context["text_a"], b=new.context["text_b"]) != old.user
        assert messages_sha256(new.system, new.user) != messages_sha256(old.system, old.user)


def test_padding_appends_exactly_the_filler_to_the_named_argument(inputs):
    assert filler(10) == (FILLER_UNIT * 3)[:10] and len(filler(10)) == 10 and filler(10).split() == ["...", "...", "."]
    assert pad("text", 7) == "text" + filler(7)
    protocol, _ = _requests(inputs, PROTOCOL)
    padded, _ = _requests(inputs, presentation(None, "pad-a-200"))
    for old, new in zip(protocol, padded, strict=True):
        original = old.context["text_a"] if old.context["order"] == "ab" else old.context["text_b"]
        slot = "text_a" if new.context["order"] == "ab" else "text_b"
        other = "text_b" if slot == "text_a" else "text_a"
        assert new.context[slot].encode() == original.encode() + filler(200).encode()
        assert new.context[other] == old.context[other]
        assert new.user == render_user(new.context["text_a"], new.context["text_b"]) and new.system == old.system
    on_b, _ = _requests(inputs, presentation("reworded", "pad-b-5"), orders=("ab",))
    assert all(r.context["text_b"].endswith(filler(5)) and not r.context["text_a"].endswith(filler(5)) for r in on_b)


def test_renamed_options_rewrite_instruction_and_labels_and_parse_back(inputs):
    protocol, _ = _requests(inputs, PROTOCOL)
    renamed, items = _requests(inputs, presentation(None, "options-12"))
    for old, new in zip(protocol, renamed, strict=True):
        assert new.choices == ("1", "2", "Tie")
        assert new.system == old.system.replace("Argument A and Argument B", "Argument 1 and Argument 2").replace(
            "A, B, or Tie", "1, 2, or Tie"
        )
        assert new.user == old.user.replace("Argument A: ", "Argument 1: ", 1).replace(
            "\nArgument B: ", "\nArgument 2: ", 1
        )
    assert set(items["options"]) == {"1|2|Tie"}
    answers = {"1": "A", "2": "B", "Tie": "Tie", "argument 2.": "B", "A": None}
    completions = [
        CachedCompletion(r.key, 0, "judge", "x", "s", text, None, 0.0, "", "", "scripted", False)
        for r in renamed[:5]
        for text in answers
    ]
    table = judgment_table(RequestSet(renamed, items=items), completions, "judge")
    expected = list(answers.values()) * 5
    assert table["presented_label"].tolist() == expected


def test_reordered_options_and_their_refusals(inputs):
    protocol, _ = _requests(inputs, PROTOCOL)
    reordered, _ = _requests(inputs, presentation(None, "options-reordered"))
    assert all(
        n.system == o.system.replace("A, B, or Tie", "Tie, B, or A") for o, n in zip(protocol, reordered, strict=True)
    )
    assert all(n.choices == ("A", "B", "Tie") and n.user == o.user for o, n in zip(protocol, reordered, strict=True))
    few = inputs["aq_prompts"][inputs["aq_prompts"]["strategy"] == "few"].head(1)
    with pytest.raises(ValueError, match=r"prompt .*:few \(ab\): options-12 cannot rewrite the few-shot"):
        build_requests(
            few,
            inputs["webis_expert_comparisons"],
            inputs["webis_arguments"],
            ("ab",),
            presentation(None, "options-12"),
        )
    with pytest.raises(ValueError, match="unknown prompt variant 'nope'"):
        ArgumentQualityScope(prompt_variant="nope")
    with pytest.raises(ValueError, match="unknown perturbation 'pad-a-0'"):
        ArgumentQualityScope(perturbation="pad-a-0")
    assert str(PROMPT_VARIANTS_PATH).endswith("data/prompt_variants.toml")


def test_longer_wins_answers_renamed_options_by_position(inputs):
    judge = LongerWinsJudge()
    protocol, _ = _requests(inputs, PROTOCOL)
    renamed, _ = _requests(inputs, presentation(None, "options-12"))
    mapped = {"A": "1", "B": "2", "Tie": "Tie"}
    assert [judge.answer(r) for r in renamed] == [mapped[judge.answer(r)] for r in protocol]
