"""Which convention gives the paper's inter-model Krippendorff alpha on the pointwise study?

"Validating Political Position Predictions of Arguments" reports the nominal alpha among its 22
models' political/apolitical predictions on the 1,000 pointwise items: 0.485 (full), 0.578
(confident), -0.048 (ambiguous) in its Figure 2, and 0.483 for the items the three annotators
labelled unanimously (n = 485) and 0.436 for those labelled by a 2-1 majority (n = 515).

:data:`CONVENTIONS` holds the plausible ways to turn the published probabilities of NA into that
alpha; :func:`convention_table` computes every one of them on every partition beside the paper's
figure. Two reproduce the paper, each on its own figures (:data:`PAPER_ALPHA_CONVENTION`):

- the paper's (:data:`PAPER_CONVENTION`): a model's label counts only when its 5 repetitions agree
  (P(NA) = 0 political, P(NA) = 1 not) and is missing otherwise; full, confident, ambiguous;
- the platform's (:data:`PLATFORM_CONVENTION`): political when P(NA) < 0.5, one label per model
  and item; unanimous and majority, and the human-model medians of the paper's box plot
  (:data:`PAPER_HUMAN_MODEL_MEDIAN`, :func:`human_model_medians`).

No complete matrix of 22 raters on the 200 ambiguous items can go below -0.0474
(:func:`~argassets.political.validation.pointwise.nominal_alpha_floor`), so only a convention with
missing values can give -0.048. Plain numpy/pandas, no Dagster.
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
    POINTWISE_PARTITIONS,
    agreed_political,
    agreement_partitions,
    nominal_alpha,
    nominal_alpha_floor,
    threshold_political,
)

__all__ = [
    "CONVENTIONS",
    "PAPER_ALPHA_CONVENTION",
    "PAPER_CONVENTION",
    "PAPER_HUMAN_MODEL_MEDIAN",
    "PAPER_INTER_MODEL_ALPHA",
    "PAPER_REPORT_FIGURES",
    "PLATFORM_CONVENTION",
    "Convention",
    "convention_table",
    "human_model_medians",
    "paper_comparison",
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
#: The medians over the 22 models of alpha(human majority, model), the labels of the paper's box plot.
PAPER_HUMAN_MODEL_MEDIAN: dict[str, float] = {"full": 0.312, "confident": 0.424, "ambiguous": -0.229}
#: Repetitions behind each published probability of NA (5: probabilities are multiples of 0.2).
REPETITIONS = 5
#: The platform's convention (political when P(NA) < 0.5) and the paper's Figure 2 one (repetitions agree).
PLATFORM_CONVENTION = "threshold_lt_0.5"
PAPER_CONVENTION = "repetitions_agree"
#: Partition -> the convention that reproduces the paper's inter-model alpha there.
PAPER_ALPHA_CONVENTION: dict[str, str] = {
    "full": PAPER_CONVENTION,
    "confident": PAPER_CONVENTION,
    "ambiguous": PAPER_CONVENTION,
    "unanimous": PLATFORM_CONVENTION,
    "majority": PLATFORM_CONVENTION,
}
#: The report row of the published models' inter-model alpha under each convention (``evaluate_pointwise``).
REPORT_ROW = {PAPER_CONVENTION: "inter-model:published", PLATFORM_CONVENTION: "inter-model:published:threshold"}
#: (report row, partition) -> the paper's figure that row reproduces.
PAPER_REPORT_FIGURES: dict[tuple[str, str], float] = {
    (REPORT_ROW[PAPER_ALPHA_CONVENTION[partition]], partition): figure
    for partition, figure in PAPER_INTER_MODEL_ALPHA.items()
} | {("human-model:published", partition): figure for partition, figure in PAPER_HUMAN_MODEL_MEDIAN.items()}


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
    if rule is None:
        return threshold_political(prob_na)
    return np.where(np.isnan(prob_na), np.nan, rule(prob_na).astype(float))


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
    Convention(
        PAPER_CONVENTION,
        "a label only when the 5 repetitions agree (P(NA) = 0 or 1), missing otherwise (the paper's Figure 2)",
        lambda p, e, i: agreed_political(p),
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
        ``convention, partition, alpha, n_items, n_raters, missing_share, complete_floor, paper,
        delta, reproduced``: ``missing_share`` is the share of (rater, item) cells without a
        value, ``complete_floor`` the lowest alpha a complete matrix of that shape can have, and
        ``reproduced`` is true when ``alpha`` rounds to the paper's three decimals.
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
                    "missing_share": float(np.isnan(part).mean()),
                    "complete_floor": nominal_alpha_floor(part.shape[0], part.shape[1]),
                    "paper": paper,
                    "delta": alpha - paper,
                    "reproduced": bool(np.isfinite(paper) and round(alpha, 3) == paper),
                }
            )
    return pd.DataFrame(rows)


def human_model_medians(
    items: pd.DataFrame,
    models: Mapping[str, np.ndarray],
    conventions: Sequence[str] = (PLATFORM_CONVENTION, PAPER_CONVENTION),
) -> pd.DataFrame:
    """Median over the models of nominal alpha(human majority, model) per convention and partition.

    Only conventions that give one label per model apply (a model and the majority are the two
    raters; items where the model has no label drop out). Returns ``convention, partition,
    median_alpha, n_models, paper, delta, reproduced`` (paper: :data:`PAPER_HUMAN_MODEL_MEDIAN`).
    """
    by_name = {c.name: c for c in CONVENTIONS}
    unknown = [name for name in conventions if name not in by_name]
    if unknown:
        raise ValueError(f"unknown convention(s) {', '.join(unknown)} (known: {', '.join(by_name)})")
    p = np.vstack([np.asarray(v, dtype=float) for v in models.values()])
    gold = items["judgements_maj"].to_numpy(dtype=float)
    rows = []
    for name in conventions:
        labels = by_name[name].reliability(p, np.empty((0, p.shape[1])), items)
        if labels.shape != p.shape:
            raise ValueError(f"convention {name!r} does not give one label per model and item")
        for partition, mask in study_partitions(items).items():
            alphas = [nominal_alpha(np.vstack([gold[mask], row[mask]])) for row in labels]
            median = float(np.nanmedian(alphas))
            paper = PAPER_HUMAN_MODEL_MEDIAN.get(partition, np.nan)
            rows.append(
                {
                    "convention": name,
                    "partition": partition,
                    "median_alpha": median,
                    "n_models": len(alphas),
                    "paper": paper,
                    "delta": median - paper,
                    "reproduced": bool(np.isfinite(paper) and round(median, 3) == paper),
                }
            )
    return pd.DataFrame(rows)


def paper_comparison(report: pd.DataFrame) -> pd.DataFrame:
    """The agreement rows of a pointwise report (human, inter-model, human-model) beside the paper's figures.

    Returns ``system, partition, alpha_nominal, missing_share, n, paper, delta`` (``paper`` from
    :data:`PAPER_REPORT_FIGURES`, NaN where the paper gives none), grouped by system, partitions in the report's order.
    """
    rows = report[report["kind"].isin(["human", "inter-model", "human-model"])]
    keys = zip(rows["system"], rows["partition"], strict=True)
    paper = np.array([PAPER_REPORT_FIGURES.get(key, np.nan) for key in keys], dtype=float)
    out = rows[["system", "partition", "alpha_nominal", "missing_share", "n"]].assign(
        paper=paper, delta=rows["alpha_nominal"].to_numpy(dtype=float) - paper
    )
    return out.sort_values("system", kind="stable").reset_index(drop=True)
