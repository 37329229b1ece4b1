"""Study A's perturbations: how often a verdict flips, and how far the BT ranking moves.

Each perturbed entry (a scope ``perturbation``; :mod:`argassets.argument_quality.prompt_axis`) is
compared with its model's unperturbed entry of the same prompt variant, on the comparisons both
judged; the order swap compares an entry's ``ba`` verdicts with its own ``ab`` ones. Verdicts are
the majorities of the runs. Figures, each with a clustered bootstrap interval over the topics:

- ``flip_rate``: the share of compared pairs whose majority verdict differs;
- ``rank_spearman``: Spearman's ρ between the perturbed and the unperturbed BT scores of the
  arguments of a topic (1: the ranking did not move), averaged over topics weighted by arguments;
- ``delta_spearman_experts``: ρ with the experts' scores, perturbed minus unperturbed (same weights).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from argassets.argument_quality.bradley_terry import bt_scores
from argassets.argument_quality.prompt_axis_report import NOTHING, UNPERTURBED, nothing_to_report
from argassets.argument_quality.scope import DIMENSIONS
from argassets.argument_quality.voting import majority_votes
from argassets.platform.pairwise.reliability import share_intervals
from argassets.platform.stats.intervals import DEFAULT_SETTINGS, BootstrapSettings

__all__ = [
    "METRIC_RANGES",
    "PERTURBATION_COLUMNS",
    "PERTURBATION_METRICS",
    "SWAP",
    "perturbation_arms",
    "perturbation_problems",
    "perturbation_report",
]

SWAP = "swap"
PERTURBATION_METRICS: tuple[str, ...] = ("flip_rate", "rank_spearman", "delta_spearman_experts")
PERTURBATION_COLUMNS = [
    "model",
    "prompt_variant",
    "perturbation",
    "entry",
    "strategy",
    "dimension",
    "metric",
    "estimate",
    "low",
    "high",
    "interval_method",
    "n",
    "n_topics",
]
_VOTE_KEY = ["strategy", "dimension", "comparison_id"]
_FEW_TOPICS = "none: fewer than two topics to resample"


def perturbation_arms(axis: pd.DataFrame, judged_orders: pd.DataFrame) -> pd.DataFrame:
    """Each perturbation to report: ``model, prompt_variant, perturbation, entry, order, base_entry``.

    ``judged_orders`` holds the (``judge_model``, ``order``) pairs present in ``aq_judgments``. A
    perturbed entry is compared (order ``ab``) with the unperturbed entry of its model and variant;
    an unperturbed entry with ``ba`` verdicts gives the order swap (its ``ba`` against its ``ab``).
    """
    plain = axis[axis["perturbation"] == UNPERTURBED]
    base = plain.drop_duplicates(["model", "prompt_variant"]).set_index(["model", "prompt_variant"])["entry"]
    rows = []
    for row in axis.itertuples(index=False):
        if row.perturbation != UNPERTURBED and (row.model, row.prompt_variant) in base.index:
            rows.append(
                (
                    row.model,
                    row.prompt_variant,
                    row.perturbation,
                    row.entry,
                    "ab",
                    base[(row.model, row.prompt_variant)],
                )
            )
    with_ba = set(judged_orders.loc[judged_orders["order"] == "ba", "judge_model"])
    for row in plain.itertuples(index=False):
        if row.entry in with_ba:
            rows.append((row.model, row.prompt_variant, SWAP, row.entry, "ba", row.entry))
    columns = ["model", "prompt_variant", "perturbation", "entry", "order", "base_entry"]
    arms = pd.DataFrame(rows, columns=columns)
    # Only what was judged: a registry entry never run (e.g. a CPU LLM in run-default) has no arm.
    with_ab = set(judged_orders.loc[judged_orders["order"] == "ab", "judge_model"])
    judged = arms["base_entry"].isin(with_ab) & (arms["entry"].isin(with_ab) | (arms["order"] == "ba"))
    return arms[judged].reset_index(drop=True)


def _votes(judgments: pd.DataFrame, entry: str, order: str) -> pd.DataFrame:
    """The majority verdicts of ``entry`` in ``order`` (``strategy, dimension, comparison_id, topic_id, label``)."""
    rows = judgments[(judgments["judge_model"] == entry) & (judgments["order"] == order)].drop(columns="order")
    votes = majority_votes(rows[["judge_model", "comparison_id", "dimension", "strategy", "topic_id", "run", "label"]])
    return votes[[*_VOTE_KEY, "topic_id", "majority_label"]].rename(columns={"majority_label": "label"})


def _paired_votes(judgments: pd.DataFrame, arm: pd.Series) -> pd.DataFrame:
    """Perturbed and unperturbed verdicts of the pairs both judged (``label``, ``base_label``)."""
    perturbed = _votes(judgments, arm["entry"], arm["order"])
    unperturbed = _votes(judgments, arm["base_entry"], "ab").rename(columns={"label": "base_label"})
    paired = perturbed.merge(unperturbed.drop(columns="topic_id"), on=_VOTE_KEY, validate="one_to_one")
    return paired.dropna(subset=["label", "base_label"]).reset_index(drop=True)


def _topic_rhos(paired: pd.DataFrame, comparisons: pd.DataFrame, arguments: pd.DataFrame) -> pd.DataFrame:
    """Per topic: arguments ranked, ρ(perturbed, unperturbed BT) and ρ with the experts of each side."""
    pairs = paired.merge(comparisons.drop(columns=["topic_id", "dimension"], errors="ignore"), on="comparison_id")
    long = pd.concat([pairs.assign(side="perturbed"), pairs.assign(side="base", label=pairs["base_label"])])
    scores = bt_scores(long, ["side", "dimension"])
    wide = scores.pivot_table(
        index=["dimension", "topic_id", "discussion_id", "argument_id"], columns="side", values="bt_score"
    ).reset_index()
    expert = arguments.melt(
        id_vars=["topic_id", "discussion_id", "argument_id"],
        value_vars=[f"published_{d}" for d in DIMENSIONS],
        var_name="dimension",
        value_name="expert",
    )
    expert["dimension"] = expert["dimension"].str.removeprefix("published_")
    wide = wide.merge(expert, on=["dimension", "topic_id", "discussion_id", "argument_id"], how="left")
    rows = []
    for topic, group in wide.groupby("topic_id", sort=True):
        rho = _rho(group["perturbed"], group["base"])
        delta = _rho(group["perturbed"], group["expert"]) - _rho(group["base"], group["expert"])
        rows.append((int(topic), len(group), rho, delta))
    return pd.DataFrame(rows, columns=["topic_id", "n_arguments", "rank_spearman", "delta_spearman_experts"])


def _rho(x: pd.Series, y: pd.Series) -> float:
    """Spearman's ρ, NaN with fewer than three arguments or a constant side."""
    if len(x) < 3 or x.nunique() < 2 or y.nunique() < 2:
        return float("nan")
    return float(spearmanr(x, y).statistic)


def _figures(
    counts: dict[str, tuple[np.ndarray, np.ndarray]], topics: np.ndarray, settings: BootstrapSettings, what: str
) -> pd.DataFrame:
    """Each metric's weighted share over topics, with its clustered interval (none with one topic)."""
    names = list(counts)
    numerator = np.vstack([counts[name][0] for name in names])
    denominator = np.vstack([counts[name][1] for name in names])
    if len(topics) >= 2:
        frame = share_intervals(numerator, denominator, names, settings, what=what)
    else:
        with np.errstate(all="ignore"):
            estimate = numerator.sum(axis=1) / denominator.sum(axis=1)
        frame = pd.DataFrame({"name": names, "estimate": estimate, "low": np.nan, "high": np.nan})
        frame = frame.assign(interval_method=_FEW_TOPICS, n=denominator.sum(axis=1).astype(np.int64))
    return frame.assign(n_topics=len(topics))


def _arm_figures(
    paired: pd.DataFrame,
    comparisons: pd.DataFrame,
    arguments: pd.DataFrame,
    settings: BootstrapSettings,
    what: str,
) -> pd.DataFrame:
    """The three figures of one arm, one strategy and dimension (``paired`` is non-empty)."""
    topics = np.sort(paired["topic_id"].unique())
    by_topic = paired.assign(flip=paired["label"] != paired["base_label"]).groupby("topic_id")["flip"]
    flips = by_topic.sum().reindex(topics).to_numpy(dtype=float)
    pairs = by_topic.size().reindex(topics).to_numpy(dtype=float)
    rhos = _topic_rhos(paired, comparisons, arguments).set_index("topic_id").reindex(topics)
    counts = {"flip_rate": (flips, pairs)}
    for metric in ("rank_spearman", "delta_spearman_experts"):
        defined = rhos[metric].notna().to_numpy()
        weight = np.where(defined, rhos["n_arguments"].fillna(0).to_numpy(dtype=float), 0.0)
        counts[metric] = (np.nan_to_num(rhos[metric].to_numpy(dtype=float)) * weight, weight)
    return _figures(counts, topics, settings, what).rename(columns={"name": "metric"})


def perturbation_report(
    judgments: pd.DataFrame,
    arms: pd.DataFrame,
    comparisons: pd.DataFrame,
    arguments: pd.DataFrame,
    settings: BootstrapSettings = DEFAULT_SETTINGS,
) -> pd.DataFrame:
    """Per arm × strategy × dimension: flip rate, rank ρ to the unperturbed, Δρ with the experts.

    ``judgments``: rows of ``aq_judgments`` (``judge_model, comparison_id, dimension, strategy,
    topic_id, order, run, label``); ``arms``: :func:`perturbation_arms`; ``comparisons`` and
    ``arguments``: ``webis_expert_comparisons`` and ``webis_arguments``.
    """
    pair_columns = ["comparison_id", "topic_id", "discussion_id_a", "argument_id_a", "discussion_id_b", "argument_id_b"]
    pairs = comparisons[pair_columns]
    parts = []
    for _, arm in arms.iterrows():
        paired = _paired_votes(judgments, arm)
        for (strategy, dimension), group in paired.groupby(["strategy", "dimension"], sort=True):
            what = f"{arm['entry']} ({arm['perturbation']}), {strategy}, {dimension}"
            figures = _arm_figures(group, pairs, arguments, settings, what)
            identity = {c: arm[c] for c in ("model", "prompt_variant", "perturbation", "entry")}
            parts.append(figures.assign(**identity, strategy=strategy, dimension=dimension))
    if not parts:
        return nothing_to_report(PERTURBATION_COLUMNS, "no perturbed entry and no entry judged in both orders")
    report = pd.concat(parts, ignore_index=True)
    return report[PERTURBATION_COLUMNS].astype({"n": "int64", "n_topics": "int64"})


#: The range each figure must lie in.
METRIC_RANGES: dict[str, tuple[float, float]] = {
    "flip_rate": (0.0, 1.0),
    "rank_spearman": (-1.0, 1.0),
    "delta_spearman_experts": (-2.0, 2.0),
}


def perturbation_problems(report: pd.DataFrame, tolerance: float = 1e-9) -> pd.DataFrame:
    """Rows of ``report`` with an unknown metric, a figure out of its range, or outside its interval."""
    low_bound = report["metric"].map(lambda m: METRIC_RANGES.get(m, (np.nan, np.nan))[0]).astype(float)
    high_bound = report["metric"].map(lambda m: METRIC_RANGES.get(m, (np.nan, np.nan))[1]).astype(float)
    estimate = report["estimate"].astype(float)
    unknown = low_bound.isna() & ~((report["metric"] == NOTHING) & estimate.isna())
    outside = estimate.notna() & ((estimate < low_bound - tolerance) | (estimate > high_bound + tolerance))
    bounded = report["low"].notna() & estimate.notna()
    off_interval = bounded & ((report["low"] > estimate + tolerance) | (report["high"] < estimate - tolerance))
    return report[unknown | outside | off_interval].reset_index(drop=True)
