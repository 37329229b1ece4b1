"""The pairwise core's votes on study-neutral columns: known answers and errors naming the row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from argassets.platform.pairwise.labels import MISSING, VotingError, decode_labels, encode_labels, factorize_columns
from argassets.platform.pairwise.votes import majority_votes, plurality_vote

KEYS = ["judge", "facet", "pair_id"]


def verdicts(rows: list[tuple[str, str, str, int, str | None]], **extra: object) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=[*KEYS, "run", "label"])
    return frame.assign(**extra)


def test_majority_of_three_runs_per_key_with_the_stratum_carried():
    table = verdicts(
        [
            ("j1", "clarity", "p1", 0, "A"),
            ("j1", "clarity", "p1", 1, "B"),
            ("j1", "clarity", "p1", 2, "A"),
            ("j1", "clarity", "p2", 0, "Tie"),
            ("j1", "clarity", "p2", 2, "B"),
            ("j2", "clarity", "p1", 1, None),
        ]
    ).assign(stratum=lambda f: f["pair_id"].map({"p1": 10, "p2": 20}))
    votes = majority_votes(table, KEYS, carry_columns=["stratum"], names={"judge": "system"})
    assert list(votes.columns) == [
        "system",
        "facet",
        "pair_id",
        "stratum",
        "label_run0",
        "label_run1",
        "label_run2",
        "n_valid_runs",
        "majority_label",
    ]
    records = votes.to_dict("records")
    assert [(r["system"], r["pair_id"], r["stratum"]) for r in records] == [
        ("j1", "p1", 10),
        ("j1", "p2", 20),
        ("j2", "p1", 10),
    ]
    assert [r["majority_label"] for r in records] == ["A", "Tie", None]  # one B and one Tie are no majority
    assert [r["n_valid_runs"] for r in records] == [3, 2, 0]
    assert [records[1][f"label_run{i}"] for i in range(3)] == ["Tie", None, "B"]


def test_swapped_order_is_left_out_and_more_runs_widen_the_table():
    table = verdicts(
        [("j", "f", "p", 0, "B"), ("j", "f", "p", 1, "B"), ("j", "f", "p", 3, "A"), ("j", "f", "p", 0, "A")],
        order=["ab", "ab", "ab", "ba"],
    )
    votes = majority_votes(table, KEYS)
    assert [c for c in votes.columns if c.startswith("label_run")] == [f"label_run{i}" for i in range(4)]
    assert votes.loc[0, "majority_label"] == "B" and votes.loc[0, "n_valid_runs"] == 3
    only_swapped = majority_votes(table[table["order"] == "ba"], KEYS)
    assert only_swapped.empty and only_swapped["n_valid_runs"].dtype == np.int64


def test_errors_name_the_row_and_the_key():
    twice = verdicts([("j", "f", "p", 0, "A"), ("j", "f", "p", 0, "B")])
    with pytest.raises(VotingError, match=r"rows 0 and 1: the same run \(0\) of judge 'j', facet 'f', pair_id 'p'"):
        majority_votes(twice, KEYS)
    with pytest.raises(VotingError, match=r"row 1: label 'b'"):
        majority_votes(verdicts([("j", "f", "p", 0, "A"), ("j", "f", "q", 0, "b")]), KEYS)
    with pytest.raises(VotingError, match=r"row 0: negative run index -1"):
        majority_votes(verdicts([("j", "f", "p", -1, "A")]), KEYS)
    with pytest.raises(VotingError, match="missing column.*pair_id"):
        majority_votes(twice.drop(columns="pair_id"), KEYS)


def test_plurality_and_codes_round_trip():
    votes = np.array([[0, 0, 1], [0, 1, 2], [2, MISSING, 2], [MISSING, MISSING, MISSING], [1, 1, 0]])
    assert decode_labels(plurality_vote(votes)).tolist() == ["A", "Tie", "Tie", None, "B"]
    assert encode_labels(pd.Series(["A", None, "Tie", np.nan])).tolist() == [0, MISSING, 2, MISSING]
    with pytest.raises(VotingError, match="row 2: label 'x'"):
        encode_labels(["A", "B", "x"])
    codes, uniques = factorize_columns(pd.DataFrame({"a": ["y", "x", "y"], "b": [2, 1, 1]}), ["a", "b"])
    assert codes.tolist() == [2, 0, 1] and uniques.to_dict("list") == {"a": ["x", "y", "y"], "b": [1, 1, 2]}
