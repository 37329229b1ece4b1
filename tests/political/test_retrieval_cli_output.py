"""``argassets retrieve`` as a terminal user meets it: names in any case, a similarity floor, no
repeated lines, and a ``--system`` help whose examples are valid names (issue 34 item 5)."""

from __future__ import annotations

import argparse
import re

import pytest

from argassets.political import cli_retrieval
from argassets.political.retrieval.query import PoliticalFilter, RetrievalError, RetrievalQuery, RetrievalResult
from argassets.studies import code_location_studies, load_registry
from tests.political.retrieval_graph import QUERY, synthetic_store

ENSEMBLES = {"E1", "E2", "E3"}


def _result(argument_id: str, similarity: float, locution: str = "same words") -> RetrievalResult:
    return RetrievalResult(
        argument_id=argument_id,
        locution=locution,
        proposition="",
        force="Asserting",
        similarity=similarity,
        position=None,
    )


def test_a_force_or_system_in_another_case_finds_what_the_right_case_finds() -> None:
    store = synthetic_store()
    right = RetrievalQuery("q", "vector", k=3, force="Asserting", filter=PoliticalFilter("E1", 0, 100))
    wrong_case = RetrievalQuery("q", "vector", k=3, force="asserting", filter=PoliticalFilter("e1", 0, 100))
    # The control: the store itself matches exactly, so a wrong case found nothing (or failed).
    assert store.search(RetrievalQuery("q", "vector", k=3, force="asserting"), QUERY) == []
    fixed = cli_retrieval.canonical_query(wrong_case, store.forces, store.systems)
    assert fixed.force == "Asserting" and fixed.filter is not None and fixed.filter.system == "E1"
    assert store.search(fixed, QUERY) == store.search(right, QUERY) != []
    chosen = RetrievalQuery("q", "chosen", k=1, neighbour_forces=("ASSERTING",))
    assert cli_retrieval.canonical_query(chosen, store.forces, store.systems).neighbour_forces == ("Asserting",)


def test_an_unknown_force_or_system_is_named_with_the_known_ones() -> None:
    store = synthetic_store()
    with pytest.raises(RetrievalError, match=r"force 'Asertin' is not in the knowledge base \(known: .*Asserting"):
        cli_retrieval.canonical_query(RetrievalQuery("q", "vector", force="Asertin"), store.forces, store.systems)
    with pytest.raises(RetrievalError, match=r"system 'GPT-4o' is not in the knowledge base \(known: E1"):
        query = RetrievalQuery("q", "vector", filter=PoliticalFilter("GPT-4o", 0, 100))
        cli_retrieval.canonical_query(query, store.forces, store.systems)


def test_results_below_the_floor_and_repeated_lines_are_left_out_and_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = [
        _result("a1", 0.9),
        _result("a2", 0.9),  # the same texts under another id: the same line
        _result("a3", 0.4, "other words"),
        _result("a4", -0.03, "pointing away"),
    ]
    cli_retrieval.print_results(results, as_json=False, floor=cli_retrieval.DEFAULT_MIN_SIMILARITY)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "[0.900] 'same words'",
        "[0.400] 'other words'",
        "(1 result(s) below similarity 0.0 left out: --min-similarity to change)",
        "(1 repeated line(s) left out: the same texts under another argument id; --json shows them)",
    ]
    cli_retrieval.print_results(results, as_json=False, floor=-1.0)
    assert "[-0.030] 'pointing away'" in capsys.readouterr().out


def _help_of(option: str) -> str:
    sub = argparse.ArgumentParser().add_subparsers()
    cli_retrieval.add_commands(sub, code_location_studies())
    [action] = [a for a in sub.choices["retrieve"]._actions if option in a.option_strings]
    return str(action.help)


def test_the_system_examples_in_the_help_are_valid_names() -> None:
    examples = re.search(r"e\.g\. ([^;)]*)", _help_of("--system"))
    assert examples is not None
    names = [name.strip() for name in examples.group(1).split(",")]
    assert names and all(name in ENSEMBLES or name in load_registry().names for name in names), names


def test_min_similarity_outside_a_cosines_range_is_refused() -> None:
    parser = argparse.ArgumentParser()
    cli_retrieval.add_commands(parser.add_subparsers(), code_location_studies())
    with pytest.raises(SystemExit):
        parser.parse_args(["retrieve", "x", "--min-similarity", "1.5"])
    assert parser.parse_args(["retrieve", "x", "--min-similarity", "0.3"]).min_similarity == 0.3
