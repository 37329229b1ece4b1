"""Uncertainty of the platform's figures: clustered bootstrap intervals, paired differences,
multiplicity (docs/uncertainty.md). Study-neutral, no Dagster.

``intervals``
    ``BootstrapSettings(level=0.95, n_resamples=2000, seed=20240229, method="BCa", batch=500)``;
    ``cluster_bootstrap(statistic, n_clusters, names, settings, *, what) -> ClusterIntervals``
    (``estimate``, ``low``, ``high``, ``method`` per output, ``p_values(null=0.0)``, ``frame()``);
    ``statistic`` maps cluster weights ``(batch, n_clusters)`` to values ``(k, batch)``.
``paired``
    ``paired_bootstrap(statistic, n_clusters, names, comparisons, settings, *, what,
    adjustment="holm", families=None) -> PairedResult`` (``levels``: ``ClusterIntervals``; ``differences``:
    ``configuration, reference, difference, difference_low, difference_high, p_value,
    p_adjusted, adjustment, interval_method``); ``top_index(estimates, candidates,
    *, higher_is_better=True)``; ``best_set(names, differences, top, level, *, higher_is_better=True)``.
``multiplicity``
    ``adjust_p_values(p_values, method="holm" | "bh")`` (statsmodels; NaN left out of the family).
``cluster_metrics``
    Metrics from per-cluster tables under many weightings: ``weighted_tables``,
    ``classification_metrics`` (2x2 confusion), ``percent_agreement_from_confusion``,
    ``nominal_alpha_from_coincidence``, ``coincidence_from_value_counts``, ``ScoreClusters``
    (Pearson, Spearman, Kendall, MAE, RMSE).
``tables``
    The interval columns of a report: ``INTERVAL_COLUMNS``, ``bound_columns(metrics)``,
    ``interval_frame(rows, key_columns, metrics, result, index, *, unit, ranges=None)``,
    ``no_interval_row``, ``interval_problems(report, metrics, keys)`` (for checks),
    ``verdicts(differences, p_adjusted, level, lower_is_better)``.
"""
