"""ASPIC+ argumentation theory of the QT30 knowledge base and its Dung framework.

Plain functions, no Dagster. The theory follows the study's derivation from AIF:

- language: the propositions (I-nodes);
- ordinary premises: I-nodes that no inference concludes;
- defeasible rules: one per RA node, ``premises => conclusion`` (an RA with several conclusions
  gives one rule per conclusion); no strict rules;
- contrariness: one entry per CA node and (attacker, attacked) I-node pair: the attacker is a
  contrary of the attacked proposition (directed: a CA gives no symmetric contradiction);
- no preferences, so every attack succeeds as a defeat.

Arguments are built bottom-up (Modgil & Prakken 2013): a premise argument ``[p]`` per ordinary
premise, and for a rule ``a1..an => c`` an argument per combination of one argument for each
antecedent. Construction is bounded: an argument never uses a rule whose conclusion already
concludes one of its sub-arguments (no circular arguments), ``max_depth`` limits the nesting of
rules, and ``max_per_rule`` the combinations per rule; both limits, when hit, are reported.

``A`` attacks ``B`` when the conclusion of ``A`` is a contrary of the conclusion of a sub-argument
``B'`` of ``B`` that is an ordinary premise (undermining) or the conclusion of a defeasible rule
(rebutting). Undercutters would need CA nodes that target RA nodes; their number is reported, and
they are not turned into attacks.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

DEFAULT_MAX_DEPTH = 8
DEFAULT_MAX_PER_RULE = 64


@dataclass(frozen=True)
class Rule:
    rule_id: str  # "<RA node id>" or "<RA node id>/<conclusion>" when the RA has several conclusions
    antecedents: tuple[str, ...]
    consequent: str
    aif_node_id: str


@dataclass(frozen=True)
class Contrary:
    aif_node_id: str  # the CA node
    attacker: str  # I-node that is a contrary of ...
    attacked: str  # ... this I-node


@dataclass
class ArgumentationTheory:
    language: dict[str, str]  # I-node id -> text
    premises: tuple[str, ...]
    rules: tuple[Rule, ...]
    contraries: tuple[Contrary, ...]
    undercutters: int = 0  # CA nodes targeting an RA node (not modelled)


def _key(node_id: str) -> tuple[int, str]:
    return (len(node_id), node_id)


def theory_from_graph(
    node_type: Mapping[str, str],
    text: Mapping[str, str],
    preds: Mapping[str, Sequence[str]],
    succs: Mapping[str, Sequence[str]],
) -> ArgumentationTheory:
    """The ASPIC+ theory of an AIF graph given as node types, texts and adjacency lists."""
    language = {n: text.get(n, "") for n, t in node_type.items() if t == "I"}
    rules: list[Rule] = []
    contraries: list[Contrary] = []
    undercutters = 0
    for node in sorted((n for n, t in node_type.items() if t in ("RA", "CA")), key=_key):
        sources = sorted({p for p in preds.get(node, []) if node_type.get(p) == "I"}, key=_key)
        targets = sorted({s for s in succs.get(node, []) if node_type.get(s) == "I"}, key=_key)
        if node_type[node] == "CA" and any(node_type.get(s) == "RA" for s in succs.get(node, [])):
            undercutters += 1
        if not sources or not targets:
            continue
        if node_type[node] == "RA":
            for target in targets:
                antecedents = tuple(s for s in sources if s != target)
                if not antecedents:
                    continue
                rule_id = node if len(targets) == 1 else f"{node}/{target}"
                rules.append(Rule(rule_id, antecedents, target, node))
        else:
            for source in sources:
                for target in targets:
                    if source != target:
                        contraries.append(Contrary(node, source, target))
    concluded = {r.consequent for r in rules}
    premises = tuple(sorted((i for i in language if i not in concluded), key=_key))
    return ArgumentationTheory(language, premises, tuple(rules), tuple(contraries), undercutters)


@dataclass(frozen=True)
class Argument:
    argument_id: str
    conclusion: str
    top_rule: str | None  # None for a premise argument
    sub_arguments: tuple[str, ...]  # direct sub-arguments
    premises: frozenset[str]
    conclusions: frozenset[str]  # conclusions of every sub-argument, itself included
    rule_conclusions: frozenset[str]  # conclusions of its rule-based sub-arguments, itself included
    depth: int


@dataclass
class ConstructionReport:
    arguments: int = 0
    premise_arguments: int = 0
    rule_arguments: int = 0
    rounds: int = 0
    depth_limit_hit: bool = False
    rules_truncated: list[str] = field(default_factory=list)  # rules whose combinations exceeded max_per_rule
    rules_without_arguments: int = 0  # rules never applicable (an antecedent has no argument)
    circular_skipped: int = 0  # combinations dropped because they would be circular


def _rule_arguments(
    rule: Rule,
    by_conclusion: dict[str, list[Argument]],
    depth: int,
    max_per_rule: int,
    built: dict[str, set[tuple[str, ...]]],
    made_per_rule: dict[str, int],
    truncated: set[str],
    report: ConstructionReport,
) -> list[Argument]:
    """The new arguments of ``depth`` that apply ``rule`` (updating the construction's bookkeeping)."""
    new: list[Argument] = []
    pools = [by_conclusion.get(a, []) for a in rule.antecedents]
    if any(not pool for pool in pools):
        return new
    for combo in itertools.product(*pools):
        if max(c.depth for c in combo) != depth - 1:
            continue  # built in an earlier round, or needs deeper sub-arguments
        key = tuple(c.argument_id for c in combo)
        if key in built[rule.rule_id]:
            continue
        conclusions = frozenset().union(*(c.conclusions for c in combo))
        if rule.consequent in conclusions:
            report.circular_skipped += 1
            continue
        if made_per_rule[rule.rule_id] >= max_per_rule:
            truncated.add(rule.rule_id)
            break
        built[rule.rule_id].add(key)
        made_per_rule[rule.rule_id] += 1
        n = made_per_rule[rule.rule_id]
        new.append(
            Argument(
                f"R{rule.rule_id}" + ("" if n == 1 else f"#{n}"),
                rule.consequent,
                rule.rule_id,
                key,
                frozenset().union(*(c.premises for c in combo)),
                conclusions | {rule.consequent},
                frozenset().union(*(c.rule_conclusions for c in combo)) | {rule.consequent},
                depth,
            )
        )
    return new


def _another_round_would_add(theory: ArgumentationTheory, by_conclusion: dict[str, list[Argument]], depth: int) -> bool:
    """Whether some rule has every antecedent argued and one of them argued at ``depth``."""
    return any(
        all(by_conclusion.get(x) for x in r.antecedents)
        and any(any(c.depth == depth for c in by_conclusion[x]) for x in r.antecedents)
        for r in theory.rules
    )


def build_arguments(
    theory: ArgumentationTheory, max_depth: int = DEFAULT_MAX_DEPTH, max_per_rule: int = DEFAULT_MAX_PER_RULE
) -> tuple[list[Argument], ConstructionReport]:
    """All arguments of the theory, up to the bounds (see module docstring); deterministic order."""
    if max_depth < 0 or max_per_rule < 1:
        raise ValueError("max_depth must be >= 0 and max_per_rule >= 1")
    report = ConstructionReport()
    args: list[Argument] = []
    by_conclusion: dict[str, list[Argument]] = defaultdict(list)
    for p in theory.premises:
        a = Argument(f"P{p}", p, None, (), frozenset([p]), frozenset([p]), frozenset(), 0)
        args.append(a)
        by_conclusion[p].append(a)
    report.premise_arguments = len(args)
    built: dict[str, set[tuple[str, ...]]] = defaultdict(set)  # rule -> sub-argument tuples used
    made_per_rule: dict[str, int] = defaultdict(int)
    truncated: set[str] = set()
    for depth in range(1, max_depth + 1):
        new: list[Argument] = []
        for rule in theory.rules:
            new += _rule_arguments(rule, by_conclusion, depth, max_per_rule, built, made_per_rule, truncated, report)
        report.rounds = depth
        if not new:
            break
        for a in new:
            args.append(a)
            by_conclusion[a.conclusion].append(a)
        if depth == max_depth:
            # would another round add arguments? then the depth limit cut construction short
            report.depth_limit_hit = _another_round_would_add(theory, by_conclusion, depth)
    report.arguments = len(args)
    report.rule_arguments = len(args) - report.premise_arguments
    report.rules_truncated = sorted(truncated, key=_key)
    report.rules_without_arguments = sum(1 for r in theory.rules if made_per_rule[r.rule_id] == 0)
    return args, report


@dataclass(frozen=True)
class Defeat:
    attacker: str
    attacked: str
    contrary_id: str  # CA node
    attack_type: str  # "undermine" or "rebut"
    target_conclusion: str  # the I-node of the attacked sub-argument


def defeats(theory: ArgumentationTheory, arguments: Sequence[Argument]) -> list[Defeat]:
    """Attacks between the arguments; with no preferences every attack is a defeat."""
    by_conclusion: dict[str, list[Argument]] = defaultdict(list)
    containing_premise: dict[str, list[Argument]] = defaultdict(list)
    containing_rule_conclusion: dict[str, list[Argument]] = defaultdict(list)
    for a in arguments:
        by_conclusion[a.conclusion].append(a)
        for p in a.premises:
            containing_premise[p].append(a)
        for c in a.rule_conclusions:
            containing_rule_conclusion[c].append(a)
    out: list[Defeat] = []
    seen: set[tuple[str, str, str, str]] = set()
    for contrary in theory.contraries:
        attackers = by_conclusion.get(contrary.attacker, [])
        if not attackers:
            continue
        targets = [(b, "undermine") for b in containing_premise.get(contrary.attacked, [])]
        targets += [(b, "rebut") for b in containing_rule_conclusion.get(contrary.attacked, [])]
        for a in attackers:
            for b, kind in targets:
                key = (a.argument_id, b.argument_id, contrary.aif_node_id, kind)
                if key in seen:
                    continue
                seen.add(key)
                out.append(Defeat(a.argument_id, b.argument_id, contrary.aif_node_id, kind, contrary.attacked))
    return out


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


def theory_table(theory: ArgumentationTheory) -> pd.DataFrame:
    """The theory as one long table: ``kind`` in {premise, rule, contrary}.

    Columns: ``kind``, ``element_id`` (I-node for a premise, rule id, CA node id), ``antecedents``
    (JSON list of I-node ids; the attacker for a contrary), ``consequent`` (I-node: the premise,
    the rule's conclusion, the attacked proposition), ``text`` (of the consequent), ``aif_node_id``.
    """
    rows = [("premise", p, "[]", p, theory.language.get(p, ""), p) for p in theory.premises]
    rows += [
        (
            "rule",
            r.rule_id,
            json.dumps(list(r.antecedents)),
            r.consequent,
            theory.language.get(r.consequent, ""),
            r.aif_node_id,
        )
        for r in theory.rules
    ]
    rows += [
        (
            "contrary",
            f"{c.aif_node_id}:{c.attacker}->{c.attacked}",
            json.dumps([c.attacker]),
            c.attacked,
            theory.language.get(c.attacked, ""),
            c.aif_node_id,
        )
        for c in theory.contraries
    ]
    return pd.DataFrame(rows, columns=["kind", "element_id", "antecedents", "consequent", "text", "aif_node_id"])


def arguments_table(
    arguments: Sequence[Argument], kb_arguments_of: Mapping[str, Sequence[str]] | None = None
) -> pd.DataFrame:
    """Dung arguments: id, conclusion, top rule, sub-arguments, premises, depth, and the KB
    argument ids (locution-proposition pairs) whose proposition is the conclusion."""
    kb_arguments_of = kb_arguments_of or {}
    return pd.DataFrame(
        [
            (
                a.argument_id,
                "premise" if a.top_rule is None else "rule",
                a.conclusion,
                a.top_rule,
                json.dumps(list(a.sub_arguments)),
                json.dumps(sorted(a.premises, key=_key)),
                a.depth,
                json.dumps(list(kb_arguments_of.get(a.conclusion, []))),
            )
            for a in arguments
        ],
        columns=["dung_id", "kind", "conclusion", "top_rule", "sub_arguments", "premises", "depth", "kb_argument_ids"],
    )


def defeats_table(items: Sequence[Defeat]) -> pd.DataFrame:
    return pd.DataFrame(
        [(d.attacker, d.attacked, d.contrary_id, d.attack_type, d.target_conclusion) for d in items],
        columns=["attacker", "attacked", "contrary_id", "attack_type", "target_conclusion"],
    )


def grounded_extension(argument_ids: Sequence[str], defeat_pairs: Sequence[tuple[str, str]]) -> set[str]:
    """The grounded extension of a Dung framework (least fixpoint of the characteristic function)."""
    attackers: dict[str, set[str]] = defaultdict(set)
    for a, b in defeat_pairs:
        attackers[b].add(a)
    accepted: set[str] = set()
    defeated: set[str] = set()
    changed = True
    while changed:
        changed = False
        for x in argument_ids:
            if x in accepted or x in defeated:
                continue
            if attackers[x] <= defeated:
                accepted.add(x)
                changed = True
        for x in argument_ids:
            if x not in defeated and attackers[x] & accepted:
                defeated.add(x)
                changed = True
    return accepted
