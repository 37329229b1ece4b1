"""Study A's exports: its judgments in the tidy import format, and one evaluation record per judge.

A judge (or a paper's configuration, or a jury of ``aq_ensemble``) is evaluated by its agreement
with the experts of Webis-ArgQuality-20: every metric of ``aq_agreement_report`` (labels: Cohen's
kappa, Krippendorff's alpha, % agreement; Bradley-Terry scores: Pearson, Spearman, Kendall, MAE,
RMSE), per dimension and prompt strategy, with the prompt the judge was shown.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from argassets.platform.reporting.exports.records import (
    Dataset,
    EvaluationRecord,
    Metric,
    MetricResult,
    registry_model,
)
from argassets.platform.reporting.exports.studies import StudyExport, TableReader
from argassets.platform.reporting.exports.tidy import tidy_judgments

STUDY = "argument_quality"
DATASET = Dataset(
    name="Webis-ArgQuality-20",
    urls=["https://zenodo.org/records/3780049"],
    licence="CC-BY-4.0",
    citation=(
        "Gienapp, Stein, Hagen, Potthast: Efficient Pairwise Annotation of Argument Quality, ACL 2020; "
        "judged with argassets (Study A: pairwise argument quality with LLM judges)"
    ),
    description=(
        "LLM judges of argument quality on Webis-ArgQuality-20: every expert-annotated pair of arguments "
        "judged 'which argument is stronger: A, B or Tie?' per dimension (logic, rhetoric, dialectic) and "
        "prompt strategy (zero, few, cot), and their agreement with the experts."
    ),
)
KEYS = ("comparison_id", "dimension", "strategy", "order")
CORRELATION = (-1.0, 1.0)
METRICS = {
    "cohen_kappa": Metric("cohen_kappa", "Cohen's kappa (labels against the experts)", False, *CORRELATION),
    "krippendorff_alpha": Metric("krippendorff_alpha", "Krippendorff's alpha (nominal)", False, *CORRELATION),
    "percent_agreement": Metric("percent_agreement", "% agreement with the experts", False, 0.0, 100.0, "percent"),
    "pearson": Metric("pearson", "Pearson r (BT scores against the expert z-scores)", False, *CORRELATION),
    "spearman": Metric("spearman", "Spearman rho (BT scores against the expert z-scores)", False, *CORRELATION),
    "kendall": Metric("kendall", "Kendall tau (BT scores against the expert z-scores)", False, *CORRELATION),
    "mae": Metric("mae", "MAE (BT scores against the expert z-scores)", True, 0.0, None),
    "rmse": Metric("rmse", "RMSE (BT scores against the expert z-scores)", True, 0.0, None),
}


def tidy(judgments: pd.DataFrame) -> pd.DataFrame:
    """``aq_judgments`` rows as tidy import rows; probabilities back in the order presented."""
    frame = judgments.copy()
    if {"p_a", "p_b"} <= set(frame.columns):
        swapped = (frame["order"] == "ba").to_numpy()
        p_a, p_b = frame["p_a"].to_numpy().copy(), frame["p_b"].to_numpy().copy()
        frame["p_a"], frame["p_b"] = np.where(swapped, p_b, p_a), np.where(swapped, p_a, p_b)
    return tidy_judgments(frame, KEYS)


def _prompts(read: TableReader) -> dict[tuple[str, str], str]:
    """The system prompt of each (dimension, strategy), as the judges were shown it."""
    prompts = read("aq_prompts")
    if prompts is None or prompts.empty:
        return {}
    first = prompts.drop_duplicates(["dimension", "strategy"])
    return {
        (str(d), str(s)): str(t) for d, s, t in zip(first["dimension"], first["strategy"], first["system"], strict=True)
    }


def _results(
    rows: pd.DataFrame, judges: list[Any], prompts: dict[tuple[str, str], str], jury: bool
) -> list[MetricResult]:
    results = []
    for row in rows.itertuples(index=False):
        dimension, strategy = str(row.dimension), str(row.strategy)
        for column, metric in METRICS.items():
            value = getattr(row, column, None)
            if value is None or pd.isna(value):
                continue
            results.append(
                MetricResult(
                    result_id=f"{dimension}/{strategy}/{column}",
                    evaluation_name=f"Webis-ArgQuality-20 {dimension}, {strategy} prompt: {metric.name}",
                    metric=metric,
                    score=float(value),
                    num_samples=int(row.n_comparisons) if pd.notna(row.n_comparisons) else None,
                    judges=judges,
                    prompt=prompts.get((dimension, strategy), f"the protocol's {strategy} prompt for {dimension}"),
                    aggregation="majority_vote" if jury else None,
                    details={"dimension": dimension, "strategy": strategy, "scope": str(getattr(row, "scope", ""))},
                )
            )
    return results


def records(read: TableReader, registry: Any) -> list[EvaluationRecord]:
    """One record per model of ``aq_agreement_report`` and per jury of ``aq_ensemble``."""
    prompts = _prompts(read)
    out = []
    report = read("aq_agreement_report")
    for name, rows in [] if report is None else report.groupby("model", sort=True):
        entry = registry.get(name) if name in registry.names else None
        model = registry_model(str(name), entry)
        published = str(rows["kind"].iloc[0]) == "published"
        out.append(
            EvaluationRecord(
                STUDY,
                model,
                DATASET,
                _results(rows, [model], prompts, jury=False),
                "documentation" if published else "evaluation_run",
                {"kind": str(rows["kind"].iloc[0])},
            )
        )
    ensemble = read("aq_ensemble")
    for name, rows in [] if ensemble is None else ensemble.groupby("model", sort=True):
        members = [m for m in str(rows["members"].iloc[0]).split(",") if m]
        judges = [registry_model(m, registry.get(m) if m in registry.names else None) for m in members]
        model = registry_model(str(name), None)
        out.append(EvaluationRecord(STUDY, model, DATASET, _results(rows, judges, prompts, jury=True)))
    return out


EXPORT = StudyExport(
    study=STUDY,
    dataset=DATASET,
    judgments_table="aq_judgments",
    tidy=tidy,
    reports={
        "aq_agreement_report": ("a (model, strategy, dimension) against the experts", "model"),
        "aq_bt_scores": ("an argument's Bradley-Terry score under a (model, strategy, dimension)", "model"),
        "aq_ensemble": ("a jury (majority vote of models) against the experts", "model"),
        "aq_length_bias": ("a configuration's agreement split by the arguments' length difference", "model"),
    },
    records=records,
)
