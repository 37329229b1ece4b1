"""Agreement metrics of Study A's reports: the platform's pairwise agreement metrics, by their Study A names.

Scores are BT z-scores of arguments, labels the A/B/Tie verdicts on comparisons; the metrics
themselves (and the one Krippendorff's alpha, the ``krippendorff`` package's) live in
:mod:`argassets.platform.pairwise.agreement`.
"""

from __future__ import annotations

from argassets.platform.pairwise.agreement import (
    LABEL_METRICS,
    METRIC_RANGES,
    SCORE_METRICS,
    cohen_kappa,
    confusion_matrices,
    kappa_from_confusion,
    krippendorff_alpha_from_confusion,
    krippendorff_alpha_from_value_counts,
    krippendorff_alpha_nominal,
    label_agreement,
    percent_agreement,
    score_agreement,
)

__all__ = [
    "LABEL_METRICS",
    "METRIC_RANGES",
    "SCORE_METRICS",
    "cohen_kappa",
    "confusion_matrices",
    "kappa_from_confusion",
    "krippendorff_alpha_from_confusion",
    "krippendorff_alpha_from_value_counts",
    "krippendorff_alpha_nominal",
    "label_agreement",
    "percent_agreement",
    "score_agreement",
]
