"""Intervals, paired comparisons and the best set of Study A's reports.

Every figure of a measured configuration gets ``<metric>_low`` and ``<metric>_high`` from one
clustered bootstrap over the topics (:mod:`argassets.argument_quality.topic_tables`,
:mod:`argassets.platform.stats`): all configurations and dimensions of a report are resampled
together, so the ``mean`` row's interval is that of the mean over the dimensions of the same
resamples, and two configurations are compared by the difference of their figures on the same
resamples (paired). Published rows carry no per-item data: their ``interval_method`` says so.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.argument_quality.bt_scores import CONFIG_COLUMNS, MEAN_DIMENSION
from argassets.argument_quality.published import PUBLISHED_INTERVAL
from argassets.argument_quality.scope import DIMENSIONS
from argassets.argument_quality.topic_tables import ConfigurationTables
from argassets.platform.pairwise.agreement import LABEL_METRICS, METRIC_RANGES, SCORE_METRICS, kappa_from_confusion
from argassets.platform.stats.cluster_metrics import (
    nominal_alpha_from_coincidence,
    percent_agreement_from_confusion,
    weighted_tables,
)
from argassets.platform.stats.intervals import BootstrapSettings, ClusterIntervals
from argassets.platform.stats.paired import best_set, paired_bootstrap
from argassets.platform.stats.tables import (
    INTERVAL_COLUMNS,
    bound_columns,
    interval_frame,
    no_interval_row,
    verdicts,
)

__all__ = [
    "AGREEMENT_METRICS",
    "COMPARISON_COLUMNS",
    "CROSS_MODEL_METRICS",
    "INTERVAL_COLUMNS",
    "PUBLISHED_INTERVAL",
    "VARIABILITY_METRICS",
    "Comparison",
    "ReportUncertainty",
    "agreement_values",
    "best_set_column",
    "bound_columns",
    "planned_comparisons",
    "report_uncertainty",
    "variability_values",
    "nothing_compared",
    "with_intervals",
    "without_intervals",
]

#: Label agreement expected from the label probabilities (NaN without them), beside the sampled one.
EXPECTED_LABEL_METRICS = ["expected_cohen_kappa", "expected_percent_agreement"]
AGREEMENT_METRICS = [*SCORE_METRICS, *LABEL_METRICS, *EXPECTED_LABEL_METRICS, "correlation_mean"]
CROSS_MODEL_METRICS = [*SCORE_METRICS, *LABEL_METRICS]
#: Run agreement expected from the label probabilities, beside the sampled shares.
EXPECTED_RUN_METRICS = ["expected_share_all_equal", "expected_share_two_equal", "expected_share_all_unequal"]
VARIABILITY_METRICS = [
    "share_all_equal",
    "share_two_equal",
    "share_all_unequal",
    "krippendorff_alpha",
    *EXPECTED_RUN_METRICS,
]

FEW_TOPICS = "none: data in fewer than two topics"
UNIT = "topic"

#: Columns of the paired comparisons (``aq_comparisons``).
COMPARISON_COLUMNS = [
    "model",
    "strategy",
    "dimension",
    "metric",
    "role",
    "reference_model",
    "reference_strategy",
    "value",
    "reference_value",
    "difference",
    "difference_low",
    "difference_high",
    "p_value",
    "p_adjusted",
    "adjustment",
    "level",
    "verdict",
    "interval_method",
    "interval_seed",
]

Values = Callable[[ConfigurationTables, np.ndarray], dict[str, np.ndarray]]


def agreement_values(tables: ConfigurationTables, weights: np.ndarray) -> dict[str, np.ndarray]:
    """The agreement metrics of one configuration and dimension under cluster weights ``(B, topics)``."""
    nan = np.full(len(weights), np.nan)
    values = dict.fromkeys(AGREEMENT_METRICS, nan)
    if tables.scores is not None:
        values.update(tables.scores.metrics(weights))
    if tables.labels is not None:
        confusion = weighted_tables(weights, tables.labels)
        values["cohen_kappa"] = kappa_from_confusion(confusion)
        values["krippendorff_alpha"] = nominal_alpha_from_coincidence(confusion + np.swapaxes(confusion, 1, 2))
        values["percent_agreement"] = percent_agreement_from_confusion(confusion)
    if tables.expected is not None:
        expected = weighted_tables(weights, tables.expected)
        values["expected_cohen_kappa"] = kappa_from_confusion(expected)
        values["expected_percent_agreement"] = percent_agreement_from_confusion(expected)
    values["correlation_mean"] = (values["pearson"] + values["spearman"] + values["kendall"]) / 3.0
    return values


def variability_values(tables: ConfigurationTables, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Run-agreement shares, alpha across runs and expected shares under cluster weights."""
    assert tables.runs is not None and tables.coincidence is not None
    sums = weights @ tables.runs  # complete, 1, 2, 3 distinct; with probabilities, p1, p2, p3
    with np.errstate(all="ignore"):
        shares = sums[:, 1:4] / sums[:, :1]
        expected = sums[:, 5:8] / sums[:, 4:5]
    shares = np.where(sums[:, :1] > 0, shares, np.nan)
    expected = np.where(sums[:, 4:5] > 0, expected, np.nan)
    return {
        "share_all_equal": shares[:, 0],
        "share_two_equal": shares[:, 1],
        "share_all_unequal": shares[:, 2],
        "krippendorff_alpha": nominal_alpha_from_coincidence(weighted_tables(weights, tables.coincidence)),
        **{name: expected[:, i] for i, name in enumerate(EXPECTED_RUN_METRICS)},
    }


@dataclass(frozen=True)
class Comparison:
    """Configuration (model, strategy) against a reference one, with the reference's role (``best``, ``baseline``)."""

    configuration: tuple[str, str]
    reference: tuple[str, str]
    role: str


@dataclass(frozen=True)
class ReportUncertainty:
    """A report's intervals (one row per configuration and dimension, ``mean`` included) and comparisons."""

    intervals: pd.DataFrame
    comparisons: pd.DataFrame


class _Layout:
    """The outputs of one bootstrap: one per (row, metric), rows being (model, strategy, dimension)."""

    def __init__(self, configurations: Mapping[tuple[str, str], Sequence[str]], metrics: Sequence[str]):
        self.metrics = list(metrics)
        self.dimensions = {config: [*dims, MEAN_DIMENSION] for config, dims in configurations.items()}
        self.rows = [(*config, d) for config, dims in self.dimensions.items() for d in dims]
        self.position = {row: i for i, row in enumerate(self.rows)}

    def index(self, row: tuple[str, str, str], metric: str) -> int:
        return self.position[row] * len(self.metrics) + self.metrics.index(metric)

    def names(self) -> list[str]:
        return [f"{' / '.join(row)}: {m}" for row in self.rows for m in self.metrics]


def _statistic(
    tables: Mapping[tuple[str, str, str], ConfigurationTables], layout: _Layout, values: Values
) -> Callable[[np.ndarray], np.ndarray]:
    def statistic(weights: np.ndarray) -> np.ndarray:
        blocks = []
        for config, dims in layout.dimensions.items():
            computed = [values(tables[(*config, d)], weights) for d in dims[:-1]]
            per_dim = np.stack([np.stack([one[m] for m in layout.metrics]) for one in computed])  # (dims, metrics, B)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a metric undefined in every dimension: NaN
                mean = np.nanmean(per_dim, axis=0)
            if "correlation_mean" in layout.metrics:
                r = [layout.metrics.index(m) for m in ("pearson", "spearman", "kendall")]
                mean[layout.metrics.index("correlation_mean")] = mean[r].mean(axis=0)
            blocks.append(np.concatenate([per_dim, mean[None]], axis=0).reshape(-1, len(weights)))
        return np.concatenate(blocks, axis=0)

    return statistic


def _intervals_frame(layout: _Layout, result: ClusterIntervals) -> pd.DataFrame:
    index = {(row, m): layout.index(row, m) for row in layout.rows for m in layout.metrics}
    return interval_frame(layout.rows, CONFIG_COLUMNS, layout.metrics, result, index, unit=UNIT, ranges=METRIC_RANGES)


def _empty(metrics: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {c: pd.Series(dtype="object") for c in [*CONFIG_COLUMNS, *bound_columns(metrics), *INTERVAL_COLUMNS]}
    )


def _comparison_pairs(
    comparisons: Sequence[Comparison], layout: _Layout
) -> tuple[list[tuple[int, int]], list[tuple], list[dict[str, object]]]:
    """Output index pairs, family labels and descriptions of every (comparison, dimension, metric)."""
    pairs: list[tuple[int, int]] = []
    families: list[tuple] = []
    described: list[dict[str, object]] = []
    for comparison in comparisons:
        if comparison.configuration not in layout.dimensions or comparison.reference not in layout.dimensions:
            continue
        shared = [
            d for d in layout.dimensions[comparison.configuration] if d in layout.dimensions[comparison.reference]
        ]
        for dimension in shared:
            for metric in layout.metrics:
                mine = layout.index((*comparison.configuration, dimension), metric)
                theirs = layout.index((*comparison.reference, dimension), metric)
                pairs.append((mine, theirs))
                families.append((comparison.role, *comparison.reference, dimension, metric))
                described.append(
                    {
                        "model": comparison.configuration[0],
                        "strategy": comparison.configuration[1],
                        "dimension": dimension,
                        "metric": metric,
                        "role": comparison.role,
                        "reference_model": comparison.reference[0],
                        "reference_strategy": comparison.reference[1],
                    }
                )
    return pairs, families, described


def _comparisons_frame(
    described: list[dict[str, object]], differences: pd.DataFrame, estimate: np.ndarray, pairs, settings
) -> pd.DataFrame:
    if not described:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in COMPARISON_COLUMNS})
    frame = pd.DataFrame(described)
    index = np.asarray(pairs, dtype=np.int64)
    frame["value"] = estimate[index[:, 0]]
    frame["reference_value"] = estimate[index[:, 1]]
    for column in ("difference", "difference_low", "difference_high", "p_value", "p_adjusted", "adjustment"):
        frame[column] = differences[column].to_numpy()
    frame["level"] = settings.level
    frame["interval_method"] = differences["interval_method"].to_numpy()
    frame["interval_seed"] = settings.seed
    lower = [m in LOWER_IS_BETTER for m in frame["metric"]]
    frame["verdict"] = verdicts(frame["difference"].to_numpy(), frame["p_adjusted"].to_numpy(), settings.level, lower)
    return frame[COMPARISON_COLUMNS]


#: Metrics where a smaller value is the better agreement.
LOWER_IS_BETTER = frozenset({"mae", "rmse"})


def report_uncertainty(
    tables: Mapping[tuple[str, str, str], ConfigurationTables],
    metrics: Sequence[str],
    values: Values,
    settings: BootstrapSettings,
    n_topics: int,
    *,
    what: str,
    comparisons: Sequence[Comparison] = (),
    adjustment: str = "holm",
) -> ReportUncertainty:
    """Intervals of every figure of a report and the requested paired comparisons, in one bootstrap.

    Parameters
    ----------
    tables
        Per configuration (model, strategy, dimension): its per-topic tables.
    metrics, values
        The report's metrics and the function computing them from one configuration's tables
        under cluster weights (:func:`agreement_values`, :func:`variability_values`).
    n_topics
        Topics resampled (the clusters).
    comparisons
        Configuration against reference pairs; each is compared on every dimension both have
        and every metric. Families for ``adjustment``: the comparisons with the same role,
        reference, dimension and metric.

    Returns
    -------
    ReportUncertainty
        ``intervals``: model, strategy, dimension (``mean`` included), ``<metric>_low/_high``,
        :data:`INTERVAL_COLUMNS`; configurations with data in fewer than two topics get no
        interval and say so. ``comparisons``: :data:`COMPARISON_COLUMNS`.
    """
    enough = {key for key, t in tables.items() if t.topics_with_data >= 2}
    configurations: dict[tuple[str, str], list[str]] = {}
    for model, strategy, dimension in sorted(tables, key=lambda k: (k[0], k[1], _rank(k[2]))):
        configurations.setdefault((model, strategy), []).append(dimension)
    usable = {c: d for c, d in configurations.items() if all((*c, x) in enough for x in d)}
    rows = [_few_topics(c, d, metrics, settings, n_topics) for c, d in configurations.items() if c not in usable]
    frames = [pd.DataFrame([r for block in rows for r in block])] if rows else []
    compared = pd.DataFrame({c: pd.Series(dtype="object") for c in COMPARISON_COLUMNS})
    if usable and n_topics >= 2:
        layout = _Layout(usable, metrics)
        pairs, families, described = _comparison_pairs(comparisons, layout)
        result = paired_bootstrap(
            _statistic(tables, layout, values),
            n_topics,
            layout.names(),
            pairs,
            settings,
            what=what,
            adjustment=adjustment,
            families=families,
        )
        frames.insert(0, _intervals_frame(layout, result.levels))
        compared = _comparisons_frame(described, result.differences, result.levels.estimate, pairs, settings)
    intervals = pd.concat(frames, ignore_index=True) if frames else _empty(metrics)
    return ReportUncertainty(intervals, compared)


def _rank(dimension: str) -> int:
    order = [*DIMENSIONS, MEAN_DIMENSION]
    return order.index(dimension) if dimension in order else len(order)


def _few_topics(
    config: tuple[str, str], dims: Sequence[str], metrics: Sequence[str], settings: BootstrapSettings, n_topics: int
) -> list[dict[str, object]]:
    """Rows without intervals for a configuration judged on fewer than two topics (in some dimension)."""
    return [
        no_interval_row(
            {"model": config[0], "strategy": config[1], "dimension": d}, metrics, FEW_TOPICS, settings, UNIT, n_topics
        )
        for d in [*dims, MEAN_DIMENSION]
    ]


def planned_comparisons(report: pd.DataFrame, best: tuple[str, str] | None) -> list[Comparison]:
    """Every measured configuration against the best one and against each baseline, on the same items.

    Against a baseline model, a configuration is compared with that model's configuration of
    the same strategy (else its first). Only configurations of the same ``scope`` are compared
    (a pilot judged on one topic is not compared on the full corpus).
    """
    rows = report[report["dimension"] == MEAN_DIMENSION]
    if "kind" in rows.columns:
        rows = rows[rows["kind"] != "published"]
    scope = {(str(m), str(s)): str(sc) for m, s, sc in zip(rows["model"], rows["strategy"], rows["scope"], strict=True)}
    baseline_rows = rows[rows["is_baseline"].fillna(False).astype(bool)]
    strategies: dict[str, list[str]] = {}
    for model, strategy in zip(baseline_rows["model"], baseline_rows["strategy"], strict=True):
        strategies.setdefault(str(model), []).append(str(strategy))
    out = []
    for config in scope:
        if best is not None and config != best and scope.get(best) == scope[config]:
            out.append(Comparison(config, best, "best"))
        for baseline, theirs in strategies.items():
            if baseline == config[0]:
                continue
            reference = (baseline, config[1] if config[1] in theirs else theirs[0])
            if scope[reference] == scope[config]:
                out.append(Comparison(config, reference, "baseline"))
    return out


def best_set_column(
    report: pd.DataFrame,
    comparisons: pd.DataFrame,
    best: tuple[str, str] | None,
    candidates: Sequence[tuple[str, str]],
    metric: str,
    level: float,
) -> np.ndarray:
    """Per row: its configuration is the best or a candidate not significantly worse on ``metric`` (mean row)."""
    if best is None:
        return np.zeros(len(report), dtype=bool)
    against = comparisons[
        (comparisons["role"] == "best")
        & (comparisons["dimension"] == MEAN_DIMENSION)
        & (comparisons["metric"] == metric)
    ]
    differences = pd.DataFrame(
        {
            "configuration": against["model"] + " / " + against["strategy"],
            "reference": f"{best[0]} / {best[1]}",
            "difference": against["difference"],
            "p_adjusted": against["p_adjusted"],
        }
    )
    names = [f"{m} / {s}" for m, s in candidates]
    members = best_set(
        names, differences, f"{best[0]} / {best[1]}", level, higher_is_better=metric not in LOWER_IS_BETTER
    )
    chosen = {c for c, keep in zip(candidates, members, strict=True) if keep}
    keys = zip(report["model"].astype(str), report["strategy"].astype(str), strict=True)
    return np.array([key in chosen for key in keys], dtype=bool)


def with_intervals(report: pd.DataFrame, intervals: pd.DataFrame) -> pd.DataFrame:
    """The report with the interval columns of its rows (rows without intervals: NaN, no method)."""
    keys = pd.MultiIndex.from_frame(report[CONFIG_COLUMNS].astype(str))
    indexed = intervals.astype({c: str for c in CONFIG_COLUMNS}).set_index(CONFIG_COLUMNS) if len(intervals) else None
    out = report.copy()
    for column in [c for c in intervals.columns if c not in CONFIG_COLUMNS]:
        out[column] = indexed[column].reindex(keys).to_numpy() if indexed is not None else None
    return out


#: ``interval_method`` of a report computed with ``settings=None`` (a benchmark's or a quick look's).
NOT_COMPUTED = "none: intervals not computed"


def without_intervals(report: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """The report with empty interval columns whose method says they were not computed."""
    out = with_intervals(report, _empty(metrics))
    out["interval_method"] = NOT_COMPUTED
    return out


#: Text columns of the comparisons, typed as strings so that a table is VARCHAR even when empty.
_COMPARISON_TEXT = ["model", "strategy", "dimension", "metric", "role", "reference_model", "reference_strategy"]
_COMPARISON_TEXT += ["adjustment", "verdict", "interval_method"]
NOTHING_TO_COMPARE = "nothing to compare with: no other configuration of the same scope"


def nothing_compared(report: pd.DataFrame, level: float, seed: int) -> pd.DataFrame:
    """One row per measured configuration saying it had nothing to be compared with (``role = none``).

    A comparisons table is never empty (an empty output creates no table, and its readers would fail).
    """
    means = report[report["dimension"] == MEAN_DIMENSION]
    if "kind" in means.columns:
        means = means[means["kind"] != "published"]
    frame = pd.DataFrame({c: pd.Series([None] * len(means), dtype="object") for c in COMPARISON_COLUMNS})
    frame["model"] = means["model"].to_numpy()
    frame["strategy"] = means["strategy"].to_numpy()
    frame["dimension"] = MEAN_DIMENSION
    frame["role"] = "none"
    frame["verdict"] = NOTHING_TO_COMPARE
    frame["level"] = level
    frame["interval_seed"] = seed
    return typed_comparisons(frame)


def typed_comparisons(frame: pd.DataFrame) -> pd.DataFrame:
    """The comparisons with text columns as strings and numbers as floats (stable table types)."""
    out = frame.copy()
    for column in COMPARISON_COLUMNS:
        if column in _COMPARISON_TEXT:
            out[column] = out[column].astype("string")
        elif column != "interval_seed":
            out[column] = pd.to_numeric(out[column], errors="coerce").astype(float)
    out["interval_seed"] = pd.to_numeric(out["interval_seed"], errors="coerce").astype("Int64")
    return out[COMPARISON_COLUMNS]
