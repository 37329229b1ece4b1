"""Expert BT scores on the real Webis-ArgQuality-20 comparisons against the published z-scores.

Measured with the defaults (ties as one win each way, alpha = 0.001), per dimension:
logic r = 0.99959, rho = 0.99960; rhetoric r = 0.99961, rho = 0.99948;
dialectic r = 0.99901, rho = 0.99913 (1,269 compared arguments each).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from argassets.argument_quality.bradley_terry import DEFAULT_SETTINGS, BTSettings
from argassets.argument_quality.bt_scores import (
    MEAN_DIMENSION,
    expert_bt_scores,
    expert_fit_summary,
    published_scores,
    tie_handling_candidates,
)
from argassets.argument_quality.corpus import load_corpus, locate_corpus
from argassets.argument_quality.report_checks import disconnected_topics


@pytest.fixture(scope="module")
def corpus(shared_data_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return load_corpus(locate_corpus(shared_data_dir))


@pytest.fixture(scope="module")
def expert_scores(corpus) -> pd.DataFrame:
    arguments, comparisons = corpus
    return expert_bt_scores(comparisons, arguments)


def test_expert_scores_reproduce_the_published_ones(expert_scores):
    fit = expert_fit_summary(expert_scores).set_index("dimension")
    assert list(fit.index) == ["logic", "rhetoric", "dialectic"]
    assert (fit["n_items"] == 1269).all()
    expected = {"logic": (0.99959, 0.99960), "rhetoric": (0.99961, 0.99948), "dialectic": (0.99901, 0.99913)}
    for dimension, (pearson, spearman) in expected.items():
        assert fit.loc[dimension, "pearson"] == pytest.approx(pearson, abs=5e-5)
        assert fit.loc[dimension, "spearman"] == pytest.approx(spearman, abs=5e-5)
    assert (fit["mae"] < 0.05).all()


def test_expert_table_shape_and_scales(expert_scores):
    assert list(expert_scores.columns) == [
        "dimension",
        "topic_id",
        "discussion_id",
        "argument_id",
        "bt_score",
        "bt_z",
        "published_z",
        "n_comparisons",
        "component",
    ]
    assert len(expert_scores) == 3 * 1269
    assert expert_scores["published_z"].notna().all()
    # The (discussion, argument) keys that occur in two topics are scored per topic.
    twice = expert_scores.groupby(["dimension", "discussion_id", "argument_id"])["topic_id"].nunique()
    assert (twice == 2).sum() == 3 * 3  # three of the four keys are compared in both of their topics
    for _, part in expert_scores.groupby("dimension"):
        assert part["bt_z"].mean() == pytest.approx(0, abs=1e-12)
        assert part["bt_z"].std(ddof=0) == pytest.approx(1, abs=1e-12)
        assert part.groupby("topic_id")["bt_score"].mean().abs().max() < 1e-9
    assert disconnected_topics(expert_scores, ["dimension"]).empty
    # The placeholder text (-3.0) is never compared, so never scored.
    assert not ((expert_scores["discussion_id"] == 34949) & (expert_scores["argument_id"] == 126)).any()


def test_choix_engine_gives_the_same_scores(corpus, expert_scores):
    arguments, comparisons = corpus
    logic = comparisons[comparisons["dimension"] == "logic"]
    via_choix = expert_bt_scores(logic, arguments, BTSettings(engine="choix"))
    batched = expert_scores[expert_scores["dimension"] == "logic"].reset_index(drop=True)
    np.testing.assert_allclose(via_choix["bt_score"], batched["bt_score"], atol=1e-6)


def test_default_settings_are_the_best_candidate(corpus):
    arguments, comparisons = corpus
    table = tie_handling_candidates(comparisons, arguments, alphas=(3e-4, 1e-3, 3e-3, 1e-2))
    means = table[(table["dimension"] == MEAN_DIMENSION) & table["error"].isna()]
    best = means.sort_values("pearson", ascending=False).iloc[0]
    assert (best["ties"], best["alpha"]) == (DEFAULT_SETTINGS.ties, DEFAULT_SETTINGS.alpha)
    by_ties = means.groupby("ties")["pearson"].max()
    assert by_ties["win_each"] > by_ties["half_each"] > by_ties["drop"]


def test_published_scores_exclude_placeholder_and_non_arguments(corpus):
    arguments, _ = corpus
    long = published_scores(arguments)
    assert set(long["dimension"]) == {"logic", "rhetoric", "dialectic"}
    assert not (long["published_z"] == -3.0).any()
    assert not (long["published_z"] == -4.0).any()
    assert len(long) == 3 * (1271 - 2)  # argumentative texts less the placeholder key (in two topics)
