"""Adaptive judging in rounds (platform/judging/adaptive_rounds.py) and its registry option, service-free.

A judge answering from a known Bradley-Terry ranking with noise; rounds go through a dict standing
in for the judgment cache, so resumption and re-runs are counted exactly.
"""

from __future__ import annotations

import itertools
import tomllib
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from argassets.platform.design.adaptive import round_scores
from argassets.platform.judging.adaptive_rounds import AdaptiveOutcome, check_pairs, judge_in_rounds
from argassets.platform.judging.interface import CachedCompletion, ChatRequest
from argassets.platform.registry.adaptive import AdaptiveJudging
from argassets.platform.registry.diff import entry_fingerprint
from argassets.platform.registry.entries import RegistryError, parse_registry
from argassets.studies import code_location_studies

N_ITEMS = 20
N_GROUPS = 2
N_RUNS = 3
TRUTH = np.linspace(-5.0, 5.0, N_ITEMS)


def design(cells: tuple[str, ...] = ("logic", "rhetoric")) -> tuple[list[ChatRequest], pd.DataFrame]:
    """Every pair of every group in every cell, one request per pair."""
    rows = []
    for cell, group, (i, j) in itertools.product(cells, range(N_GROUPS), itertools.combinations(range(N_ITEMS), 2)):
        rows.append((f"{cell}:{group}:{i}-{j}", cell, f"{group}:{i}-{j}", group, f"item{i}", f"item{j}"))
    pairs = pd.DataFrame(rows, columns=["key", "cell", "pair_id", "group", "item_a", "item_b"])
    return [ChatRequest(key=k, system="", user=k) for k in pairs["key"]], pairs


class TruthJudge:
    """Answers from the BT model of ``TRUTH`` (``noisy``) or a fair coin; remembers what it answered."""

    def __init__(self, noisy: bool = True, die_at_call: int | None = None):
        self.cache: dict[tuple[str, int], CachedCompletion] = {}
        self.noisy = noisy
        self.die_at_call = die_at_call
        self.calls = 0
        self.sent: list[int] = []

    def _answer(self, key: str, run: int) -> str:
        rng = np.random.default_rng([zlib.crc32(key.encode()), run])
        i, j = (int(x) for x in key.split(":")[2].split("-"))
        p_a = 1 / (1 + np.exp(TRUTH[j] - TRUTH[i])) if self.noisy else 0.5
        return "A" if rng.random() < p_a else "B"

    def send(self, requests: list[ChatRequest]) -> list[CachedCompletion]:
        self.calls += 1
        if self.die_at_call == self.calls:
            raise RuntimeError("worker killed")
        out, sent = [], 0
        for request in requests:
            for run in range(N_RUNS):
                cached = self.cache.get((request.key, run))
                if cached is None:
                    sent += 1
                    text = self._answer(request.key, run)
                    cached = CachedCompletion(request.key, run, "m", "", "", text, None, 0.0, "", "", "t", False)
                    self.cache[(request.key, run)] = cached
                    out.append(cached)
                else:
                    out.append(CachedCompletion(**{**cached.__dict__, "from_cache": True}))
        self.sent.append(sent)
        return out


def verdicts(completions):
    return [c.text for c in completions]


RANK_STABILITY = AdaptiveJudging(stop="rank_stability", threshold=0.95, max_share=0.9, first_round=0.15, round_size=0.1)


def judged_strengths(outcome: AdaptiveOutcome, pairs: pd.DataFrame, cell: str) -> pd.DataFrame:
    place = pairs.set_index("key")
    judged = pd.DataFrame(
        {"pair_id": [place.at[c.key, "pair_id"] for c in outcome.completions], "label": verdicts(outcome.completions)}
    )
    mine = [place.at[c.key, "cell"] == cell for c in outcome.completions]
    candidates = pairs[pairs["cell"] == cell].drop(columns=["key", "cell"])
    return round_scores(candidates, judged[mine].assign(round=0))


def truth_agreement(outcome: AdaptiveOutcome, pairs: pd.DataFrame, cell: str) -> float:
    """Spearman's rho between the BT strengths of the judged pairs and the truth."""
    scores = judged_strengths(outcome, pairs, cell)
    return float(stats.spearmanr(scores["strength"], TRUTH[scores["item"].str.removeprefix("item").astype(int)])[0])


def test_a_judge_with_known_truth_stops_by_rank_stability_before_the_budget_and_ranks_truly():
    """Five seeds x two cells: the stop fires as stated, before the budget, and the ranking it
    stops on agrees with the truth at the threshold (median; none below 0.9: stability is
    measured against the judge's own earlier rounds, not the truth)."""
    requests, pairs = design()
    agreement = []
    for seed in range(5):
        option = RANK_STABILITY.model_copy(update={"seed": seed})
        outcome = judge_in_rounds(requests, pairs, option.settings(), TruthJudge().send, verdicts)
        assert [c.reason for c in outcome.cells] == ["rank_stable", "rank_stable"]
        for cell in outcome.cells:
            assert cell.stability >= RANK_STABILITY.threshold  # fired as stated
            assert cell.share_judged < RANK_STABILITY.max_share and cell.rounds >= 2
            agreement.append(truth_agreement(outcome, pairs, cell.cell))
        assert 0 < outcome.share_judged < RANK_STABILITY.max_share
        note = f"partial by design (adaptive, {outcome.share_judged:.1%} judged, stopped by rank stability)"
        assert outcome.note() == note
        # Only the judged pairs come back, each with every run.
        keys = pd.Series([c.key for c in outcome.completions])
        assert keys.value_counts().eq(N_RUNS).all() and keys.nunique() < len(requests)
    assert np.median(agreement) >= RANK_STABILITY.threshold and min(agreement) >= 0.9


def test_a_coin_flipping_judge_does_not_rank_like_the_truth():
    """The control: the same rounds on a judge with no signal give a ranking unrelated to the truth."""
    requests, pairs = design(("logic",))
    outcome = judge_in_rounds(requests, pairs, RANK_STABILITY.settings(), TruthJudge(noisy=False).send, verdicts)
    assert abs(truth_agreement(outcome, pairs, "logic")) < 0.6


def test_interval_width_and_budget_stop_as_stated():
    requests, pairs = design(("logic",))
    wide = AdaptiveJudging(stop="interval_width", threshold=6.0, first_round=0.15, round_size=0.1)
    outcome = judge_in_rounds(requests, pairs, wide.settings(), TruthJudge().send, verdicts)
    (cell,) = outcome.cells
    assert cell.reason == "interval_width" and cell.interval_width <= 6.0 and cell.share_judged < 1
    tight = AdaptiveJudging(stop="interval_width", threshold=0.01, max_share=0.3, first_round=0.15, round_size=0.1)
    outcome = judge_in_rounds(requests, pairs, tight.settings(), TruthJudge().send, verdicts)
    (cell,) = outcome.cells
    assert cell.reason == "budget" and cell.share_judged == pytest.approx(0.3, abs=1 / cell.candidate_pairs)
    assert "stopped by max share" in outcome.note()
    assert outcome.metadata()["design_cells"][0]["stop_reason"] == "budget"


def test_a_rerun_sends_nothing_and_a_killed_run_resumes_at_its_round():
    requests, pairs = design()
    settings = RANK_STABILITY.settings()
    judge = TruthJudge()
    first = judge_in_rounds(requests, pairs, settings, judge.send, verdicts)
    assert sum(judge.sent) == len(first.completions) and len(judge.sent) >= 3
    judge.sent.clear()
    again = judge_in_rounds(requests, pairs, settings, judge.send, verdicts)
    assert sum(judge.sent) == 0 and again.completions == [
        CachedCompletion(**{**c.__dict__, "from_cache": True}) for c in first.completions
    ]
    # Killed in its third round: rounds 0 and 1 are cached and replayed, the rest is sent once.
    killed = TruthJudge(die_at_call=3)
    with pytest.raises(RuntimeError, match="killed"):
        judge_in_rounds(requests, pairs, settings, killed.send, verdicts)
    before = sum(killed.sent)
    killed.die_at_call, killed.sent = None, []
    resumed = judge_in_rounds(requests, pairs, settings, killed.send, verdicts)
    assert killed.sent[:2] == [0, 0] and before + sum(killed.sent) == len(first.completions)
    assert [c.key for c in resumed.completions] == [c.key for c in first.completions]


def test_the_pairs_must_match_the_requests():
    requests, pairs = design(("logic",))
    with pytest.raises(ValueError, match="model 'x': the study's adaptive_pairs lack the column"):
        check_pairs(pairs.drop(columns=["group"]), requests, "model 'x'")
    with pytest.raises(ValueError, match="model 'x': request 'logic:0:0-1' is in only one"):
        check_pairs(pairs.iloc[1:], requests, "model 'x'")


ENTRY = '[[models]]\nname = "adaptive-judge"\nbackend = "random"\nstudies = [{studies}]\nadaptive = {option}\n'


def registry(option: str, studies: str = '"argument_quality"'):
    text = ENTRY.format(option=option, studies=studies)
    return parse_registry(tomllib.loads(text), "models.toml", studies=code_location_studies())


@pytest.mark.parametrize(
    ("option", "field", "says"),
    [
        ('{ stop = "kendall", threshold = 0.9 }', "adaptive.stop", "rank_stability"),
        ('{ stop = "rank_stability", threshold = 1.5 }', "adaptive", "Spearman rho in (0, 1]"),
        ('{ stop = "interval_width", threshold = 0 }', "adaptive", "width > 0"),
        ('{ stop = "rank_stability", threshold = 0.9, max_share = 0 }', "adaptive.max_share", "greater than 0"),
        ('{ stop = "rank_stability", threshold = 0.9, rounds = 3 }', "adaptive.rounds", "Extra inputs"),
        ("{ threshold = 0.9 }", "adaptive.stop", "Field required"),
    ],
)
def test_bad_option_values_are_refused_naming_the_entry_and_field(option: str, field: str, says: str):
    with pytest.raises(RegistryError) as error:
        registry(option)
    message = str(error.value)
    assert "models.toml: entry #1 ('adaptive-judge'): field " + f"'{field}'" in message and says in message


def test_a_study_without_pairs_refuses_the_option_and_the_default_is_off():
    with pytest.raises(RegistryError, match="study 'political' declares no pairs"):
        registry('{ stop = "rank_stability", threshold = 0.9 }', '"argument_quality", "political"')
    entry = registry('{ stop = "rank_stability", threshold = 0.9 }').get("adaptive-judge")
    assert entry.adaptive is not None and entry.adaptive.settings().stability == 0.9
    assert entry.adaptive.settings().interval_width is None and entry.adaptive.settings().agreement is None
    plain = parse_registry(
        {"models": [{"name": "plain", "backend": "random", "studies": ["argument_quality"]}]},
        studies=code_location_studies(),
    )
    assert plain.get("plain").adaptive is None


def test_turning_the_option_on_changes_the_entry_for_the_sensor():
    studies = code_location_studies()
    plain = {"name": "judge", "backend": "random", "studies": ["argument_quality"]}
    adaptive = {**plain, "adaptive": {"stop": "rank_stability", "threshold": 0.9}}
    before, after = (
        entry_fingerprint(parse_registry({"models": [entry]}, studies=studies).get("judge"), studies)
        for entry in (plain, adaptive)
    )
    assert before != after  # the sensor judges the partition again, in rounds
    # Left off, the option changes no fingerprint taken before it existed (pinned hashes:
    # test_sensors_registry_diff.py::test_fingerprints_did_not_change_when_scopes_became_per_study).
