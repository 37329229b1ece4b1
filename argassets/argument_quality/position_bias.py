"""Position bias of Study A's judges: the platform's metrics per (model, strategy, dimension), with flags.

The metrics are :mod:`argassets.platform.pairwise.position_bias`'s; this module adds the rows of
models judged in one order only and the registry's flags.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.argument_quality.agreement_reports import FLAG_COLUMNS
from argassets.argument_quality.configurations import ModelInfo, add_flags
from argassets.argument_quality.scope import DIMENSIONS
from argassets.platform.pairwise.labels import factorize_columns
from argassets.platform.pairwise.position_bias import POSITION_METRICS, position_bias_metrics

#: Columns of :func:`position_bias_report`.
POSITION_BIAS_COLUMNS = [
    "model",
    "strategy",
    "dimension",
    "measured",
    "order_consistency",
    "order_consistency_majority",
    "first_position_share",
    "first_position_pvalue",
    "tie_share",
    "n_pairs",
    "n_decisive",
    "n_judgments",
    "position_bias_in_registry",
    *FLAG_COLUMNS,
]


def position_bias_report(judgments: pd.DataFrame, info: dict[str, ModelInfo] | None = None) -> pd.DataFrame:
    """Order consistency and first-position preference of models judged in both orders.

    For every (model, strategy, dimension) with judgments in the swapped order (``order = "ba"``),
    and pooled over dimensions (``dimension = "all"``), with ``measured = True``: order
    consistency (per run and of the majorities), the first-position share with its binomial test
    and the tie share (:func:`argassets.platform.pairwise.position_bias.position_bias_metrics`).

    Models judged in one order only get one row per strategy (``dimension = "all"``,
    ``measured = False``, metrics NaN), so the report also shows what was not measured.
    """
    columns = POSITION_BIAS_COLUMNS
    model_col = "model" if "model" in judgments.columns else "judge_model"
    if judgments.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    if "order" in judgments.columns:
        swapped_row = judgments["order"].to_numpy(dtype=object) == "ba"
    else:
        swapped_row = np.zeros(len(judgments), dtype=bool)
    model_codes, model_names = pd.factorize(judgments[model_col])
    swapped_model = np.zeros(len(model_names), dtype=bool)
    swapped_model[np.unique(model_codes[swapped_row])] = True
    in_study = swapped_model[model_codes]

    # Models judged in one order only: one "not measured" row per strategy.
    _, unmeasured = factorize_columns(judgments, [model_col, "strategy"], rows=~in_study)
    unmeasured = unmeasured.rename(columns={model_col: "model"}).assign(
        dimension="all", measured=False, n_pairs=0, n_decisive=0, n_judgments=0
    )

    measured = pd.DataFrame()
    if in_study.any():
        measured = position_bias_metrics(
            judgments,
            [model_col, "strategy"],
            "dimension",
            "comparison_id",
            swapped_row[in_study],
            rows=in_study,
            names={model_col: "model"},
        )
    report = pd.concat([measured, unmeasured], ignore_index=True)
    for column in POSITION_METRICS:
        report[column] = report[column].astype(float) if column in report.columns else np.nan
    for column in ("n_pairs", "n_decisive", "n_judgments"):
        report[column] = report[column].astype(np.int64)
    report["measured"] = report["measured"].astype(bool)
    rank = {d: i for i, d in enumerate([*DIMENSIONS, "all"])}
    report["_rank"] = report["dimension"].map(rank).fillna(len(rank))
    report = report.sort_values(["model", "strategy", "_rank"], kind="stable").drop(columns="_rank")
    report = report.reset_index(drop=True)
    flags = info or {}
    report["position_bias_in_registry"] = [
        bool(flags[m].position_bias) if m in flags else False for m in report["model"]
    ]
    report = add_flags(report, flags)
    return report[columns]
