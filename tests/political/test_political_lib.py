"""Study B library: the protocol prompt, score parsing, per-model statistics and ensembles."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from argassets.platform.judging.interface import ChatRequest
from argassets.political.ensembles import ensemble_membership, members_of, pool_ensemble
from argassets.political.human_studies import read_pairwise_study
from argassets.political.model_stats import model_stats, scores_from_json
from argassets.political.predictions import SCORE_JSON_SCHEMA
from argassets.political.prompts import SYSTEM_PROMPT, render_prompt, render_prompts
from argassets.political.published import published_tsv_to_predictions, read_published_tsv
from argassets.political.score_parsing import parse_score

EXPECTED_USER = (
    "Score the speaker's political position between 0 ('Extremely left') and 100 ('Extremely right'), "
    "and 'NA' if there is no political content, using the following locution and proposition.\n"
    "                 \n"
    "                 Proposition: 'the weekend is what Labour brought you'\n\n"
    "                 Locution: 'the weekend, that's what Labour brought you'\n\n"
    "                 Do not write an introduction or summary. Output in JSON format using the following template: "
    "{'Score' : int}"
)


def test_prompt_is_the_released_protocol_byte_for_byte():
    """As in ../shared/data/political/prompts/prompts.jsonl.xz (spec: indentation, spaces before
    some newlines, straight quotes around 'NA'); tests/political/test_political_released.py checks all 23,300."""
    system, user = render_prompt(
        "the weekend, that\u2019s what Labour brought you", "the weekend is what Labour brought you"
    )
    assert user == EXPECTED_USER
    assert system.startswith("You will be provided with the text of a locution and its corresponding propositional")
    assert "set the score to 'NA'. \n" in system and "\u201c" not in system
    assert system.endswith(
        "Output in JSON format using the following template: {'Score' : int}. \n"
        "           \n           Do not include any additional context, preamble, or explanation."
    )
    assert system == SYSTEM_PROMPT


def test_prompt_keeps_braces_in_the_text_and_hash_matches_the_judging_library():
    frame = render_prompts(
        pd.DataFrame(
            {"argument_id": ["b", "a"], "locution": ["{locution} x", "L"], "proposition": ["{proposition}", "P"]}
        )
    )
    assert frame["argument_id"].tolist() == ["a", "b"]
    assert "Proposition: '{proposition}'" in frame.loc[1, "user"]
    assert "Locution: '{locution} x'" in frame.loc[1, "user"]
    request = ChatRequest(key="a", system=frame.loc[0, "system"], user=frame.loc[0, "user"])
    assert frame.loc[0, "prompt_sha256"] == request.prompt_sha256


def test_render_prompts_rejects_duplicates_and_missing_text():
    with pytest.raises(ValueError, match="'x' occurs more than once"):
        render_prompts(pd.DataFrame({"argument_id": ["x", "x"], "locution": ["a", "b"], "proposition": ["c", "d"]}))
    with pytest.raises(ValueError, match="argument 'y' has no locution"):
        render_prompts(pd.DataFrame({"argument_id": ["y"], "locution": [None], "proposition": ["c"]}))


@pytest.mark.parametrize(
    ("text", "score", "is_na", "is_valid"),
    [
        ('{"Score": 45}', 45.0, False, True),
        ("{'Score' : 45}", 45.0, False, True),
        ('{"Score": 0}', 0.0, False, True),
        ('{"Score": 100}', 100.0, False, True),
        ('{"score": "70"}', 70.0, False, True),
        ('{"Score": 30.0}', 30.0, False, True),
        ('{"Score": "NA"}', None, True, True),
        ("{'Score' : 'NA'}", None, True, True),
        ("NA", None, True, True),
        ("  62 ", 62.0, False, True),
        ('```json\n{"Score": 55}\n```', 55.0, False, True),
        ('Here is my answer: {"Score": 20}', 20.0, False, True),
        ('{"Score": 101}', None, False, False),
        ('{"Score": -1}', None, False, False),
        ('{"Score": 45.5}', None, False, False),
        ('{"Score": true}', None, False, False),
        ('{"Score": null}', None, False, False),
        ('{"Position": 45}', None, False, False),
        ('{"Score": 10} {"Score": 90}', None, False, False),
        ("N/A", None, False, False),
        ("The speaker is centre-left.", None, False, False),
        ("", None, False, False),
        (None, None, False, False),
    ],
)
def test_parse_score(text, score, is_na, is_valid):
    parsed = parse_score(text)
    assert (parsed.score, parsed.is_na, parsed.is_valid) == (score, is_na, is_valid)


def test_schema_admits_scores_and_na_only():
    branches = SCORE_JSON_SCHEMA["properties"]["Score"]["anyOf"]
    assert {"type": "integer", "minimum": 0, "maximum": 100} in branches
    assert {"type": "string", "enum": ["NA"]} in branches
    assert SCORE_JSON_SCHEMA["required"] == ["Score"]


def _predictions(model: str, argument: str, answers: list[str]) -> pd.DataFrame:
    parsed = [parse_score(a) for a in answers]
    return pd.DataFrame(
        {
            "judge_model": model,
            "argument_id": argument,
            "repetition": range(len(answers)),
            "raw_output": answers,
            "score": [p.score if p.score is not None else np.nan for p in parsed],
            "is_na": [p.is_na for p in parsed],
            "is_valid": [p.is_valid for p in parsed],
        }
    )


def test_model_stats_hand_computed():
    frame = _predictions("m", "a1", ['{"Score": 50}', '{"Score": 50}', '{"Score": "NA"}', "garbage", '{"Score": 40}'])
    stats = model_stats(frame)
    row = stats.iloc[0]
    assert row["system"] == "m" and row["argument_id"] == "a1"
    assert json.loads(row["scores"]) == [50, 50, 40]
    assert row["mean"] == pytest.approx(140 / 3)
    assert row["var"] == pytest.approx(((50 - 140 / 3) ** 2 * 2 + (40 - 140 / 3) ** 2) / 3)  # ddof = 0
    assert row["std"] == pytest.approx(math.sqrt(row["var"]))
    assert (row["na_count"], row["invalid_count"], row["n_repetitions"]) == (1, 1, 5)
    assert row["prob_na"] == pytest.approx(0.2)


def test_model_stats_all_na_has_nan_moments():
    stats = model_stats(_predictions("m", "a", ["NA"] * 5))
    assert json.loads(stats.loc[0, "scores"]) == []
    assert math.isnan(stats.loc[0, "mean"]) and stats.loc[0, "prob_na"] == 1.0


def test_model_stats_reproduce_published_summaries(shared_data_dir):
    published = read_published_tsv(shared_data_dir / "political/predictions/llama33_70b.tsv").head(3000)
    stats = model_stats(published_tsv_to_predictions(published, "published-llama33-70b"))
    merged = stats.assign(node_id=stats["argument_id"].str.removeprefix("paper:").astype(int)).merge(
        published, on="node_id"
    )
    assert len(merged) == 3000
    np.testing.assert_allclose(merged["mean_x"], merged["mean_y"], equal_nan=True)
    np.testing.assert_allclose(merged["var_x"], merged["var_y"], equal_nan=True, atol=1e-9)
    np.testing.assert_allclose(merged["std_x"], merged["std_y"], equal_nan=True, atol=1e-9)
    np.testing.assert_allclose(merged["prob_na_x"], merged["prob_na_y"])
    assert (merged["na_count_x"] == merged["na_count_y"]).all()


def _stats(system: str, rows: dict[str, tuple[list[int], int]], n: int = 5) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "system": system,
                "argument_id": arg,
                "scores": json.dumps(scores),
                "mean": np.nan,
                "var": np.nan,
                "std": np.nan,
                "na_count": na,
                "invalid_count": n - len(scores) - na,
                "n_repetitions": n,
                "prob_na": na / n,
            }
            for arg, (scores, na) in rows.items()
        ]
    )


def test_e3_rule_needs_na_to_outnumber_valid_scores():
    stats = pd.concat(
        [
            _stats("sayer", {"a": ([], 5), "b": ([10, 20], 3)}),  # 2 scores, 8 NA -> E3
            _stats("balanced", {"a": ([10, 20, 30], 2), "b": ([10, 20], 3)}),  # 5 scores, 5 NA -> not E3
            _stats("never", {"a": ([1, 2, 3, 4, 5], 0), "b": ([5, 5, 5, 5, 5], 0)}),
            _stats("dice", {"a": ([50], 4)}),
        ]
    )
    members = ensemble_membership(stats, {"sayer": True, "never": True}, excluded={"dice": "baseline"})
    assert members_of(members, "E1") == ["balanced", "never", "sayer"]
    assert members_of(members, "E2") == ["never", "sayer"]
    assert members_of(members, "E3") == ["sayer"]
    dice = next(m for m in members if m.system == "dice")
    assert not dice.eligible and dice.note == "baseline"
    with pytest.raises(ValueError, match="unknown ensemble"):
        members_of(members, "E4")


def test_pool_ensemble_concatenates_and_adds_counts():
    stats = pd.concat([_stats("m1", {"a": ([10, 20], 3)}), _stats("m2", {"a": ([90], 4), "b": ([], 5)})])
    pooled = pool_ensemble(stats, ["m2", "m1"], "E9").set_index("argument_id")
    assert json.loads(pooled.loc["a", "scores"]) == [90, 10, 20]
    assert pooled.loc["a", "na_count"] == 7 and pooled.loc["a", "n_repetitions"] == 10
    assert pooled.loc["a", "prob_na"] == pytest.approx(0.7)
    assert pooled.loc["a", "mean"] == pytest.approx(40.0)
    assert pooled.loc["b", "n_members"] == 1 and math.isnan(pooled.loc["b", "mean"])
    assert pool_ensemble(stats, [], "E9").empty


def test_pooling_published_members_reproduces_published_ensembles(shared_data_dir):
    study = read_pairwise_study(shared_data_dir / "political/human")
    published = study.published
    members = {
        "ensemble2": [
            "qwen3_235b_a22b",
            "qwen_qwq_32b",
            "claude_3_7_sonnet_20250219",
            "deepseek_r1",
            "o3_mini_2025_01_31",
        ],
        "ensemble3": [
            "qwen3_235b_a22b",
            "claude_3_7_sonnet_20250219",
            "deepseek_v3",
            "deepseek_r1",
            "gpt_4o_2024_08_06",
            "gpt_4_turbo_2024_04_09",
            "gpt_4_5_preview_2025_02_27",
            "gemini_1_5_pro_002",
            "gemini_2_5_flash_preview",
            "grok_2_1212",
            "llama_4_maverick",
            "phi_4",
        ],
    }
    members["ensemble1"] = [p for p in study.prefixes if not p.startswith("ensemble")]
    stats = pd.DataFrame(
        {
            "system": published["prefix"],
            "argument_id": published["meta_id"],
            "scores": published["scores"].map(json.dumps),
            "na_count": published["na_count"],
            "invalid_count": 0,
            "n_repetitions": 5,
        }
    )
    for ensemble, names in members.items():
        pooled = pool_ensemble(stats, names, ensemble).set_index("argument_id")
        expected = published[published["prefix"] == ensemble].set_index("meta_id")
        assert len(pooled) == 100
        for meta_id, row in expected.iterrows():
            assert sorted(scores_from_json(pooled.loc[meta_id, "scores"])) == sorted(row["scores"])
            assert pooled.loc[meta_id, "na_count"] == row["na_count"]
