"""Position bias: how often a judge's verdict follows the slot (A or B) rather than the argument."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from argassets.argument_quality.agreement_reports import FLAG_COLUMNS
from argassets.argument_quality.configurations import ModelInfo, _add_flags
from argassets.argument_quality.scope import DIMENSIONS
from argassets.argument_quality.voting import (
    MISSING,
    encode_labels,
    factorize_columns,
    majority_of_runs,
)


def position_bias_report(judgments: pd.DataFrame, info: dict[str, ModelInfo] | None = None) -> pd.DataFrame:
    """Order consistency and first-position preference of models judged in both orders.

    For every (model, strategy, dimension) with judgments in the swapped order (``order = "ba"``),
    and pooled over dimensions (``dimension = "all"``), with ``measured = True``:

    - ``order_consistency``: share of (comparison, run) pairs judged validly in both orders whose
      verdicts, mapped back to the comparison's orientation, agree (``n_pairs``);
    - ``order_consistency_majority``: the same for the majority over runs in each order;
    - ``first_position_share``: among valid decisive verdicts in either order, the share for the
      argument shown first (0.5 = no preference; ``n_decisive``), with a two-sided binomial test
      ``first_position_pvalue``;
    - ``tie_share``: share of ``Tie`` among the valid verdicts.

    Models judged in one order only get one row per strategy (``dimension = "all"``,
    ``measured = False``, metrics NaN), so the report also shows what was not measured.
    """
    columns = [
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
        measured = _bias_table(judgments, model_col, in_study, swapped_row[in_study])
    report = pd.concat([measured, unmeasured], ignore_index=True)
    for column in (
        "order_consistency",
        "order_consistency_majority",
        "first_position_share",
        "first_position_pvalue",
        "tie_share",
    ):
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
    report = _add_flags(report, flags)
    return report[columns]


def _bias_table(judgments: pd.DataFrame, model_col: str, rows: np.ndarray, swapped: np.ndarray) -> pd.DataFrame:
    """Position-bias metrics of the selected rows, per (model, strategy, dimension) and pooled."""
    keys, uniques = factorize_columns(judgments, [model_col, "strategy", "dimension", "comparison_id"], rows=rows)
    group, groups = factorize_columns(uniques, [model_col, "strategy", "dimension"])
    run = judgments["run"].to_numpy()[rows].astype(np.int64)
    n_runs = max(int(run.max()) + 1, 1)
    code = encode_labels(judgments["label"].to_numpy()[rows])
    # The label as presented: swapping A and B back for the swapped order.
    presented = np.where(swapped & (code == 0), 1, np.where(swapped & (code == 1), 0, code))
    size = len(uniques) * n_runs
    slot = keys * n_runs + run
    by_order = []
    for flag in (False, True):
        table = np.full(size, MISSING, dtype=np.int8)
        table[slot[swapped == flag]] = code[swapped == flag]
        by_order.append(table.reshape(len(uniques), n_runs))
    ab, ba = by_order
    both = (ab >= 0) & (ba >= 0)
    key_group = group
    n_groups = len(groups)
    counts = {
        "pairs": np.bincount(np.repeat(key_group, n_runs), both.ravel(), n_groups),
        "consistent": np.bincount(np.repeat(key_group, n_runs), (both & (ab == ba)).ravel(), n_groups),
    }
    maj_ab, maj_ba = majority_of_runs(ab), majority_of_runs(ba)
    maj_both = (maj_ab >= 0) & (maj_ba >= 0)
    counts["maj_pairs"] = np.bincount(key_group, maj_both, n_groups)
    counts["maj_consistent"] = np.bincount(key_group, maj_both & (maj_ab == maj_ba), n_groups)
    row_group = key_group[keys]
    for name, value in (("first", 0), ("second", 1), ("tie", 2)):
        counts[name] = np.bincount(row_group, presented == value, n_groups)
    counts["valid"] = np.bincount(row_group, presented >= 0, n_groups)

    per_dimension = groups.rename(columns={model_col: "model"}).assign(**counts)
    pooled = per_dimension.groupby(["model", "strategy"], sort=True)[list(counts)].sum().reset_index()
    pooled["dimension"] = "all"
    table = pd.concat([per_dimension, pooled], ignore_index=True)
    with np.errstate(all="ignore"):
        decisive = table["first"] + table["second"]
        table["order_consistency"] = np.where(table["pairs"] > 0, table["consistent"] / table["pairs"], np.nan)
        table["order_consistency_majority"] = np.where(
            table["maj_pairs"] > 0, table["maj_consistent"] / table["maj_pairs"], np.nan
        )
        table["first_position_share"] = np.where(decisive > 0, table["first"] / decisive, np.nan)
        table["tie_share"] = np.where(table["valid"] > 0, table["tie"] / table["valid"], np.nan)
    table["first_position_pvalue"] = [
        float(stats.binomtest(int(f), int(d), 0.5).pvalue) if d else np.nan
        for f, d in zip(table["first"], decisive, strict=True)
    ]
    table["n_pairs"] = table["pairs"].astype(np.int64)
    table["n_decisive"] = decisive.astype(np.int64)
    table["n_judgments"] = table["valid"].astype(np.int64)
    table["measured"] = True
    return table.drop(columns=list(counts))
