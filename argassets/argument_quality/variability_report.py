"""Study A's run-to-run variability: how often a configuration's runs agree, and Krippendorff's alpha
across them, with intervals clustered over topics (plain pandas, without Dagster)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.argument_quality.agreement_intervals import (
    EXPECTED_RUN_METRICS,
    INTERVAL_COLUMNS,
    VARIABILITY_METRICS,
    bound_columns,
    report_uncertainty,
    variability_values,
    with_intervals,
    without_intervals,
)
from argassets.argument_quality.agreement_reports import (
    FLAG_COLUMNS,
    configuration_codes,
    report_configurations,
    with_mean_rows,
)
from argassets.argument_quality.bt_scores import CONFIG_COLUMNS
from argassets.argument_quality.configurations import ModelInfo, add_flags
from argassets.argument_quality.topic_tables import Topics, run_tables
from argassets.platform.pairwise.agreement import krippendorff_alpha_from_value_counts
from argassets.platform.pairwise.expected import DISTINCT_COLUMNS
from argassets.platform.pairwise.labels import LABELS, encode_labels
from argassets.platform.pairwise.votes import run_agreement_pattern
from argassets.platform.stats.intervals import DEFAULT_SETTINGS, BootstrapSettings


def _expected_run_shares(majority: pd.DataFrame, group: np.ndarray, k: int) -> pd.DataFrame:
    """Per configuration: the mean probability of 1, 2 and 3 distinct labels, and how many comparisons have one."""
    if set(DISTINCT_COLUMNS) <= set(majority.columns):
        probabilities = majority[list(DISTINCT_COLUMNS)].to_numpy(dtype=float)
    else:
        probabilities = np.full((len(majority), len(DISTINCT_COLUMNS)), np.nan)
    known = np.isfinite(probabilities).all(axis=1) & (group >= 0)
    n_known = np.bincount(group[known], minlength=k)
    out = pd.DataFrame({"n_expected": n_known.astype(np.int64)})
    for i, name in enumerate(EXPECTED_RUN_METRICS):
        total = np.bincount(group[known], probabilities[known, i], minlength=k)
        with np.errstate(all="ignore"):
            out[name] = np.where(n_known > 0, total / np.maximum(n_known, 1), np.nan)
    return out


#: Columns of :func:`variability_report`.
VARIABILITY_COLUMNS = [
    *CONFIG_COLUMNS,
    "n_runs",
    "share_all_equal",
    "share_two_equal",
    "share_all_unequal",
    "krippendorff_alpha",
    *EXPECTED_RUN_METRICS,
    "n_comparisons",
    "n_incomplete",
    "n_expected",
    *bound_columns(VARIABILITY_METRICS),
    *INTERVAL_COLUMNS,
    *FLAG_COLUMNS,
]


def _run_columns(majority: pd.DataFrame) -> list[str]:
    """The ``label_run<i>`` columns in run order."""
    return sorted([c for c in majority.columns if c.startswith("label_run")], key=lambda c: int(c[len("label_run") :]))


def _distinct_label_shares(distinct: np.ndarray, group: np.ndarray, n_complete: np.ndarray) -> dict[str, np.ndarray]:
    """Per configuration, the shares of complete comparisons whose runs give 1, 2 and 3 distinct labels."""
    shares = {}
    for name, value in (("share_all_equal", 1), ("share_two_equal", 2), ("share_all_unequal", 3)):
        hits = np.bincount(group[distinct == value], minlength=len(n_complete))
        with np.errstate(all="ignore"):
            shares[name] = np.where(n_complete > 0, hits / n_complete, np.nan)
    return shares


def variability_report(
    majority: pd.DataFrame,
    info: dict[str, ModelInfo] | None = None,
    *,
    settings: BootstrapSettings | None = DEFAULT_SETTINGS,
) -> pd.DataFrame:
    """Per configuration: how often the runs agree, and Krippendorff's alpha across the runs.

    ``share_all_equal``, ``share_two_equal``, ``share_all_unequal`` are shares of the comparisons
    whose runs are all valid (``n_comparisons``; ``n_incomplete`` have a missing or invalid run);
    with 3 runs they are the comparisons with 1, 2 and 3 distinct labels. ``krippendorff_alpha``
    treats the runs as raters (nominal; incomplete comparisons count with their valid runs).
    ``expected_share_*`` are the same shares in expectation over the runs' label probabilities,
    over the ``n_expected`` comparisons that have them (NaN and 0 without; docs/judgments.md,
    "Expected figures"). ``<metric>_low/_high`` and the interval columns: clustered over topics.
    """
    run_columns = _run_columns(majority)
    columns = VARIABILITY_COLUMNS
    if majority.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    configs = report_configurations(majority)
    group = configuration_codes(majority, configs)
    runs = np.stack([encode_labels(majority[c].reset_index(drop=True)) for c in run_columns], axis=1)
    # Only runs that exist somewhere in a configuration count (a scoped model may have fewer runs).
    distinct = run_agreement_pattern(runs)
    k = len(configs)
    complete = distinct > 0
    n_complete = np.bincount(group[complete], minlength=k)
    shares = _distinct_label_shares(distinct, group, n_complete)
    value_counts = np.stack([(runs == code).sum(axis=1) for code in range(len(LABELS))], axis=1)
    alpha = krippendorff_alpha_from_value_counts(value_counts, group, k)
    report = configs.copy()
    report["n_runs"] = len(run_columns)
    for name, values in shares.items():
        report[name] = values
    report["krippendorff_alpha"] = alpha
    report["n_comparisons"] = n_complete.astype(np.int64)
    report["n_incomplete"] = np.bincount(group[~complete], minlength=k).astype(np.int64)
    report = pd.concat([report, _expected_run_shares(majority, group, k)], axis=1)
    report = with_mean_rows(
        report,
        ["share_all_equal", "share_two_equal", "share_all_unequal", "krippendorff_alpha", *EXPECTED_RUN_METRICS],
        ["n_comparisons", "n_incomplete", "n_expected"],
    )
    report["n_runs"] = len(run_columns)
    report = add_flags(report, info or {})
    report["n_expected"] = report["n_expected"].astype(np.int64)
    if settings is None:
        return without_intervals(report, VARIABILITY_METRICS)[columns]
    topics = Topics.of(majority)
    tables = run_tables(majority, topics)
    uncertainty = report_uncertainty(
        tables, VARIABILITY_METRICS, variability_values, settings, len(topics), what="aq_variability_report"
    )
    return with_intervals(report, uncertainty.intervals)[columns]
