"""ASPIC+ theory from AIF and its Dung framework: known answers on small graphs, bounds, real data."""

from __future__ import annotations

import json

import pytest

from argassets.political import aspic


def graph(nodes: dict[str, str], edges: list[tuple[str, str]]):
    preds: dict[str, list[str]] = {}
    succs: dict[str, list[str]] = {}
    for a, b in edges:
        succs.setdefault(a, []).append(b)
        preds.setdefault(b, []).append(a)
    return nodes, {n: f"text {n}" for n in nodes}, preds, succs


def small_theory() -> aspic.ArgumentationTheory:
    # p, q => r (RA1);  r => s (RA2);  t attacks r (CA1);  u attacks p (CA2);  p attacks u (CA3)
    nodes = {
        "p": "I",
        "q": "I",
        "r": "I",
        "s": "I",
        "t": "I",
        "u": "I",
        "RA1": "RA",
        "RA2": "RA",
        "CA1": "CA",
        "CA2": "CA",
        "CA3": "CA",
    }
    edges = [
        ("p", "RA1"),
        ("q", "RA1"),
        ("RA1", "r"),
        ("r", "RA2"),
        ("RA2", "s"),
        ("t", "CA1"),
        ("CA1", "r"),
        ("u", "CA2"),
        ("CA2", "p"),
        ("p", "CA3"),
        ("CA3", "u"),
    ]
    return aspic.theory_from_graph(*graph(nodes, edges))


def test_theory_elements() -> None:
    theory = small_theory()
    assert theory.premises == ("p", "q", "t", "u")
    assert [(r.rule_id, r.antecedents, r.consequent) for r in theory.rules] == [
        ("RA1", ("p", "q"), "r"),
        ("RA2", ("r",), "s"),
    ]
    assert [(c.aif_node_id, c.attacker, c.attacked) for c in theory.contraries] == [
        ("CA1", "t", "r"),
        ("CA2", "u", "p"),
        ("CA3", "p", "u"),
    ]
    table = aspic.theory_table(theory)
    assert table["kind"].value_counts().to_dict() == {"premise": 4, "rule": 2, "contrary": 3}
    rule = table[table["element_id"] == "RA1"].iloc[0]
    assert json.loads(rule["antecedents"]) == ["p", "q"] and rule["consequent"] == "r" and rule["text"] == "text r"


def test_arguments_and_defeats_have_the_known_answer() -> None:
    theory = small_theory()
    args, report = aspic.build_arguments(theory)
    by_id = {a.argument_id: a for a in args}
    assert sorted(by_id) == ["Pp", "Pq", "Pt", "Pu", "RRA1", "RRA2"]
    assert by_id["RRA2"].sub_arguments == ("RRA1",) and by_id["RRA2"].depth == 2
    assert by_id["RRA2"].premises == frozenset({"p", "q"})
    assert by_id["RRA2"].rule_conclusions == frozenset({"r", "s"})
    assert (report.premise_arguments, report.rule_arguments, report.depth_limit_hit) == (4, 2, False)
    found = {(d.attacker, d.attacked, d.attack_type) for d in aspic.defeats(theory, args)}
    assert found == {
        ("Pt", "RRA1", "rebut"),
        ("Pt", "RRA2", "rebut"),  # t rebuts r, in RA1 and inside RA2
        ("Pu", "Pp", "undermine"),
        ("Pu", "RRA1", "undermine"),
        ("Pu", "RRA2", "undermine"),
        ("Pp", "Pu", "undermine"),
    }
    grounded = aspic.grounded_extension([a.argument_id for a in args], [(a, b) for a, b, _ in found])
    # p and u attack each other (undecided); t is unattacked and defeats both rule arguments
    assert grounded == {"Pq", "Pt"}


def test_circular_rules_are_finite_and_depth_is_bounded() -> None:
    nodes = {"a": "I", "b": "I", "c": "I", "R1": "RA", "R2": "RA", "R3": "RA"}
    # a => b, b => a (circle), b => c; a is concluded, so no premise: nothing is buildable
    edges = [("a", "R1"), ("R1", "b"), ("b", "R2"), ("R2", "a"), ("b", "R3"), ("R3", "c")]
    theory = aspic.theory_from_graph(*graph(nodes, edges))
    assert theory.premises == ()
    args, report = aspic.build_arguments(theory)
    assert report.rule_arguments == 0 and report.rules_without_arguments == 3
    # a chain p => x1 => x2 => x3 cut at depth 2 reports the hit limit
    nodes = {"p": "I", "x1": "I", "x2": "I", "x3": "I", "R1": "RA", "R2": "RA", "R3": "RA"}
    edges = [("p", "R1"), ("R1", "x1"), ("x1", "R2"), ("R2", "x2"), ("x2", "R3"), ("R3", "x3")]
    theory = aspic.theory_from_graph(*graph(nodes, edges))
    args, report = aspic.build_arguments(theory, max_depth=2)
    assert [a.argument_id for a in args] == ["Pp", "RR1", "RR2"]
    assert report.depth_limit_hit is True
    args, report = aspic.build_arguments(theory, max_depth=3)
    assert len(args) == 4 and report.depth_limit_hit is False
    with pytest.raises(ValueError):
        aspic.build_arguments(theory, max_per_rule=0)


def test_combinations_are_capped_per_rule() -> None:
    # c is concluded by two rules from premises; d <= c, c is argued twice -> two arguments for d
    nodes = {"p": "I", "q": "I", "c": "I", "d": "I", "R1": "RA", "R2": "RA", "R3": "RA"}
    edges = [("p", "R1"), ("R1", "c"), ("q", "R2"), ("R2", "c"), ("c", "R3"), ("R3", "d")]
    theory = aspic.theory_from_graph(*graph(nodes, edges))
    args, report = aspic.build_arguments(theory)
    assert sorted(a.argument_id for a in args) == ["Pp", "Pq", "RR1", "RR2", "RR3", "RR3#2"]
    args, report = aspic.build_arguments(theory, max_per_rule=1)
    assert sorted(a.argument_id for a in args) == ["Pp", "Pq", "RR1", "RR2", "RR3"]
    assert report.rules_truncated == ["R3"]


def test_real_theory_and_framework(qt30_kb) -> None:
    g = qt30_kb.graph
    theory = aspic.theory_from_graph(g.node_type, g.text, g.preds, g.succs)
    assert (len(theory.language), len(theory.premises), len(theory.rules), len(theory.contraries)) == (
        20451,
        15468,
        5640,
        1221,
    )
    args, report = aspic.build_arguments(theory)
    assert (report.premise_arguments, report.rule_arguments) == (15468, 5769)
    assert report.depth_limit_hit is False and report.rules_truncated == []
    assert max(a.depth for a in args) == 7
    found = aspic.defeats(theory, args)
    assert len(found) == 1630
    assert {d.attack_type for d in found} == {"undermine", "rebut"}
    table = aspic.arguments_table(args, qt30_kb.arguments.groupby("i_node_id")["argument_id"].apply(list).to_dict())
    assert table["dung_id"].is_unique
    linked = table["kb_argument_ids"].map(json.loads).map(len)
    assert (linked > 0).mean() > 0.99
