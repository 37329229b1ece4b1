"""Which convention gives the paper's inter-model Krippendorff alpha on the pointwise study?

"Validating Political Position Predictions of Arguments" reports the nominal alpha among its 22
models' political/apolitical predictions on the 1,000 pointwise items: 0.485 (full), 0.578
(confident), -0.048 (ambiguous), and 0.483 for the items the three annotators labelled unanimously
(n = 485) and 0.436 for those labelled by a 2-1 majority (n = 515).

:data:`CONVENTIONS` holds the plausible ways to turn the published probabilities of NA into that
alpha; :func:`convention_table` computes every one of them on every partition beside the paper's
figure. The platform's convention (:data:`DEFAULT_CONVENTION`: one rater per model, political when
the probability of NA is strictly below 0.5, nominal alpha) reproduces the unanimous and majority
figures to the third decimal; no convention here reproduces the full/confident/ambiguous ones
(docs/political.md has the residual). Plain numpy/pandas, no Dagster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np
import pandas as pd

from argassets.political.validation.pointwise import (
    ANNOTATOR_COLUMNS,
    NA_THRESHOLD,
    POINTWISE_PARTITIONS,
    agreement_partitions,
)

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "PAPER_INTER_MODEL_ALPHA",
    "Convention",
    "convention_table",
    "study_partitions",
]

#: The paper's inter-model nominal alpha per partition (three decimals, as published).
PAPER_INTER_MODEL_ALPHA: dict[str, float] = {
    "full": 0.485,
    "confident": 0.578,
    "ambiguous": -0.048,
    "unanimous": 0.483,
    "majority": 0.436,
}
#: Repetitions behind each published probability of NA (5: probabilities are multiples of 0.2).
REPETITIONS = 5


@dataclass(frozen=True)
class Convention:
    """One way to compute the inter-model alpha.

    Attributes
    ----------
    name, description
        Short key and what it does.
    reliability
        ``(models x items probabilities of NA, ensembles x items, items table) -> (raters x items)``
        reliability data (NaN = missing).
    level
        Krippendorff's level of measurement.
    """

    name: str
    description: str
    reliability: Callable[[np.ndarray, np.ndarray, pd.DataFrame], np.ndarray]
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal"


def _political(prob_na: np.ndarray, rule: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    flags = (prob_na < NA_THRESHOLD) if rule is None else rule(prob_na)
    return np.where(np.isnan(prob_na), np.nan, flags.astype(float))


def _repetitions(prob_na: np.ndarray) -> np.ndarray:
    """Each model's 5 repetitions as 5 raters: NA for the first ``round(5 p)``, a score for the rest."""
    na = np.rint(prob_na * REPETITIONS)
    rows = [np.where(np.isnan(na), np.nan, (na <= r).astype(float)) for r in range(REPETITIONS)]
    return np.stack(rows, axis=1).reshape(-1, prob_na.shape[1])


CONVENTIONS: tuple[Convention, ...] = (
    Convention(
        "threshold_lt_0.5",
        "one rater per model, political when P(NA) < 0.5 (the platform's)",
        lambda p, e, i: _political(p),
    ),
    Convention("threshold_le_0.5", "political when P(NA) <= 0.5", lambda p, e, i: _political(p, lambda x: x <= 0.5)),
    Convention(
        "never_na", "political when no repetition said NA (P(NA) = 0)", lambda p, e, i: _political(p, lambda x: x == 0)
    ),
    Convention(
        "any_score",
        "political when any repetition gave a score (P(NA) < 1)",
        lambda p, e, i: _political(p, lambda x: x < 1),
    ),
    Convention("repetitions_as_raters", "each model's 5 repetitions as 5 raters", lambda p, e, i: _repetitions(p)),
    Convention("probability_interval", "interval alpha on the probabilities of NA", lambda p, e, i: p, "interval"),
    Convention("probability_ordinal", "ordinal alpha on the probabilities of NA", lambda p, e, i: p, "ordinal"),
    Convention(
        "with_ensembles", "the 22 models and the 3 published ensembles", lambda p, e, i: _political(np.vstack([p, e]))
    ),
    Convention(
        "with_human_majority",
        "the 22 models and the annotators' majority as a 23rd rater",
        lambda p, e, i: np.vstack([_political(p), i["judgements_maj"].to_numpy(dtype=float)[None, :]]),
    ),
    Convention(
        "with_annotators",
        "the 22 models and the 3 annotators as raters",
        lambda p, e, i: np.vstack([_political(p), i[list(ANNOTATOR_COLUMNS)].to_numpy(dtype=float).T]),
    ),
)
DEFAULT_CONVENTION = CONVENTIONS[0].name


def study_partitions(items: pd.DataFrame) -> dict[str, np.ndarray]:
    """The study's partitions by sampling bucket (full, confident, ambiguous) and by annotator agreement."""
    masks = {name: items["n_type"].isin(types).to_numpy() for name, types in POINTWISE_PARTITIONS.items()}
    return masks | agreement_partitions(items)


def convention_table(
    items: pd.DataFrame,
    models: Mapping[str, np.ndarray],
    ensembles: Mapping[str, np.ndarray] | None = None,
    conventions: Sequence[Convention] = CONVENTIONS,
) -> pd.DataFrame:
    """Inter-model alpha under every convention on every partition, beside the paper's figure.

    Parameters
    ----------
    items
        Pointwise items (``n_type``, ``a1_label``..``a3_label``, ``judgements_maj``).
    models, ensembles
        Name -> probability of NA per item (aligned with ``items``; NaN = no prediction).

    Returns
    -------
    pandas.DataFrame
        ``convention, partition, alpha, n_items, n_raters, paper, delta, reproduced`` with
        ``reproduced`` true when ``alpha`` rounds to the paper's three decimals.
    """
    if len(models) < 2:
        raise ValueError("the inter-model alpha needs at least two models")
    p = np.vstack([np.asarray(v, dtype=float) for v in models.values()])
    e = (
        np.vstack([np.asarray(v, dtype=float) for v in (ensembles or {}).values()])
        if ensembles
        else np.empty((0, p.shape[1]))
    )
    if p.shape[1] != len(items) or e.shape[1] != len(items):
        raise ValueError(f"predictions cover {p.shape[1]} items, the study has {len(items)}")
    masks = study_partitions(items)
    rows = []
    for convention in conventions:
        data = convention.reliability(p, e, items)
        for partition, mask in masks.items():
            part = data[:, mask]
            alpha = float(krippendorff.alpha(reliability_data=part, level_of_measurement=convention.level))
            paper = PAPER_INTER_MODEL_ALPHA.get(partition, np.nan)
            rows.append(
                {
                    "convention": convention.name,
                    "partition": partition,
                    "alpha": alpha,
                    "n_items": int(mask.sum()),
                    "n_raters": int(part.shape[0]),
                    "paper": paper,
                    "delta": alpha - paper,
                    "reproduced": bool(np.isfinite(paper) and round(alpha, 3) == paper),
                }
            )
    return pd.DataFrame(rows)
