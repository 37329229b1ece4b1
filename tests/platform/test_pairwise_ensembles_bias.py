"""The pairwise core's ensembles and position bias on hand-built study-neutral tables."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import argassets.platform.pairwise as pairwise
from argassets.platform.pairwise.ensembles import ensemble_votes
from argassets.platform.pairwise.position_bias import position_bias_metrics


def test_ensemble_is_the_plurality_of_the_members():
    labels = pd.DataFrame(
        {
            "judge": ["a", "b", "c", "a", "b", "c", "a"],
            "pair_id": ["p", "p", "p", "q", "q", "q", "r"],
            "majority_label": ["A", "A", "B", "A", "B", "Tie", None],
        }
    )
    votes, members = ensemble_votes(labels, "judge", ["pair_id"])
    assert members == ["a", "b", "c"]
    assert votes.to_dict("list") == {
        "pair_id": ["p", "q", "r"],
        "majority_label": ["A", "Tie", None],
        "n_members_voting": [3, 3, 0],
    }
    with pytest.raises(ValueError, match="member 'a' labels the same item twice"):
        ensemble_votes(pd.concat([labels, labels.iloc[:1]]), "judge", ["pair_id"])


def test_position_bias_by_hand():
    # Labels are in the pair's orientation. Judge j, facet f: pair p is A in both orders on runs 0
    # and 1 (consistent); pair q is A in its own order and B in the swapped one on run 0 (the item
    # shown first wins both times: inconsistent).
    rows = [
        ("p", 0, "A", False),
        ("p", 0, "A", True),
        ("p", 1, "A", False),
        ("p", 1, "A", True),
        ("q", 0, "A", False),
        ("q", 0, "B", True),
        ("q", 1, "Tie", False),
        ("q", 1, None, True),
    ]
    frame = pd.DataFrame(rows, columns=["pair_id", "run", "label", "swapped"]).assign(judge="j", facet="f")
    table = position_bias_metrics(frame, ["judge"], "facet", "pair_id", frame["swapped"].to_numpy())
    assert table["facet"].tolist() == ["f", "all"]
    row = table.iloc[0]
    # Pairs judged validly in both orders: p/0, p/1, q/0; consistent: p/0, p/1 (q/0 is A then B as given).
    assert row["n_pairs"] == 3 and row["order_consistency"] == pytest.approx(2 / 3)
    # Presented verdicts: p: A, B(swapped A), A, B; q: A, A(swapped B), Tie -> first 4 of 6 decisive.
    assert row["n_decisive"] == 6 and row["first_position_share"] == pytest.approx(4 / 6)
    assert row["n_judgments"] == 7 and row["tie_share"] == pytest.approx(1 / 7)
    # Majorities: p is A in both orders; q is Tie in both (A + Tie, and one B, are no majority).
    assert row["order_consistency_majority"] == pytest.approx(1.0)
    assert 0 < row["first_position_pvalue"] <= 1 and bool(row["measured"])
    assert table.iloc[1][["n_pairs", "n_decisive"]].tolist() == [3, 6]


def test_the_core_imports_no_study_and_no_dagster():
    for path in Path(pairwise.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                assert not name.startswith(("argassets.argument_quality", "argassets.political", "dagster")), (
                    path.name,
                    name,
                )
    assert np.__name__  # the scan ran over real modules
