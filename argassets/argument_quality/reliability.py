"""Study A's reliability battery: every configuration and the experts, per dimension, with intervals.

The counts are the platform's (:mod:`argassets.platform.pairwise.reliability`, position
consistency from :mod:`argassets.platform.pairwise.position_bias`); the length preference is
:func:`~argassets.argument_quality.length_bias.longer_share` on the majority labels, so its figure
is ``aq_length_bias``'s ``share_longer``. Clusters are topics. How to read it: docs/reliability.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from argassets.argument_quality.length_bias import longer_share
from argassets.argument_quality.length_bias_report import comparison_lengths
from argassets.argument_quality.scope import DIMENSIONS
from argassets.platform.pairwise.labels import encode_labels, factorize_columns
from argassets.platform.pairwise.position_bias import position_bias_metrics
from argassets.platform.pairwise.reliability import (
    DEFAULT_TOLERANCES,
    Tolerances,
    cluster_counts,
    flagged,
    preferences,
    repetition_counts,
    share_intervals,
    tie_counts,
    transitivity_counts,
    triads_of,
)
from argassets.platform.stats.intervals import DEFAULT_SETTINGS, BootstrapSettings

__all__ = ["ALL_DIMENSIONS", "BATTERY_COLUMNS", "BATTERY_METRICS", "EXPERTS", "battery_problems", "reliability_battery"]

#: The experts' row (model name; strategy ``reference``).
EXPERTS = "experts"
ALL_DIMENSIONS = "all"
#: The battery's figures, in the order of the trust table (each a share in [0, 1] but cycles_per_topic).
BATTERY_METRICS: tuple[str, ...] = (
    "wst_violation_share",
    "cycle_share",
    "cycles_per_topic",
    "position_consistency",
    "run_agreement",
    "tie_share",
    "longer_share",
)
BATTERY_COLUMNS = [
    "model",
    "strategy",
    "dimension",
    "metric",
    "estimate",
    "low",
    "high",
    "interval_method",
    "n",
    "n_topics",
    "flagged",
]


@dataclass
class _Counts:
    """Per (row, dimension, topic) numerators and denominators of each metric."""

    rows: list[tuple[str, str]]
    n_dims: int
    n_topics: int
    num: dict[str, np.ndarray] = field(default_factory=dict)
    den: dict[str, np.ndarray] = field(default_factory=dict)

    def put(self, metric: str, num: np.ndarray, den: np.ndarray) -> None:
        shape = (len(self.rows), self.n_dims, self.n_topics)
        self.num[metric], self.den[metric] = num.reshape(shape), den.reshape(shape)


def _run_codes(votes: pd.DataFrame) -> np.ndarray:
    """``(n_votes, n_runs)`` label codes from ``label_run0 .. label_run<R-1>``."""
    columns = sorted((c for c in votes.columns if c.startswith("label_run")), key=lambda c: int(c[9:]))
    if not columns:
        raise ValueError("aq_majority_votes: no label_run<k> column")
    return np.stack([encode_labels(votes[c].reset_index(drop=True)) for c in columns], axis=1)


def _position_counts(judgments: pd.DataFrame, counts: _Counts, dims: list[str], topics: np.ndarray) -> None:
    """Order consistency of the majorities per (configuration, dimension, topic), where ``ba`` orders were judged."""
    shape = (len(counts.rows), len(dims), len(topics))
    num, den = np.zeros(shape), np.zeros(shape)
    swapped = judgments["order"].to_numpy(dtype=object) == "ba" if "order" in judgments.columns else None
    if swapped is not None and swapped.any():
        model = "model" if "model" in judgments.columns else "judge_model"
        asked = judgments[model].isin(judgments.loc[swapped, model].unique()).to_numpy()
        table = position_bias_metrics(
            judgments, [model, "strategy", "topic_id"], "dimension", "comparison_id", swapped[asked], rows=asked
        )
        table = table[table["dimension"].isin(dims)]
        row = {key: i for i, key in enumerate(counts.rows)}
        r = np.array([row.get((m, s), -1) for m, s in zip(table[model], table["strategy"], strict=True)])
        d = table["dimension"].map({x: i for i, x in enumerate(dims)}).to_numpy()
        t = np.searchsorted(topics, table["topic_id"].to_numpy(dtype=np.int64))
        keep = r >= 0
        # Majorities, not single runs: run-to-run noise is the run agreement's, not a position effect.
        pairs = table["n_pairs_majority"].to_numpy(dtype=float)
        # The table gives the share; share x pairs recovers the (integer) count of consistent pairs.
        consistent = np.rint(np.nan_to_num(table["order_consistency_majority"].to_numpy(dtype=float)) * pairs)
        np.add.at(den, (r[keep], d[keep], t[keep]), pairs[keep])
        np.add.at(num, (r[keep], d[keep], t[keep]), consistent[keep])
    counts.put("position_consistency", num, den)


def _label_counts(
    codes: np.ndarray, majority: np.ndarray, comps: pd.DataFrame, pos: np.ndarray, group: np.ndarray, counts: _Counts
) -> None:
    """Ties, run agreement and the length preference of labelled comparisons ``pos`` of row-group ``group``."""
    n_groups = len(counts.rows) * counts.n_dims
    topic = comps["topic"].to_numpy()[pos]
    ties, valid = tie_counts(codes)
    counts.put("tie_share", *(cluster_counts(x, group, topic, n_groups, counts.n_topics) for x in (ties, valid)))
    agree, complete = repetition_counts(codes)
    counts.put(
        "run_agreement", *(cluster_counts(x, group, topic, n_groups, counts.n_topics) for x in (agree, complete))
    )
    ratio = comps["log_ratio"].to_numpy()[pos]
    _, longer, decisive = longer_share(majority, ratio, group * counts.n_topics + topic, n_groups * counts.n_topics)
    counts.put("longer_share", longer, decisive)


def _transitivity(preference: np.ndarray, comps: pd.DataFrame, counts: _Counts) -> None:
    """WST violations, strict 3-cycles and cycles per topic from ``(rows, comparisons)`` preferences."""
    cluster = comps["dim"].to_numpy() * counts.n_topics + comps["topic"].to_numpy()
    triads = triads_of(comps["item_a"].to_numpy(), comps["item_b"].to_numpy(), cluster, what="webis_expert_comparisons")
    per = transitivity_counts(preference, triads, counts.n_dims * counts.n_topics)
    counts.put("wst_violation_share", per["violations"], per["triads"])
    counts.put("cycle_share", per["cycles"], per["triads"])
    counts.put("cycles_per_topic", per["cycles"], (per["triads"] > 0).astype(float))


def _intervals(counts: _Counts, dims: list[str], settings: BootstrapSettings, tolerances: Tolerances) -> pd.DataFrame:
    """One bootstrap over topics for every (row, dimension or all, metric)."""
    keys, nums, dens = [], [], []
    for metric in BATTERY_METRICS:
        num, den = counts.num[metric], counts.den[metric]
        for r, (model, strategy) in enumerate(counts.rows):
            for d, dim in enumerate([*dims, ALL_DIMENSIONS]):
                keys.append((model, strategy, dim, metric))
                nums.append(num[r].sum(axis=0) if dim == ALL_DIMENSIONS else num[r, d])
                dens.append(den[r].sum(axis=0) if dim == ALL_DIMENSIONS else den[r, d])
    names = ["/".join(k) for k in keys]
    frame = share_intervals(np.array(nums), np.array(dens), names, settings, what="aq reliability battery")
    frame[["model", "strategy", "dimension", "metric"]] = pd.DataFrame(keys, index=frame.index)
    frame["n_topics"] = (np.array(dens) > 0).sum(axis=1)
    # The small-cluster widening can reach past a share's range; the range bounds the interval.
    upper = np.where(frame["metric"] == "cycles_per_topic", np.inf, 1.0)
    frame["low"] = frame["low"].clip(lower=0.0)
    frame["high"] = np.minimum(frame["high"].to_numpy(), upper)
    frame["flagged"] = flagged(
        frame["metric"].to_numpy(), frame["low"].to_numpy(), frame["high"].to_numpy(), tolerances
    )
    return frame[BATTERY_COLUMNS]


def reliability_battery(
    votes: pd.DataFrame,
    judgments: pd.DataFrame,
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    settings: BootstrapSettings = DEFAULT_SETTINGS,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> pd.DataFrame:
    """The battery per (model, strategy, dimension and ``all``, metric), the experts' rows first.

    ``votes`` is ``aq_majority_votes``, ``judgments`` ``aq_judgments`` (only its ``ba`` rows
    matter: position consistency), ``experts`` ``webis_expert_comparisons`` and ``arguments``
    ``webis_arguments``. Long format (:data:`BATTERY_COLUMNS`); a figure that cannot be measured
    (the experts' runs and orders; a judge without ``ba`` orders) has no estimate and says why;
    ``flagged`` marks a figure whose interval lies past its tolerance (:func:`flagged`).
    """
    comps, _ = comparison_lengths(experts, arguments)
    dims: list[str] = [str(d) for d in DIMENSIONS if d in set(comps["dimension"])]
    topics = np.unique(comps["topic_id"].to_numpy(dtype=np.int64))
    comps["dim"] = comps["dimension"].map({d: i for i, d in enumerate(dims)}).to_numpy()
    comps["topic"] = np.searchsorted(topics, comps["topic_id"].to_numpy(dtype=np.int64))
    config, configs = factorize_columns(votes, ["model", "strategy"])
    rows = [(EXPERTS, "reference"), *zip(configs["model"].astype(str), configs["strategy"].astype(str), strict=True)]
    counts = _Counts(rows, len(dims), len(topics))
    index = pd.MultiIndex.from_arrays([comps["dimension"], comps["comparison_id"]])
    pos = index.get_indexer(
        pd.MultiIndex.from_arrays([votes["dimension"].astype(str), votes["comparison_id"].astype(str)])
    )
    if (pos < 0).any():
        row = votes.iloc[int(np.flatnonzero(pos < 0)[0])]
        raise ValueError(
            f"aq_majority_votes: comparison {row['comparison_id']!r} ({row['dimension']}) is not in webis_expert_comparisons"
        )
    expert_codes = comps["expert_code"].to_numpy()
    judge_codes = _run_codes(votes)
    # The experts' single label is their run 0; their other runs are missing (nothing to repeat).
    padded = np.full((len(comps), judge_codes.shape[1]), -1, dtype=judge_codes.dtype)
    padded[:, 0] = expert_codes
    all_codes = np.concatenate([padded, judge_codes])
    all_pos = np.concatenate([np.arange(len(comps)), pos])
    row_of = np.concatenate([np.zeros(len(comps), dtype=np.int64), config + 1])
    majority = np.concatenate([expert_codes, encode_labels(votes["majority_label"].reset_index(drop=True))])
    group = row_of * len(dims) + comps["dim"].to_numpy()[all_pos]
    _label_counts(all_codes, majority, comps, all_pos, group, counts)
    preference = np.full((len(rows), len(comps)), np.nan)
    preference[row_of, all_pos] = preferences(all_codes)
    _transitivity(preference, comps, counts)
    _position_counts(judgments, counts, dims, topics)
    return _intervals(counts, dims, settings, tolerances)


def battery_problems(battery: pd.DataFrame, configurations: pd.DataFrame | None) -> pd.DataFrame:
    """Rows that break the battery's promises: a missing (row, dimension, metric), a value out of range.

    Every configuration in ``configurations`` (``model, strategy``) and the experts have every
    metric for every dimension and ``all``; estimates lie inside their intervals and in [0, 1]
    (``cycles_per_topic``: >= 0); the experts' transitivity is measured.
    """
    expected = [(EXPERTS, "reference")]
    if configurations is not None:
        expected += list(zip(configurations["model"].astype(str), configurations["strategy"].astype(str), strict=True))
    dims = sorted(set(battery["dimension"]) | {ALL_DIMENSIONS}) if len(battery) else [ALL_DIMENSIONS]
    have = set(zip(battery["model"], battery["strategy"], battery["dimension"], battery["metric"], strict=True))
    problems = [
        {"model": m, "strategy": s, "dimension": d, "metric": x, "problem": "missing"}
        for m, s in expected
        for d in dims
        for x in BATTERY_METRICS
        if (m, s, d, x) not in have
    ]
    value, low, high = (battery[c].to_numpy(dtype=float) for c in ("estimate", "low", "high"))
    upper = np.where(battery["metric"] == "cycles_per_topic", np.inf, 1.0)
    with np.errstate(invalid="ignore"):
        bad = (value < 0) | (value > upper) | (low > value + 1e-12) | (high < value - 1e-12)
    experts_transitivity = (battery["model"] == EXPERTS) & battery["metric"].isin(
        ["wst_violation_share", "cycle_share"]
    )
    unmeasured = experts_transitivity.to_numpy() & ~np.isfinite(value)
    for i in np.flatnonzero(bad | unmeasured):
        row = battery.iloc[int(i)]
        what = (
            "experts' transitivity not measured"
            if unmeasured[i]
            else f"{row['estimate']} outside [{row['low']}, {row['high']}] or its range"
        )
        problems.append({c: row[c] for c in ("model", "strategy", "dimension", "metric")} | {"problem": what})
    return pd.DataFrame(problems, columns=["model", "strategy", "dimension", "metric", "problem"])
