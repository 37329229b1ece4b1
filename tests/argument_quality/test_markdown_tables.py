"""Study A's Markdown tables on the asset and check pages, built by the one Markdown helper."""

from __future__ import annotations

import pandas as pd

from argassets.argument_quality.judgments import label_summary_markdown
from argassets.platform.reporting.presentation import markdown_table
from asset_checks.argument_quality import judgments as checks


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_label_summary_counts_outcomes_and_the_invalid_share():
    table = pd.DataFrame(
        {
            "strategy": ["zero"] * 4 + ["cot"] * 2,
            "dimension": "logic",
            "order": "ab",
            "label": ["A", "B", None, "Tie", "A", "A"],
        }
    )
    lines = label_summary_markdown(table).splitlines()
    assert cells(lines[0]) == [
        "strategy",
        "dimension",
        "order",
        "A",
        "B",
        "Tie",
        "invalid",
        "invalid share",
    ]
    assert [cells(line) for line in lines[2:]] == [
        ["cot", "logic", "ab", "2", "0", "0", "0", "0.00%"],
        ["zero", "logic", "ab", "1", "1", "1", "1", "25.00%"],
    ]
    valid_only = label_summary_markdown(table.dropna()).splitlines()
    assert cells(valid_only[0])[-2:] == ["Tie", "invalid share"] and cells(valid_only[2])[-1] == "0.00%"
    assert label_summary_markdown(table.iloc[0:0]) == "_no judgments in this partition_"


def test_connectivity_check_lists_every_graph_and_fails_on_a_split_one():
    comparisons = pd.DataFrame(
        {
            "comparison_id": ["c1", "c2", "c3"],
            "topic_id": [4, 4, 9],
            "dimension": ["logic", "logic", "logic"],
            "discussion_id_a": [1, 3, 1],
            "argument_id_a": [1, 1, 1],
            "discussion_id_b": [2, 4, 2],
            "argument_id_b": [1, 1, 1],
        }
    )
    result = checks.webis_expert_comparisons_connected(comparisons)
    assert not result.passed and result.metadata["disconnected_graphs"].value == 1
    lines = result.metadata["components"].value.splitlines()
    assert cells(lines[0]) == [
        "topic",
        "dimension",
        "arguments",
        "comparisons",
        "components",
        "largest component",
    ]
    assert [cells(line) for line in lines[2:]] == [
        ["4", "logic", "4", "2", "2", "2"],
        ["9", "logic", "2", "1", "1", "2"],
    ]


def test_missing_floats_are_blank_not_nan():
    table = markdown_table(pd.DataFrame({"model": ["m", "published"], "expected_cohen_kappa": [0.41234, float("nan")]}))
    lines = table.splitlines()
    assert cells(lines[2]) == ["m", "0.412"]
    assert cells(lines[3]) == ["published", ""]
