"""Majority votes over runs: the protocol's rule, plurality for ensembles, the pivot of aq_judgments."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from argassets.argument_quality.voting import (
    EXPECTED_VOTE_COLUMNS,
    LABELS,
    MISSING,
    VotingError,
    decode_labels,
    encode_labels,
    factorize_columns,
    majority_of_runs,
    majority_votes,
    plurality_vote,
    run_agreement_pattern,
)

CODES = [0, 1, 2, MISSING]


def spec_rule(runs: tuple[int, ...]) -> int:
    """The protocol, literally: A if >= 2 runs say A, B if >= 2 say B, else Tie; no valid run: none."""
    if all(r == MISSING for r in runs):
        return MISSING
    if sum(r == 0 for r in runs) >= 2:
        return 0
    if sum(r == 1 for r in runs) >= 2:
        return 1
    return 2


def test_majority_of_runs_equals_the_protocol_rule_on_every_combination():
    combos = list(itertools.product(CODES, repeat=3))
    got = majority_of_runs(np.array(combos, dtype=np.int8))
    assert got.tolist() == [spec_rule(c) for c in combos]


@pytest.mark.parametrize(
    ("runs", "expected"),
    [
        ((0, 0, 1), 0),
        ((1, 2, 1), 1),
        ((0, 1, 2), 2),
        ((2, 2, 0), 2),
        ((0, MISSING, MISSING), 2),
        ((MISSING,) * 3, MISSING),
    ],
)
def test_majority_of_runs_hand_cases(runs, expected):
    assert majority_of_runs(np.array([runs], dtype=np.int8)).tolist() == [expected]


def test_plurality_equals_protocol_rule_for_three_voters_who_all_voted():
    combos = list(itertools.product([0, 1, 2], repeat=3))
    assert plurality_vote(np.array(combos)).tolist() == [spec_rule(c) for c in combos]


def test_plurality_for_larger_ensembles():
    votes = np.array(
        [
            [0, 0, 1, 1, 2],  # A and B share the most votes -> Tie
            [0, 0, 0, 1, 1],  # A
            [1, 2, 2, MISSING, MISSING],  # Tie has the plurality
            [MISSING] * 5,  # nobody voted
            [1, MISSING, MISSING, MISSING, MISSING],  # one vote decides
        ]
    )
    assert plurality_vote(votes).tolist() == [2, 0, 2, MISSING, 1]


def test_run_agreement_pattern():
    runs = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 2], [2, 2, MISSING]])
    assert run_agreement_pattern(runs).tolist() == [1, 2, 3, -1]


def test_encode_decode_roundtrip_and_bad_label():
    codes = encode_labels(["A", "B", "Tie", None, np.nan])
    assert codes.tolist() == [0, 1, 2, -1, -1]
    assert decode_labels(codes).tolist() == ["A", "B", "Tie", None, None]
    with pytest.raises(VotingError, match=r"row 1: label 'tie'"):
        encode_labels(["A", "tie"])


def test_factorize_columns_matches_sorted_distinct_rows():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], 500),
            "b": pd.Categorical(rng.choice(["q", "p"], 500), categories=["q", "p", "unused"]),
            "c": rng.integers(0, 4, 500),
        }
    )
    codes, uniques = factorize_columns(frame, ["a", "b", "c"])
    expected = frame.astype({"b": str}).drop_duplicates().sort_values(["a", "b", "c"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(uniques.astype({"b": str, "c": "int64"}), expected, check_dtype=False)
    back = uniques.astype({"b": str}).iloc[codes].reset_index(drop=True)
    pd.testing.assert_frame_equal(back, frame.astype({"b": str}), check_dtype=False)


def _judgment(model, strategy, comparison, run, label, order="ab", dimension="logic", topic=1):
    return {
        "judge_model": model,
        "strategy": strategy,
        "dimension": dimension,
        "comparison_id": comparison,
        "topic_id": topic,
        "order": order,
        "run": run,
        "label": label,
    }


def test_majority_votes_pivots_runs_and_ignores_the_swapped_order():
    rows = [
        _judgment("m", "zero", "logic-00001", 0, "A"),
        _judgment("m", "zero", "logic-00001", 1, "B"),
        _judgment("m", "zero", "logic-00001", 2, "A"),
        _judgment("m", "zero", "logic-00001", 0, "B", order="ba"),  # position-bias run: not voted
        _judgment("m", "zero", "logic-00000", 0, "Tie"),
        _judgment("m", "zero", "logic-00000", 1, None),  # invalid
        _judgment("m", "zero", "logic-00000", 2, "B"),
        _judgment("m", "cot", "logic-00000", 1, "B"),  # runs 0 and 2 missing
        _judgment("k", "zero", "rhetoric-00003", 0, None, dimension="rhetoric", topic=7),
    ]
    table = majority_votes(pd.DataFrame(rows))
    assert list(table.columns) == [
        "model",
        "strategy",
        "dimension",
        "comparison_id",
        "topic_id",
        "label_run0",
        "label_run1",
        "label_run2",
        "n_valid_runs",
        "majority_label",
        *EXPECTED_VOTE_COLUMNS,
    ]
    assert table[EXPECTED_VOTE_COLUMNS].isna().all().all()  # no probabilities: nothing expected
    records = table.to_dict("records")
    assert [(r["model"], r["strategy"], r["comparison_id"]) for r in records] == [
        ("k", "zero", "rhetoric-00003"),
        ("m", "cot", "logic-00000"),
        ("m", "zero", "logic-00000"),
        ("m", "zero", "logic-00001"),
    ]
    assert records[0]["majority_label"] is None and records[0]["n_valid_runs"] == 0 and records[0]["topic_id"] == 7
    assert [records[1][f"label_run{i}"] for i in range(3)] == [None, "B", None]
    assert records[1]["majority_label"] == "Tie"  # one B is not two
    assert [records[2][f"label_run{i}"] for i in range(3)] == ["Tie", None, "B"]
    assert records[2]["majority_label"] == "Tie" and records[2]["n_valid_runs"] == 2
    assert [records[3][f"label_run{i}"] for i in range(3)] == ["A", "B", "A"]
    assert records[3]["majority_label"] == "A" and records[3]["n_valid_runs"] == 3


def test_majority_votes_carry_the_expected_majority_from_label_probabilities():
    rows = [_judgment("m", "zero", "logic-00001", run, label) for run, label in enumerate(["A", "B", "A"])]
    rows += [_judgment("m", "zero", "logic-00002", run, "Tie") for run in range(3)]
    rows += [_judgment("m", "zero", "logic-00001", 0, "B", order="ba")]
    frame = pd.DataFrame(rows)
    probabilities = [[0.5, 0.3, 0.2]] * 3 + [[np.nan] * 3] * 3 + [[0.0, 1.0, 0.0]]  # logic-00002: none
    frame[["p_a", "p_b", "p_tie"]] = probabilities
    table = majority_votes(frame).set_index("comparison_id")
    # (0.5, 0.3, 0.2) three times: P(majority A) = 0.5, B = 0.216; all equal 0.16, all unequal 0.18.
    expected = [0.5, 0.216, 0.284, 0.16, 0.66, 0.18]
    np.testing.assert_allclose(table.loc["logic-00001", EXPECTED_VOTE_COLUMNS].to_numpy(dtype=float), expected)
    assert table.loc["logic-00002", EXPECTED_VOTE_COLUMNS].isna().all()
    assert table.loc["logic-00001", "majority_label"] == "A"  # the sampled majority is unchanged
    frame.loc[1, "p_tie"] = 0.3  # sums to 1.1
    with pytest.raises(VotingError, match="judgments row 1: .* do not sum to 1"):
        majority_votes(frame)


def test_majority_votes_errors_name_the_rows():
    rows = [_judgment("m", "zero", "logic-00001", 0, "A"), _judgment("m", "zero", "logic-00001", 0, "B")]
    with pytest.raises(VotingError, match=r"rows 0 and 1: the same run \(0\) of model 'm'"):
        majority_votes(pd.DataFrame(rows))
    with pytest.raises(VotingError, match="missing column"):
        majority_votes(pd.DataFrame(rows).drop(columns="run"))
    with pytest.raises(VotingError, match="label 'C'"):
        majority_votes(pd.DataFrame([_judgment("m", "zero", "logic-00001", 0, "C")]))


def test_majority_votes_of_nothing_is_an_empty_table():
    table = majority_votes(pd.DataFrame([_judgment("m", "zero", "logic-00001", 0, "A", order="ba")]))
    assert table.empty and "majority_label" in table.columns


def test_majority_votes_vectorised_matches_a_loop_on_random_data():
    rng = np.random.default_rng(11)
    n = 400
    frame = pd.DataFrame(
        {
            "judge_model": rng.choice(["m1", "m2"], n),
            "strategy": rng.choice(["zero", "few"], n),
            "dimension": "logic",
            "comparison_id": [f"logic-{i:05d}" for i in rng.integers(0, 40, n)],
            "topic_id": 1,
            "run": rng.integers(0, 3, n),
            "label": rng.choice(["A", "B", "Tie", None], n),
        }
    ).drop_duplicates(["judge_model", "strategy", "comparison_id", "run"])
    table = majority_votes(frame)
    for (model, strategy, comparison), part in frame.groupby(["judge_model", "strategy", "comparison_id"]):
        runs = [MISSING] * 3
        for run, label in zip(part["run"], part["label"], strict=True):
            runs[run] = LABELS.index(label) if label is not None else MISSING
        expected = spec_rule(tuple(runs))
        row = table[
            (table["model"] == model) & (table["strategy"] == strategy) & (table["comparison_id"] == comparison)
        ]
        assert len(row) == 1
        got = row["majority_label"].iloc[0]
        assert got == (LABELS[expected] if expected != MISSING else None)
