"""Pointwise validation: does a system's probability of NA say whether an argument is political?"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score, f1_score, precision_score, recall_score

from argassets.platform.pairwise.agreement import krippendorff_alpha_nominal

#: A system predicts "political" when its probability of NA is strictly below this.
NA_THRESHOLD = 0.5

#: Pointwise partitions by sampling bucket: name -> ``n_type`` values (the annotator-agreement
#: partitions ``unanimous`` and ``majority`` come from :func:`agreement_partitions`).
POINTWISE_PARTITIONS: dict[str, tuple[str, ...]] = {
    "full": ("low", "mid", "high"),
    "confident": ("low", "high"),
    "ambiguous": ("mid",),
}


def predicts_political(prob_na: np.ndarray | Sequence[float]) -> np.ndarray:
    """NA threshold rule: political when the probability of NA is strictly below 0.5."""
    return np.asarray(prob_na, dtype=float) < NA_THRESHOLD


def agreed_political(prob_na: np.ndarray | Sequence[float]) -> np.ndarray:
    """The paper's inter-model label: a model's label counts only when its repetitions agree.

    1.0 (political) when no repetition answered NA (P(NA) = 0), 0.0 when every one did (P(NA) = 1),
    NaN (missing) otherwise and where P(NA) itself is missing.
    """
    p = np.asarray(prob_na, dtype=float)
    return np.where(p == 0.0, 1.0, np.where(p == 1.0, 0.0, np.nan))


def threshold_political(prob_na: np.ndarray | Sequence[float]) -> np.ndarray:
    """The platform's label as a float array: 1.0 when P(NA) < 0.5, 0.0 otherwise, NaN where P(NA) is missing."""
    p = np.asarray(prob_na, dtype=float)
    return np.where(np.isnan(p), np.nan, predicts_political(p).astype(float))


def nominal_alpha_floor(n_raters: int, n_units: int) -> float:
    """The lowest nominal alpha any complete matrix of ``n_raters`` x ``n_units`` values can have.

    With ``m`` raters, ``N = m * n_units`` values and none missing, nominal alpha is at least
    ``1 - m (N - 1) / ((m - 1) N)``, whatever the categories: by Cauchy-Schwarz the units'
    disagreement cannot exceed ``m / N`` times the pooled one, with equality when every unit holds
    the same mix of categories (docs/political.md). Only missing values let alpha go lower.
    """
    if n_raters < 2 or n_units < 1:
        raise ValueError(f"the alpha floor needs at least two raters and one unit (got {n_raters} and {n_units})")
    values = n_raters * n_units
    return 1.0 - n_raters * (values - 1) / ((n_raters - 1) * values)


def nominal_alpha(reliability_data: np.ndarray) -> float:
    """Nominal Krippendorff alpha of 0/1 labels (raters x items, NaN = missing); NaN when undefined.

    The pairwise core's :func:`~argassets.platform.pairwise.agreement.krippendorff_alpha_nominal` (the
    ``krippendorff`` package's), the one implementation of both studies. Alpha is undefined when the
    pooled values hold a single category or no item has two labels.
    """
    return krippendorff_alpha_nominal(reliability_data)


def pointwise_metrics(gold: np.ndarray | Sequence[int], predicted: np.ndarray | Sequence[int]) -> dict[str, float]:
    """Agreement of binary political predictions with the human majority.

    Parameters
    ----------
    gold
        Human majority, 1 = political.
    predicted
        System prediction, 1 = political (see :func:`predicts_political`).

    Returns
    -------
    dict
        ``macro_f1``, ``micro_f1`` (= accuracy for one binary label), ``precision`` and ``recall``
        of the political class (0 when there is no positive prediction / gold), balanced accuracy,
        ``alpha_nominal`` (system and majority as two raters), ``n``.
    """
    y = np.asarray(gold, dtype=int)
    p = np.asarray(predicted, dtype=int)
    if y.shape != p.shape:
        raise ValueError(f"gold and predictions differ in length ({y.size} vs {p.size})")
    if y.size == 0:
        return {
            k: math.nan for k in ("macro_f1", "micro_f1", "precision", "recall", "balanced_accuracy", "alpha_nominal")
        } | {"n": 0}
    return {
        "macro_f1": float(f1_score(y, p, average="macro")),
        "micro_f1": float(f1_score(y, p, average="micro")),
        "precision": float(precision_score(y, p, pos_label=1, zero_division=0)),
        "recall": float(recall_score(y, p, pos_label=1, zero_division=0)),
        "balanced_accuracy": float(balanced_accuracy_score(y, p)) if np.unique(y).size > 1 else math.nan,
        "alpha_nominal": nominal_alpha(np.vstack([y, p])),
        "n": int(y.size),
    }


def pointwise_partitions(n_type: pd.Series) -> dict[str, np.ndarray]:
    """Boolean masks of the pointwise partitions (full 1,000 / confident 800 / ambiguous 200)."""
    return {name: n_type.isin(types).to_numpy() for name, types in POINTWISE_PARTITIONS.items()}


#: The annotators' labels of a pointwise item.
ANNOTATOR_COLUMNS = ("a1_label", "a2_label", "a3_label")


def agreement_partitions(items: pd.DataFrame) -> dict[str, np.ndarray]:
    """Items the three annotators labelled unanimously (``unanimous``) and 2-1 (``majority``).

    Raises
    ------
    ValueError
        A missing annotator column, or a label other than 0 or 1 (the message names the item).
    """
    missing = [c for c in ANNOTATOR_COLUMNS if c not in items.columns]
    if missing:
        raise ValueError(f"pointwise items: missing column(s) {', '.join(missing)}")
    labels = items[list(ANNOTATOR_COLUMNS)].to_numpy(dtype=float)
    bad = ~np.isin(labels, (0.0, 1.0)).all(axis=1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        name = items["meta_id"].iat[row] if "meta_id" in items.columns else row
        raise ValueError(f"pointwise item {name!r}: annotator labels must be 0 or 1, got {labels[row].tolist()}")
    unanimous = labels.min(axis=1) == labels.max(axis=1)
    return {"unanimous": unanimous, "majority": ~unanimous}
