"""Study B's exports: its predictions in the tidy import format, and one evaluation record per system.

A system (a model, a published model's figures, an ensemble E1-E3 as a jury averaging its members)
is evaluated against the human studies: the pointwise study (is the argument political? F1,
balanced accuracy, nominal alpha, per partition) and the pairwise study (which of two is more
right-wing? ordinal alpha, rank distances, per subset), the latter with the humans' own agreement
across framings as the human baseline.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from argassets.platform.reporting.exports.records import (
    Dataset,
    EvaluationRecord,
    Metric,
    MetricResult,
    Model,
    registry_model,
)
from argassets.platform.reporting.exports.studies import StudyExport, TableReader
from argassets.platform.reporting.exports.tidy import tidy_judgments

STUDY = "political"
DATASET = Dataset(
    name="QT30 political positions (Robinson et al. 2026)",
    urls=[],
    licence="MIT",
    citation=(
        "Robinson, Williams, Atkinson, Cohn: Validating Political Position Predictions of Arguments (2026); "
        "Hautli-Janisz et al.: QT30, LREC 2022"
    ),
    description=(
        "Political positions (0 far left to 100 far right, or NA) of the arguments of QT30's 30 BBC Question "
        "Time debates, predicted by LLMs (5 repetitions each) and validated against human pointwise and "
        "pairwise studies."
    ),
)
UNIT = (0.0, 1.0)
POINTWISE = {
    "macro_f1": Metric("f1_macro", "macro F1 (political or not, against the crowd)", False, *UNIT),
    "balanced_accuracy": Metric("balanced_accuracy", "balanced accuracy (political or not)", False, *UNIT),
    "alpha_nominal": Metric("krippendorff_alpha_nominal", "Krippendorff's alpha (nominal)", False, -1.0, 1.0),
}
PAIRWISE = {
    "alpha_ordinal": Metric("krippendorff_alpha_ordinal", "Krippendorff's alpha (ordinal, pairs)", False, -1.0, 1.0),
    "d_tau": Metric("kendall_tau_distance", "Kendall tau distance to the human ranking", True, 0.0, 1.0),
    "d_footrule": Metric(
        "spearman_footrule_distance", "Spearman footrule distance to the human ranking", True, 0.0, None
    ),
    "macro_f1": Metric("f1_macro_pairs", "macro F1 of the pair verdicts", False, *UNIT),
}
PROMPT = "the protocol's political-position prompt (system and user messages of political_prompts)"


def tidy(predictions: pd.DataFrame) -> pd.DataFrame:
    """``political_predictions`` rows as tidy import rows (``repetition`` becomes ``run``)."""
    return tidy_judgments(predictions, ("argument_id",), run_column="repetition")


def _prompt(read: TableReader) -> str:
    prompts = read("political_prompts")
    if prompts is None or prompts.empty:
        return PROMPT
    return str(prompts["system"].iloc[0]).strip()


def _human_baseline(read: TableReader) -> dict[str, float]:
    """The humans' ordinal alpha between the left- and right-framed tasks, by subset."""
    humans = read("political_human_agreement")
    if humans is None or humans.empty:
        return {}
    rows = humans[humans["statistic"] == "alpha_ordinal_left_vs_right"]
    return {str(s): float(v) for s, v in zip(rows["subset"], rows["value"], strict=True)}


def _rows(
    frame: pd.DataFrame, metrics: dict[str, Metric], facet: str, study: str
) -> list[tuple[str, str, Metric, float, Any]]:
    out = []
    for row in frame.itertuples(index=False):
        part = str(getattr(row, facet))
        n = getattr(row, "n", None) if hasattr(row, "n") else getattr(row, "n_pairs", None)
        for column, metric in metrics.items():
            value = getattr(row, column, None)
            if value is not None and pd.notna(value):
                out.append((f"{study}/{part}/{column}", part, metric, float(value), n))
    return out


def _results(
    pointwise: pd.DataFrame,
    pairwise: pd.DataFrame,
    judges: list[Model],
    prompt: str,
    humans: dict[str, float],
    jury: bool,
) -> list[MetricResult]:
    results = []
    for study, frame, metrics, facet in (
        ("pointwise", pointwise, POINTWISE, "partition"),
        ("pairwise", pairwise, PAIRWISE, "subset"),
    ):
        for result_id, part, metric, value, n in _rows(frame, metrics, facet, study):
            baseline = humans.get(part) if study == "pairwise" and metric.id == "krippendorff_alpha_ordinal" else None
            results.append(
                MetricResult(
                    result_id=result_id,
                    evaluation_name=f"QT30 {study} human study, {facet} {part}: {metric.name}",
                    metric=metric,
                    score=value,
                    num_samples=int(n) if n is not None and pd.notna(n) else None,
                    judges=judges,
                    prompt=prompt,
                    aggregation="average" if jury else None,
                    human_baseline=baseline,
                    details={"human_study": study, facet: part},
                )
            )
    return results


def _members(read: TableReader, system: str) -> list[str]:
    members = read("political_ensemble_members")
    if members is None or system not in members.columns:
        return []
    return [str(s) for s in members.loc[members[system].astype(bool), "system"]]


def records(read: TableReader, registry: Any) -> list[EvaluationRecord]:
    """One record per system of the validation reports (the human rows are baselines, not systems)."""
    empty = pd.DataFrame(columns=["system", "kind"])
    pointwise = read("political_pointwise_validation")
    pairwise = read("political_pairwise_validation")
    pointwise = empty if pointwise is None else pointwise
    pairwise = empty if pairwise is None else pairwise
    prompt, humans = _prompt(read), _human_baseline(read)
    kinds = pd.concat([pointwise[["system", "kind"]], pairwise[["system", "kind"]]]).drop_duplicates("system")
    out = []
    for system, kind in zip(kinds["system"], kinds["kind"], strict=True):
        if kind == "human":
            continue
        entry = registry.get(system) if system in registry.names else None
        model = registry_model(str(system), entry)
        jury = kind == "ensemble"
        judges = [registry_model(m, registry.get(m) if m in registry.names else None) for m in _members(read, system)]
        results = _results(
            pointwise[pointwise["system"] == system],
            pairwise[pairwise["system"] == system],
            judges if jury and judges else [model],
            prompt,
            humans,
            jury and bool(judges),
        )
        source = "documentation" if str(kind).startswith("published") else "evaluation_run"
        out.append(EvaluationRecord(STUDY, model, DATASET, results, source, {"kind": str(kind)}))
    return out


EXPORT = StudyExport(
    study=STUDY,
    dataset=DATASET,
    judgments_table="political_predictions",
    tidy=tidy,
    reports={
        "political_pointwise_validation": ("a system against the pointwise human study, per partition", "system"),
        "political_pairwise_validation": ("a system against the pairwise human study, per subset", "system"),
        "political_model_stats": ("an argument's positions under a system (mean, std, P(NA))", "system"),
        "political_ensembles": ("an argument's position under an ensemble", "system"),
    },
    records=records,
)
