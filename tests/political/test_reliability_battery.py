"""Study B's reliability battery: synthetic pointwise judges built to break one property each are
flagged on that property and no other; the humans' row is the annotators' own alpha."""

from __future__ import annotations

import re

import krippendorff
import numpy as np
import pandas as pd
import pytest

from argassets.platform.stats.intervals import BootstrapSettings
from argassets.political.reliability import (
    BATTERY_METRICS,
    FLAGGED_PROPERTY,
    HUMANS,
    HUMANS_NO_SCORE,
    battery_problems,
    pointwise_human_labels,
    reliability_battery,
)
from argassets.political.results_page import political_page_html
from argassets.political.results_page_trust import TRUST_ANCHOR, trust_table
from tests.results_page_frames import POLITICAL_REGISTRY, political_pairwise_frame, political_pointwise_frame

N_ARGUMENTS, N_DEBATES, N_REPETITIONS = 240, 12, 5
SETTINGS = BootstrapSettings(n_resamples=400, seed=7)


def _judge(name: str, rng: np.random.Generator) -> pd.DataFrame:
    """One judge's 5 repetitions per argument: an honest one, or one that breaks a single property."""
    truth = rng.choice(np.r_[5:45, 55:96], N_ARGUMENTS).astype(float)
    apolitical = np.arange(N_ARGUMENTS) % 10 < 3  # the same 30% every time: NA is consistent
    shape = (N_ARGUMENTS, N_REPETITIONS)
    score = np.clip(truth[:, None] + rng.integers(-2, 3, shape), 1, 99)
    is_na = np.broadcast_to(apolitical[:, None], shape).copy()
    if name == "noisy":  # a new score each repetition
        score = rng.choice(np.r_[1:50, 51:100], shape).astype(float)
    elif name == "na-happy":  # NA on a whim, more often than not
        is_na = rng.random(shape) < 0.6
    elif name == "always-50":
        score = np.full(shape, 50.0)
    arguments = np.repeat([f"arg{i}" for i in range(N_ARGUMENTS)], N_REPETITIONS)
    return pd.DataFrame(
        {
            "judge_model": name,
            "argument_id": arguments,
            "repetition": np.tile(np.arange(N_REPETITIONS), N_ARGUMENTS),
            "score": np.where(is_na, np.nan, score).ravel(),
            "is_na": is_na.ravel(),
            "is_valid": True,
        }
    )


def _debates() -> pd.Series:
    return pd.Series(
        [f"debate{i % N_DEBATES}" for i in range(N_ARGUMENTS)], index=[f"arg{i}" for i in range(N_ARGUMENTS)]
    )


@pytest.fixture(scope="module")
def battery() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    predictions = pd.concat([_judge(n, rng) for n in ("honest", "noisy", "na-happy", "always-50")])
    labels = rng.integers(0, 2, (60, 3)).astype(float)
    return reliability_battery(
        predictions, _debates(), [f"arg{i}" for i in range(60)], labels, [f"arg{i}" for i in range(60)], SETTINGS
    )


@pytest.mark.parametrize(
    ("judge", "broken"), [("honest", set()), ("noisy", {"repetition"}), ("na-happy", {"NA"}), ("always-50", {"scale"})]
)
@pytest.mark.parametrize("scope", ["study", "kb"])
def test_each_synthetic_judge_is_flagged_on_its_property_only(
    battery: pd.DataFrame, judge: str, broken: set[str], scope: str
) -> None:
    rows = battery[(battery["system"] == judge) & (battery["scope"] == scope)]
    assert sorted(rows["metric"]) == sorted(BATTERY_METRICS)
    assert {FLAGGED_PROPERTY[m] for m in rows.loc[rows["flagged"], "metric"]} == broken


def test_the_broken_figures_are_where_the_construction_puts_them(battery: pd.DataFrame) -> None:
    kb = battery[battery["scope"] == "kb"].set_index(["system", "metric"])["estimate"]
    assert kb["honest", "alpha_score"] > 0.95 and kb["noisy", "alpha_score"] < 0.1
    assert kb["honest", "alpha_na"] == pytest.approx(1.0) and kb["na-happy", "alpha_na"] < 0.1
    assert kb["na-happy", "na_share"] == pytest.approx(0.6, abs=0.03)
    assert kb["honest", "na_inconsistent_share"] == 0.0 and kb["na-happy", "na_inconsistent_share"] > 0.8
    assert kb["always-50", "share_50"] == 1.0 and kb["always-50", "spread"] == 0.0
    assert np.isnan(kb["always-50", "alpha_score"])  # no variation: alpha undefined, not flagged


def test_every_interval_contains_its_estimate_and_the_battery_keeps_its_promises(battery: pd.DataFrame) -> None:
    measured = battery[np.isfinite(battery["estimate"].astype(float))]
    bounded = measured[np.isfinite(measured["low"].astype(float))]
    assert len(bounded) > 0.8 * len(measured)
    assert (bounded["low"] <= bounded["estimate"] + 1e-12).all()
    assert (bounded["estimate"] <= bounded["high"] + 1e-12).all()
    assert battery_problems(battery, ["honest", "noisy", "na-happy", "always-50"]).empty
    broken = battery.copy()
    broken.loc[broken.index[broken["metric"] == "na_share"][0], "low"] = 2.0
    assert len(battery_problems(broken, ["honest"])) == 1
    assert len(battery_problems(battery, ["honest", "unknown"])) == len(BATTERY_METRICS) * 2


def test_the_humans_row_is_the_annotators_alpha_from_their_table() -> None:
    """A small annotation table with participant ids, read as the asset reads it, against krippendorff."""
    rng = np.random.default_rng(5)
    items = [f"m{i}" for i in range(40)]
    table = pd.DataFrame(
        {
            "task": "pointwise",
            "item": np.repeat(items, 3),
            "participant_id": [f"p{rng.integers(0, 15)}-{k}" for k in range(120)],
            "label": (rng.random(120) < np.repeat(np.linspace(0.1, 0.9, 40), 3)).astype(int),
        }
    )
    study_items = pd.DataFrame({"study": "pointwise", "meta_id": items, "argument_id": [f"arg{i}" for i in range(40)]})
    labels, arguments = pointwise_human_labels(table, study_items)
    battery = reliability_battery(_judge("honest", rng), _debates(), arguments, labels, arguments, SETTINGS)
    humans = battery[battery["system"] == HUMANS].set_index("metric")
    matrix = table["label"].to_numpy(dtype=float).reshape(40, 3).T
    assert humans.loc["alpha_na", "estimate"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"), abs=1e-10
    )
    assert humans.loc["na_share", "estimate"] == pytest.approx((matrix == 0).mean())
    split = (matrix.min(axis=0) != matrix.max(axis=0)).mean()
    assert humans.loc["na_inconsistent_share", "estimate"] == pytest.approx(split)
    assert (humans.loc[["alpha_score", "share_50", "spread"], "interval_method"] == HUMANS_NO_SCORE).all()
    assert list(battery["system"])[0] == HUMANS and set(humans["scope"]) == {"study"}


def test_an_argument_without_a_debate_is_refused_by_name() -> None:
    predictions = _judge("honest", np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"honest \(study\): argument 'arg3' has no debate"):
        reliability_battery(predictions, _debates().drop("arg3"), ["arg3"], settings=SETTINGS)


def test_the_trust_table_puts_the_humans_first_and_says_what_is_not_measured(battery: pd.DataFrame) -> None:
    table = trust_table(battery)
    assert list(table["scope"].iloc[:5]) == ["study"] * 5 and table["system"].iloc[0] == HUMANS
    humans = table.iloc[0]
    assert humans["alpha_score"] == "not measured" and re.fullmatch(
        r"-?0\.\d{3} \[-?0\.\d{3}, 0\.\d{3}\]", humans["alpha_na"]
    )
    flags = table[table["scope"] == "kb"].set_index("system")["flags"]
    assert flags.to_dict() == {"always-50": "scale", "honest": "", "na-happy": "NA", "noisy": "repetition"}
    page = political_page_html(
        political_pairwise_frame(), political_pointwise_frame(), POLITICAL_REGISTRY, battery=battery
    )
    trust = page[page.index(f'id="{TRUST_ANCHOR}"') :]
    assert "Trust: the reliability battery" in trust and "not measured" in trust
    assert trust.index(">humans<") < trust.index(">honest<")
    assert humans["alpha_na"] in trust
    for metric in BATTERY_METRICS:  # shown at once, not hidden behind "all columns"
        assert f'<th class="key" data-col="{metric}"' in trust
