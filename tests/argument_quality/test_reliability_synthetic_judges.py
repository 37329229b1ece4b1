"""Synthetic judges built to break exactly one property are flagged on that property and no other.

A synthetic Study A corpus (6 topics of 9 arguments, every pair compared, one dimension) is judged
in both orders, 3 runs each, by an honest judge (the control) and four judges that each break one
property: a position-biased judge, a cyclic judge, a length-biased judge and a noisy but consistent
judge. The whole battery (:func:`reliability_battery`) runs on them, as the asset does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from argassets.argument_quality.reliability import EXPERTS, battery_problems, reliability_battery
from argassets.argument_quality.results_page import trust_sections, trust_table
from argassets.argument_quality.voting import majority_votes
from argassets.platform.pairwise.reliability import FLAGGED_PROPERTY
from argassets.platform.reporting.results_page import results_page
from argassets.platform.stats.intervals import BootstrapSettings

N_TOPICS, N_ITEMS, N_RUNS = 6, 9, 3
SETTINGS = BootstrapSettings(n_resamples=400)
LABELS = np.array(["A", "B", "Tie"], dtype=object)
#: Verdict in the pair's own orientation: first item (A) wins, second (B) wins.
Judge = Callable[[np.ndarray, np.ndarray, bool, int], np.ndarray]


def _corpus(seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """Arguments, expert comparisons (honest labels), and per item its quality and log length."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=N_TOPICS * N_ITEMS)
    length = np.exp(rng.normal(5.0, 0.8, size=N_TOPICS * N_ITEMS)).round() + 1
    topic = np.repeat(np.arange(1, N_TOPICS + 1), N_ITEMS)
    arguments = pd.DataFrame(
        {"topic_id": topic, "discussion_id": 100 + np.arange(len(topic)), "argument_id": 1, "text_length": length}
    )
    i, j = np.triu_indices(N_ITEMS, 1)
    first = (np.arange(N_TOPICS)[:, None] * N_ITEMS + i[None]).ravel()
    second = (np.arange(N_TOPICS)[:, None] * N_ITEMS + j[None]).ravel()
    experts = pd.DataFrame(
        {
            "comparison_id": [f"logic-{k:05d}" for k in range(len(first))],
            "dimension": "logic",
            "topic_id": topic[first],
            "discussion_id_a": 100 + first,
            "argument_id_a": 1,
            "discussion_id_b": 100 + second,
            "argument_id_b": 1,
            "label": np.where(quality[first] > quality[second], "A", "B"),
        }
    )
    return arguments, experts, quality, np.log(length)


def _judgments(name: str, judge: Judge, experts: pd.DataFrame) -> pd.DataFrame:
    """Every comparison in both orders, ``N_RUNS`` runs, labels in the pair's own orientation."""
    first = experts["discussion_id_a"].to_numpy() - 100
    second = experts["discussion_id_b"].to_numpy() - 100
    parts = []
    for order in ("ab", "ba"):
        for run in range(N_RUNS):
            codes = judge(first, second, order == "ba", run)
            parts.append(
                experts[["comparison_id", "dimension", "topic_id"]].assign(
                    judge_model=name, strategy="zero", order=order, run=run, label=LABELS[codes]
                )
            )
    return pd.concat(parts, ignore_index=True)


def _judges(quality: np.ndarray, log_length: np.ndarray) -> dict[str, tuple[Judge, set[str]]]:
    """Each judge and the properties it should be flagged on."""
    noise = np.random.default_rng(11)
    noisy_run = noise.integers(0, N_RUNS, size=(2, N_TOPICS * N_ITEMS * N_ITEMS))
    wrong = noise.integers(1, 3, size=noisy_run.shape)

    def by_utility(utility: np.ndarray) -> Judge:
        return lambda a, b, swapped, run: np.where(utility[a] > utility[b], 0, 1)

    def position(a: np.ndarray, b: np.ndarray, swapped: bool, run: int) -> np.ndarray:
        # Always the slot shown first: A in the pair's own order, B once swapped.
        return np.full(len(a), 1 if swapped else 0)

    def cyclic(a: np.ndarray, b: np.ndarray, swapped: bool, run: int) -> np.ndarray:
        # A regular tournament: each argument beats the next four around its topic's circle.
        return np.where((b - a) % N_ITEMS <= N_ITEMS // 2, 0, 1)

    def noisy(a: np.ndarray, b: np.ndarray, swapped: bool, run: int) -> np.ndarray:
        # The honest verdict, but one run of each pair and order gives one of the other labels.
        honest = np.where(quality[a] > quality[b], 0, 1)
        k = np.arange(len(a))
        hit = noisy_run[int(swapped), k] == run
        return np.where(hit, (honest + wrong[int(swapped), k]) % 3, honest)

    return {
        "honest": (by_utility(quality), set()),
        "position": (position, {"position"}),
        "cyclic": (cyclic, {"transitivity"}),
        "length": (by_utility(0.05 * quality + log_length), {"length"}),
        "noisy": (noisy, {"repetition"}),
    }


@pytest.fixture(scope="module")
def battery() -> pd.DataFrame:
    arguments, experts, quality, log_length = _corpus()
    judges = _judges(quality, log_length)
    judgments = pd.concat([_judgments(n, j, experts) for n, (j, _) in judges.items()], ignore_index=True)
    votes = majority_votes(judgments)
    return reliability_battery(votes, judgments, experts, arguments, SETTINGS)


def _flags(battery: pd.DataFrame, model: str) -> set[str]:
    rows = battery[(battery["model"] == model) & (battery["dimension"] == "all") & battery["flagged"]]
    return {FLAGGED_PROPERTY[m] for m in rows["metric"]}


@pytest.mark.parametrize("model", ["honest", "position", "cyclic", "length", "noisy"])
def test_each_synthetic_judge_is_flagged_on_its_property_only(battery: pd.DataFrame, model: str) -> None:
    _, _, quality, log_length = _corpus()
    assert _flags(battery, model) == _judges(quality, log_length)[model][1]


def test_every_flagged_property_is_measured_for_every_judge(battery: pd.DataFrame) -> None:
    judges = battery[(battery["model"] != EXPERTS) & (battery["dimension"] == "all")]
    measured = judges[judges["metric"].isin(list(FLAGGED_PROPERTY))]
    assert measured["estimate"].notna().all(), measured[measured["estimate"].isna()]


def test_the_experts_are_measured_where_one_label_allows_and_flag_nothing(battery: pd.DataFrame) -> None:
    experts = battery[(battery["model"] == EXPERTS) & (battery["dimension"] == "all")].set_index("metric")
    assert experts.loc["wst_violation_share", "estimate"] == 0.0  # honest labels are transitive
    assert np.isnan(experts.loc["run_agreement", "estimate"])  # one label per pair: nothing to repeat
    assert np.isnan(experts.loc["position_consistency", "estimate"])
    assert _flags(battery, EXPERTS) == set()


def test_regular_tournament_has_its_known_number_of_cycles(battery: pd.DataFrame) -> None:
    # 9 players each beating 4: C(9, 3) - 9 * C(4, 2) = 30 cyclic triads of 84.
    cyclic = battery[(battery["model"] == "cyclic") & (battery["dimension"] == "all")].set_index("metric")
    assert cyclic.loc["cycle_share", "estimate"] == pytest.approx(30 / 84)
    assert cyclic.loc["wst_violation_share", "estimate"] == pytest.approx(30 / 84)
    assert cyclic.loc["cycles_per_topic", "estimate"] == pytest.approx(30.0)
    position = battery[(battery["model"] == "position") & (battery["dimension"] == "all")].set_index("metric")
    assert position.loc["position_consistency", "estimate"] == 0.0


def test_battery_keeps_its_promises(battery: pd.DataFrame) -> None:
    configurations = pd.DataFrame({"model": ["honest", "position", "cyclic", "length", "noisy"], "strategy": "zero"})
    assert battery_problems(battery, configurations).empty
    extra = pd.concat([configurations, pd.DataFrame({"model": ["absent"], "strategy": ["zero"]})])
    assert set(battery_problems(battery, extra)["model"]) == {"absent"}


def test_trust_table_puts_the_experts_on_top_and_names_the_flags(battery: pd.DataFrame) -> None:
    table = trust_table(battery)
    assert table.iloc[0]["model"] == EXPERTS and table.iloc[0]["kind"] == "reference"
    flags = dict(zip(table["model"], table["flags"], strict=True))
    assert flags == {
        EXPERTS: "",
        "cyclic": "transitivity",
        "honest": "",
        "length": "length",
        "noisy": "repetition",
        "position": "position",
    }
    assert table.set_index("model").loc[EXPERTS, "run_agreement"] == "not measured"
    assert table.set_index("model").loc["cyclic", "cycle_share"].startswith("0.357 [")


def test_the_pages_trust_table_shows_every_figure_and_flag(battery: pd.DataFrame) -> None:
    (trust,) = trust_sections(battery)[0].tables
    page = results_page("trust", "", trust_sections(battery))
    header = page.split('data-col="cycle_share"')[0].rsplit("<th", 1)[1]
    assert 'class="key"' in header  # shown at once, not hidden behind "all columns"
    assert {"cycle_share", "flags"} <= set(trust.keys) and "0.357 [" in page and ">transitivity<" in page
