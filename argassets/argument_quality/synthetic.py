"""Synthetic ``aq_judgments`` with known structure, for tests and benchmarks of the aggregation.

A synthetic judge sees the published expert z-scores of both arguments plus Gaussian noise per
run, and answers ``Tie`` when the noisy difference is small: the smaller its noise, the closer its
BT scores are to the experts'. Optionally some verdicts are invalid, and a judge may favour the
first position (for the position-bias report). A judge may also report its label probabilities
(``p_a, p_b, p_tie``, exact under its Gaussian noise), as a backend with logprobs does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from argassets.argument_quality.bradley_terry import ITEM_COLUMNS
from argassets.argument_quality.bt_scores import published_scores
from argassets.argument_quality.scope import STRATEGIES
from argassets.argument_quality.voting import LABELS

__all__ = ["SyntheticJudge", "synthetic_judgments"]


@dataclass(frozen=True)
class SyntheticJudge:
    """One synthetic model.

    Attributes
    ----------
    name
        Partition key / model name.
    noise
        Standard deviation of the noise added to the expert score difference, per run.
    tie_band
        ``Tie`` when the noisy difference is within +-``tie_band``.
    invalid_rate
        Share of verdicts that are invalid (label null).
    first_bias
        Added to the difference in favour of the argument shown first.
    swapped
        Also judge every comparison in the swapped order (``order = "ba"``).
    is_baseline
        Recorded baseline flag.
    probabilities
        Rows carry ``p_a, p_b, p_tie``: the probabilities of each label under the judge's noise,
        oriented like ``label`` (null without).
    """

    name: str
    noise: float = 1.0
    tie_band: float = 0.3
    invalid_rate: float = 0.0
    first_bias: float = 0.0
    swapped: bool = False
    is_baseline: bool = False
    probabilities: bool = False


def _label_probabilities(mean: np.ndarray, judge: SyntheticJudge) -> np.ndarray:
    """``(..., 3)`` probabilities of A, B, Tie as presented, for a noisy difference of mean ``mean``."""
    p_a = stats.norm.sf(judge.tie_band, loc=mean, scale=judge.noise)
    p_b = stats.norm.cdf(-judge.tie_band, loc=mean, scale=judge.noise)
    return np.stack([p_a, p_b, np.clip(1.0 - p_a - p_b, 0.0, 1.0)], axis=-1)


def synthetic_judgments(
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    judges: Sequence[SyntheticJudge],
    strategies: Sequence[str] = STRATEGIES,
    n_runs: int = 3,
    seed: int = 0,
) -> pd.DataFrame:
    """Judgments of every expert comparison by every judge, strategy and run (vectorised).

    Returns
    -------
    pandas.DataFrame
        The ``aq_judgments`` columns the aggregation reads: ``judge_model, comparison_id,
        dimension, strategy, topic_id, order, run, label, presented_label, is_valid,
        is_baseline, scope, p_a, p_b, p_tie`` (the probabilities null unless the judge has
        ``probabilities``).
    """
    diff = _published_difference(experts, arguments)
    rng = np.random.default_rng(seed)
    frames = []
    for judge in judges:
        orders = ("ab", "ba") if judge.swapped else ("ab",)
        for strategy in strategies:
            for order in orders:
                frames.append(_judged(experts, diff, judge, strategy, order, n_runs, rng))
    return pd.concat(frames, ignore_index=True)


def _published_difference(experts: pd.DataFrame, arguments: pd.DataFrame) -> np.ndarray:
    """Per comparison, the published z-score of argument A minus that of B (0 where unknown)."""
    scores = published_scores(arguments)
    key = ["dimension", *ITEM_COLUMNS]
    z = scores.set_index(key)["published_z"]
    idx_a = pd.MultiIndex.from_arrays(
        [experts["dimension"], experts["topic_id"], experts["discussion_id_a"], experts["argument_id_a"]]
    )
    idx_b = pd.MultiIndex.from_arrays(
        [experts["dimension"], experts["topic_id"], experts["discussion_id_b"], experts["argument_id_b"]]
    )
    diff = z.reindex(idx_a).to_numpy() - z.reindex(idx_b).to_numpy()
    return np.nan_to_num(diff)


def _judged(
    experts: pd.DataFrame,
    diff: np.ndarray,
    judge: SyntheticJudge,
    strategy: str,
    order: str,
    n_runs: int,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Every run of one judge and strategy on every comparison, presented in ``order``."""
    m = len(experts)
    labels = np.array(LABELS, dtype=object)
    sign = 1.0 if order == "ab" else -1.0
    # Difference as presented: first shown minus second shown.
    mean = sign * diff + judge.first_bias
    presented_diff = mean[:, None] + rng.normal(0.0, judge.noise, (m, n_runs))
    probs = _label_probabilities(mean, judge) if judge.probabilities else np.full((m, 3), np.nan)
    probs = probs if order == "ab" else probs[:, [1, 0, 2]]
    code = np.where(presented_diff > judge.tie_band, 0, np.where(presented_diff < -judge.tie_band, 1, 2))
    invalid = rng.random((m, n_runs)) < judge.invalid_rate
    mapped = code if order == "ab" else np.where(code == 0, 1, np.where(code == 1, 0, 2))
    presented_label = np.where(invalid, np.array(None, dtype=object), labels[code])
    label = np.where(invalid, np.array(None, dtype=object), labels[mapped])
    return pd.DataFrame(
        {
            "judge_model": judge.name,
            "comparison_id": np.repeat(experts["comparison_id"].to_numpy(), n_runs),
            "dimension": np.repeat(experts["dimension"].to_numpy(), n_runs),
            "strategy": strategy,
            "topic_id": np.repeat(experts["topic_id"].to_numpy(), n_runs),
            "order": order,
            "run": np.tile(np.arange(n_runs), m),
            "label": label.ravel(),
            "presented_label": presented_label.ravel(),
            "is_valid": ~invalid.ravel(),
            "is_baseline": judge.is_baseline,
            "scope": "full",
            "p_a": np.repeat(probs[:, 0], n_runs),
            "p_b": np.repeat(probs[:, 1], n_runs),
            "p_tie": np.repeat(probs[:, 2], n_runs),
        }
    )
