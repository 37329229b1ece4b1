"""The political KB as published: the prompt as sent, the index of the 23,300 released rows, the 22
published models keyed by KB argument, and E1/E2/E3 against the released ensembles."""

from __future__ import annotations

import json
import lzma

import numpy as np
import pandas as pd
import pytest

from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.model_stats import scores_from_json
from argassets.political.prompts import SYSTEM_PROMPT, USER_TEMPLATE, render_prompt, split_user_message
from argassets.political.published_index import (
    argument_published_rows,
    build_published_index,
    compare_with_released,
    read_released_prompts,
)
from argassets.political.study_items import match_study_items

#: The paper's members (spec, "Ensembles"), as registry names.
PAPER_E2 = [
    "published-qwen3-235b",
    "published-qwen-qwq-32b",
    "published-claude-3.7-sonnet",
    "published-deepseek-r1",
    "published-o3-mini",
]
PAPER_E3 = [
    "published-qwen3-235b",
    "published-claude-3.7-sonnet",
    "published-deepseek-v3",
    "published-deepseek-r1",
    "published-gpt4o",
    "published-gpt-4-turbo",
    "published-gpt-4.5",
    "published-gemini-1.5-pro",
    "published-gemini-2.5-flash",
    "published-grok-2",
    "published-llama-4-maverick",
    "published-phi-4",
]


def test_the_prompt_is_the_released_one_with_its_whitespace_and_quotes():
    system, user = render_prompt('He said "no" \u2013 it\u2019s \u201cfine\u201d', "it\u2018s a \u201cno\u201d")
    assert system == SYSTEM_PROMPT
    assert "\n           Your task" in system and "programme. \n" in system and "set the score to 'NA'. \n" in system
    assert "\u201c" not in system
    assert user.startswith("Score the speaker's political position")
    assert (
        "\n                 \n                 Proposition: 'it's a 'no''\n\n                 Locution: 'He said 'no' \u2013 it's 'fine''\n\n"
        in user
    )
    assert split_user_message(user) == ("it's a 'no'", "He said 'no' \u2013 it's 'fine'")
    assert USER_TEMPLATE.count("{proposition}") == 1 and USER_TEMPLATE.endswith("{'Score' : int}")
    with pytest.raises(ValueError, match="does not start with"):
        split_user_message("Proposition: 'x'")


def test_every_released_row_matches_a_kb_argument_with_equal_messages(released_prompts, kb_prompts, published_index):
    assert released_prompts["node_id"].tolist() == list(range(23300))
    assert (released_prompts["system"] == SYSTEM_PROMPT).all()
    unmatched = published_index[published_index["match"] == "unmatched"]
    assert (unmatched["reason"].str.len() > 0).all()
    # every row is listed with its reason when it does not match; on the release none is left
    assert unmatched[["node_id", "reason"]].to_dict("records") == []
    assert published_index["match"].value_counts().to_dict() == {"exact": 23300}
    platform = kb_prompts.set_index("argument_id")
    released = released_prompts.set_index("node_id")
    users = platform.loc[published_index["argument_id"], "user"].to_numpy()
    systems = platform.loc[published_index["argument_id"], "system"].to_numpy()
    differing = published_index.loc[
        (users != released.loc[published_index["node_id"], "user"].to_numpy())
        | (systems != released.loc[published_index["node_id"], "system"].to_numpy()),
        "node_id",
    ].tolist()
    assert differing == []
    # the prompt hash of the rendered messages is the one the cache keys on
    assert kb_prompts["prompt_sha256"].str.fullmatch(r"[0-9a-f]{64}").all()


def test_repeated_rows_map_to_one_argument_and_the_first_row_stands_for_them(published_index, carried_rows, kb_prompts):
    groups = published_index.groupby(["proposition", "locution"])
    assert groups["argument_id"].nunique().eq(1).all()
    assert (groups["representative_node_id"].first() == groups["node_id"].min()).all()
    assert (groups.size() == groups["n_rows"].first()).all()
    assert groups.ngroups == 20440 and int(published_index["representative"].sum()) == 20440
    repeats = published_index[~published_index["representative"]]
    assert len(repeats) == 2860 and repeats["reason"].str.startswith("repeats the text of row").all()
    # texts said twice in the KB (n_candidates > 1): each argument with the prompt carries its answers
    assert (
        int(published_index.loc[published_index["representative"], "n_candidates"].sum()) == len(carried_rows) == 20557
    )
    assert len(kb_prompts) - len(carried_rows) == 189
    assert carried_rows["argument_id"].is_unique
    rows = published_index.set_index("node_id")
    platform = kb_prompts.set_index("argument_id")
    assert rows.loc[carried_rows["published_index"], "representative"].all()
    assert (
        rows.loc[carried_rows["published_index"], "proposition"].to_numpy()
        == platform.loc[carried_rows["argument_id"], "user"].map(lambda u: split_user_message(u)[0]).to_numpy()
    ).all()


def test_a_row_that_matches_only_after_normalising_or_not_at_all_is_listed():
    kb = pd.DataFrame(
        {
            "argument_id": ["a1", "a2"],
            "proposition": ["tax is theft", "we need homes"],
            "locution": ["Tax is theft", "We need homes"],
        }
    )
    released = pd.DataFrame(
        {
            "node_id": [0, 1, 2, 3],
            "proposition": ["tax is theft", "TAX  is theft", "we need homes", "other"],
            "locution": ["Tax is theft", "tax is theft", "we need more homes", "Something"],
        }
    )
    index = build_published_index(kb, released).set_index("node_id")
    assert index.loc[0, ["argument_id", "match", "representative"]].tolist() == ["a1", "exact", True]
    assert index.loc[1, ["argument_id", "match", "representative"]].tolist() == ["a1", "normalised", True]
    assert (
        index.loc[2, "match"] == "unmatched"
        and "proposition is in the KB (1 arguments), with another locution" in index.loc[2, "reason"]
    )
    assert index.loc[3, "reason"] == "neither the proposition nor the locution is in the KB"
    carried = argument_published_rows(kb, index.reset_index())
    assert carried.to_dict("records") == [{"argument_id": "a1", "published_index": 0, "match": "exact"}]


def test_released_prompt_file_errors_name_file_line_and_id(tmp_path, released_prompts):
    good = {
        "id": "0",
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": render_prompt("loc", "prop")[1]},
        ],
    }
    path = tmp_path / "prompts.jsonl.xz"
    cases = [
        ([json.dumps(good), "{oops"], r"prompts.jsonl.xz: line 2: not JSON"),
        ([json.dumps(good), json.dumps(good)], r"line 2 \(id 0\): id occurs twice"),
        (
            [json.dumps({**good, "messages": good["messages"][:1]})],
            r"line 1 \(id 0\): expected a system and a user message",
        ),
        (
            [json.dumps({**good, "messages": [good["messages"][0], {"role": "user", "content": "Score it"}]})],
            r"line 1 \(id 0\): user message does not start",
        ),
    ]
    for lines, message in cases:
        with lzma.open(path, "wt", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        with pytest.raises(ValueError, match=message):
            read_released_prompts(path)
    with lzma.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(good) + "\n")
    assert read_released_prompts(path)[["node_id", "proposition", "locution"]].values.tolist() == [[0, "prop", "loc"]]


# ---------------------------------------------------------------------------------------------- 22 models


def test_the_registry_imports_all_22_published_models(published_models, shared_data_dir):
    registry = published_models.registry
    entries = [registry.get(n) for n in published_models.names]
    assert len(entries) == 22
    files = sorted(p.name for p in (shared_data_dir / "political" / "predictions").glob("*.tsv"))
    assert sorted(e.path.split("/")[-1] for e in entries) == files
    assert [e.name for e in entries if e.reasoning] == PAPER_E2
    stats = published_models.stats
    assert stats.groupby("system")["argument_id"].size().eq(20557).all()
    assert not stats["argument_id"].str.startswith("paper:").any()


def test_ensembles_follow_the_papers_membership_rules(published_models):
    assert published_models.listed["E1"] == published_models.names
    assert published_models.listed["E2"] == PAPER_E2
    assert published_models.listed["E3"] == PAPER_E3


def test_e2_and_e3_equal_the_released_files_on_every_mapped_argument(published_models, carried_rows, published_index):
    comparison = compare_with_released(published_models.ensembles, carried_rows, published_models.released)
    counts = comparison.groupby(["ensemble", "status"]).size().to_dict()
    # every argument whose row the release keeps is equal (array in order, NA count, prob NA, moments);
    # of the 72 rows the ensemble files leave out, 71 are the first row of their text (one argument each)
    assert counts == {
        ("E2", "equal"): 20557 - 71,
        ("E2", "absent_from_release"): 71,
        ("E3", "equal"): 20557 - 71,
        ("E3", "absent_from_release"): 71,
    }
    absent = set(comparison.loc[comparison["status"] == "absent_from_release", "published_index"])
    left_out = set(range(23300)) - set(published_models.released["E2"]["node_id"])
    assert left_out == set(range(23300)) - set(published_models.released["E3"]["node_id"])
    assert len(left_out) == 72 and absent == left_out - {16486}
    # the other one repeats the text of row 11149, itself left out
    index = published_index.set_index("node_id")
    assert index.loc[16486, "representative_node_id"] == 11149


def test_compare_with_released_reports_a_difference():
    pooled = pd.DataFrame(
        {
            "system": ["E2", "E2"],
            "argument_id": ["a", "b"],
            "scores": ["[10, 20]", "[30]"],
            "mean": [15.0, 30.0],
            "var": [25.0, 0.0],
            "std": [5.0, 0.0],
            "na_count": [3, 4],
            "prob_na": [0.6, 0.8],
        }
    )
    rows = pd.DataFrame({"argument_id": ["a", "b", "c"], "published_index": [0, 1, 2]})
    released = pd.DataFrame(
        {
            "node_id": [0, 1, 2],
            "scores": [[10, 20], [31], []],
            "mean": [15.0, 31.0, np.nan],
            "var": [25.0, 0.0, np.nan],
            "std": [5.0, 0.0, np.nan],
            "na_count": [3, 4, 5],
            "prob_na": [0.6, 0.8, 1.0],
        }
    )
    out = compare_with_released(pooled, rows, {"E2": released}).set_index("argument_id")
    assert out.loc["a", "status"] == "equal"
    assert out.loc["b", ["status", "detail"]].tolist() == ["differs", "scores, mean"]
    assert out.loc["c", "status"] == "absent_from_platform"


def test_e1_is_rebuilt_from_all_22_models(published_models, kb_prompts, published_index, shared_data_dir):
    """E1 (never released as a file) against the study files' ensemble1 columns."""
    human = shared_data_dir / "political" / "human"
    pairwise, pointwise = read_pairwise_study(human), read_pointwise_study(human)
    matches = match_study_items(kb_prompts, pointwise.items, pairwise.items)
    e1 = published_models.ensembles[published_models.ensembles["system"] == "E1"].set_index("argument_id")
    assert len(e1) == 20557 and (e1["n_repetitions"] == 110).all()
    representative = published_index.set_index("node_id")["representative"]
    study = pairwise.published[pairwise.published["prefix"] == "ensemble1"].set_index("meta_id")
    items = matches[matches["study"] == "pairwise"].set_index("meta_id")
    same = repeats = 0
    for meta_id, index in zip(pairwise.items["meta_id"], pairwise.items["prediction_index"], strict=True):
        argument = items.loc[meta_id, "argument_id"]
        if not representative.loc[index]:
            repeats += 1  # the study used a repeat row (a glue nodeset's copy): the KB carries the first row
            continue
        assert scores_from_json(e1.loc[argument, "scores"]) == [float(s) for s in study.loc[meta_id, "scores"]], meta_id
        assert e1.loc[argument, "na_count"] == study.loc[meta_id, "na_count"]
        same += 1
    assert (same, repeats) == (97, 3)
    # pointwise: E1's probability of NA, against the study's, for the items the study's KB row is known to match
    point = pointwise.published[pointwise.published["prefix"] == "ensemble1"].set_index("meta_id")["prob_na"]
    keyed = matches[matches["study"] == "pointwise"].set_index("meta_id")["argument_id"]
    mine = e1.loc[keyed.loc[point.index], "prob_na"].to_numpy()
    agree = np.isclose(mine, point.to_numpy())
    assert agree.mean() > 0.97, f"{int((~agree).sum())} of {len(agree)} pointwise items differ"


def test_run_default_imports_the_published_models_when_the_data_is_there(published_models):
    from argassets.cli.run_default import default_models

    with_data = default_models(published_models.registry, published_data=True)
    assert with_data[:2] == ["longer-wins", "random"] and with_data[2:] == published_models.names
    assert default_models(published_models.registry, published_data=False) == ["longer-wins", "random"]
