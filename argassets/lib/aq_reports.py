"""Study A's reports: BT scores beside the experts, agreement, variability, ensembles, position bias.

Every function takes and returns tidy pandas tables (the shapes of the Dagster assets of the
``aggregation`` and ``reports`` groups) and imports nothing from Dagster, so the whole analysis
runs in a notebook as well::

    majority = majority_votes(judgments)                        # argassets.lib.voting
    scores = llm_bt_scores(majority, experts, arguments)
    report = agreement_report(scores, majority, experts, arguments)

A *configuration* is (model, strategy, dimension); the reports add, per (model, strategy), a row
with ``dimension = "mean"`` holding the mean of each metric over the dimensions present.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from argassets.lib.agreement import (
    LABEL_METRICS,
    METRIC_RANGES,
    SCORE_METRICS,
    krippendorff_alpha_from_value_counts,
    label_agreement,
    score_agreement,
)
from argassets.lib.bradley_terry import DEFAULT_SETTINGS, ITEM_COLUMNS, BTSettings, bt_scores
from argassets.lib.registry import DIMENSIONS, ModelRegistry
from argassets.lib.voting import (
    LABELS,
    MISSING,
    encode_labels,
    factorize_columns,
    majority_of_runs,
    plurality_vote,
    run_agreement_pattern,
)

__all__ = [
    "CONFIG_COLUMNS",
    "MEAN_DIMENSION",
    "ModelInfo",
    "agreement_report",
    "best_configuration",
    "cross_model_report",
    "disconnected_topics",
    "ensemble_members",
    "ensemble_report",
    "expert_bt_scores",
    "expert_fit_summary",
    "llm_bt_scores",
    "markdown_table",
    "metric_range_violations",
    "model_info",
    "plot_agreement_heatmap",
    "plot_scores_vs_experts",
    "png_markdown",
    "position_bias_report",
    "published_scores",
    "report_configuration_mismatch",
    "tie_handling_candidates",
    "variability_report",
]

CONFIG_COLUMNS = ["model", "strategy", "dimension"]
MEAN_DIMENSION = "mean"
FLAG_COLUMNS = ["scope", "is_baseline", "in_registry"]
COMPARISON_SIDES = ["discussion_id_a", "argument_id_a", "discussion_id_b", "argument_id_b"]
AGREEMENT_COLUMNS = [
    *CONFIG_COLUMNS,
    *SCORE_METRICS,
    *LABEL_METRICS,
    "n_comparisons",
    "n_items",
    "n_no_verdict",
    "correlation_mean",
    "is_best",
    *FLAG_COLUMNS,
]


# --- Models ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelInfo:
    """What the reports say about a model besides its numbers."""

    is_baseline: bool
    scope: str
    in_registry: bool
    position_bias: bool


def model_info(
    recorded: pd.DataFrame | None, registry: ModelRegistry | None
) -> dict[str, ModelInfo]:
    """Per model: baseline flag and scope as recorded with its judgments, and registry membership.

    Parameters
    ----------
    recorded
        Rows with ``model`` (or ``judge_model``) and, when known, ``is_baseline`` and ``scope`` as
        recorded in ``aq_judgments``; several scopes of one model are joined with `` | ``.
    registry
        The current registry; models no longer in it are reported with ``in_registry = False``.
    """
    info: dict[str, ModelInfo] = {}
    entries = {e.name: e for e in registry.models} if registry is not None else {}
    if recorded is not None and len(recorded):
        column = "model" if "model" in recorded.columns else "judge_model"
        for name, rows in recorded.groupby(column, sort=True):
            entry = entries.get(str(name))
            if "is_baseline" in rows.columns and rows["is_baseline"].notna().any():
                baseline = bool(rows["is_baseline"].dropna().astype(bool).any())
            else:
                baseline = bool(entry.is_baseline) if entry else False
            if "scope" in rows.columns and rows["scope"].notna().any():
                scope = " | ".join(sorted(str(s) for s in rows["scope"].dropna().unique()))
            else:
                scope = entry.scope.describe() if entry else "unknown"
            info[str(name)] = ModelInfo(
                is_baseline=baseline,
                scope=scope,
                in_registry=entry is not None,
                position_bias=bool(entry.position_bias) if entry else False,
            )
    for name, entry in entries.items():
        info.setdefault(
            name,
            ModelInfo(entry.is_baseline, entry.scope.describe(), True, entry.position_bias),
        )
    return info


def _add_flags(frame: pd.DataFrame, info: dict[str, ModelInfo]) -> pd.DataFrame:
    unknown = ModelInfo(False, "unknown", False, False)
    models = frame["model"].astype(str)
    frame["scope"] = [info.get(m, unknown).scope for m in models]
    frame["is_baseline"] = np.array([info.get(m, unknown).is_baseline for m in models], dtype=bool)
    frame["in_registry"] = np.array([info.get(m, unknown).in_registry for m in models], dtype=bool)
    return frame


# --- Scores ------------------------------------------------------------------------------------


def published_scores(arguments: pd.DataFrame) -> pd.DataFrame:
    """The published z-scores, long: ``dimension, topic_id, discussion_id, argument_id, published_z``.

    Only argumentative texts with a real score (not the -3.0 placeholder) are kept.
    """
    columns = {f"published_{d}": d for d in DIMENSIONS}
    missing = [c for c in [*ITEM_COLUMNS, *columns] if c not in arguments.columns]
    if missing:
        raise ValueError(f"webis_arguments: missing column(s) {', '.join(missing)}")
    keep = arguments
    if "is_argument" in arguments.columns:
        keep = arguments[arguments["is_argument"].astype(bool)]
    long = keep.melt(
        id_vars=list(ITEM_COLUMNS), value_vars=list(columns), var_name="dimension", value_name="published_z"
    )
    long["dimension"] = long["dimension"].map(columns)
    long = long[long["published_z"] != -3.0]
    return long[["dimension", *ITEM_COLUMNS, "published_z"]].reset_index(drop=True)


def expert_bt_scores(
    experts: pd.DataFrame, arguments: pd.DataFrame, settings: BTSettings = DEFAULT_SETTINGS
) -> pd.DataFrame:
    """BT scores from the raw expert comparisons per dimension and topic, beside the published ones.

    Returns
    -------
    pandas.DataFrame
        ``dimension, topic_id, discussion_id, argument_id, bt_score, bt_z, published_z,
        n_comparisons, component``.
    """
    scores = bt_scores(experts, ["dimension"], settings)
    scores = scores.merge(published_scores(arguments), on=["dimension", *ITEM_COLUMNS], how="left")
    order = ["dimension", *ITEM_COLUMNS, "bt_score", "bt_z", "published_z", "n_comparisons", "component"]
    return scores[order]


def expert_fit_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Per dimension: Pearson, Spearman, Kendall, MAE, RMSE of ``bt_z`` against ``published_z``."""
    rows = []
    for dimension in [d for d in DIMENSIONS if d in set(scores["dimension"])]:
        part = scores[scores["dimension"] == dimension]
        metrics = score_agreement(part["bt_z"].to_numpy(), part["published_z"].to_numpy())
        rows.append({"dimension": dimension, **metrics, "n_items": int(metrics["n_items"])})
    columns = ["dimension", *SCORE_METRICS, "n_items"]
    return pd.DataFrame(rows, columns=columns)


def tie_handling_candidates(
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    ties: Sequence[str] = ("win_each", "half_each", "drop"),
    alphas: Sequence[float] = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 0.1, 1.0),
) -> pd.DataFrame:
    """How well each tie handling and regularisation reproduces the published expert scores.

    Returns
    -------
    pandas.DataFrame
        One row per (ties, alpha, dimension) plus ``dimension = "mean"``, with Pearson, Spearman
        and MAE against the published z-scores; a candidate that cannot be fitted (e.g. ``drop``
        with ``alpha = 0``) has an ``error`` instead.
    """
    rows = []
    for tie in ties:
        for alpha in alphas:
            try:
                summary = expert_fit_summary(
                    expert_bt_scores(experts, arguments, BTSettings(ties=tie, alpha=alpha))  # type: ignore[arg-type]
                )
            except (ValueError, RuntimeError) as exc:
                rows.append({"ties": tie, "alpha": alpha, "dimension": MEAN_DIMENSION, "error": str(exc)})
                continue
            for record in summary.to_dict("records"):
                rows.append({"ties": tie, "alpha": alpha, **record})
            rows.append(
                {
                    "ties": tie,
                    "alpha": alpha,
                    "dimension": MEAN_DIMENSION,
                    **summary[list(SCORE_METRICS)].mean().to_dict(),
                    "n_items": int(summary["n_items"].sum()),
                }
            )
    frame = pd.DataFrame(rows)
    if "error" not in frame.columns:
        frame["error"] = None
    return frame[["ties", "alpha", "dimension", "pearson", "spearman", "mae", "n_items", "error"]]


def _expert_positions(experts: pd.DataFrame, majority: pd.DataFrame) -> np.ndarray:
    """Row of ``experts`` of each majority row's comparison; errors name unknown comparisons."""
    index = pd.Index(experts["comparison_id"])
    if not index.is_unique:
        duplicated = index[index.duplicated()][0]
        raise ValueError(f"webis_expert_comparisons: comparison_id {duplicated!r} occurs twice")
    pos = index.get_indexer(majority["comparison_id"])
    bad = pos < 0
    if not bad.any():
        bad = experts["dimension"].to_numpy()[pos] != majority["dimension"].to_numpy()
    if bad.any():
        row = majority.iloc[int(np.flatnonzero(bad)[0])]
        raise ValueError(
            f"aq_majority_votes: comparison {row['comparison_id']!r} ({row['dimension']}) of model "
            f"{row['model']!r} is not in webis_expert_comparisons"
        )
    return pos


def _labelled_comparisons(majority: pd.DataFrame, experts: pd.DataFrame) -> pd.DataFrame:
    """Majority labels with the topic and argument ids of their comparison."""
    pos = _expert_positions(experts, majority)
    out = majority[["model", "strategy", "dimension", "majority_label"]].reset_index(drop=True)
    for column in ("topic_id", *COMPARISON_SIDES):
        out[column] = experts[column].to_numpy().astype(np.int64)[pos]
    return out


def llm_bt_scores(
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    settings: BTSettings = DEFAULT_SETTINGS,
    *,
    n_bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """BT scores of every configuration from its majority labels, beside the published scores.

    Returns
    -------
    pandas.DataFrame
        ``model, strategy, dimension, topic_id, discussion_id, argument_id, bt_score, bt_z,
        ci_low, ci_high, published_z, n_comparisons, component`` (``ci_*`` NaN without bootstrap).
    """
    labelled = _labelled_comparisons(majority, experts)
    scores = bt_scores(
        labelled,
        CONFIG_COLUMNS,
        settings,
        label_column="majority_label",
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence=confidence,
    )
    if not n_bootstrap:
        scores["ci_low"] = np.nan
        scores["ci_high"] = np.nan
    scores = scores.merge(published_scores(arguments), on=["dimension", *ITEM_COLUMNS], how="left")
    order = [
        *CONFIG_COLUMNS, *ITEM_COLUMNS, "bt_score", "bt_z", "ci_low", "ci_high", "published_z",
        "n_comparisons", "component",
    ]
    return scores[order]


# --- Agreement ---------------------------------------------------------------------------------


def _config_codes(frame: pd.DataFrame, configs: pd.DataFrame) -> np.ndarray:
    """Index of each row's configuration in ``configs`` (-1 when absent)."""
    codes, uniques = factorize_columns(frame, CONFIG_COLUMNS)
    lookup = pd.MultiIndex.from_frame(configs[CONFIG_COLUMNS].astype(str))
    position = lookup.get_indexer(pd.MultiIndex.from_frame(uniques[CONFIG_COLUMNS].astype(str)))
    return position[codes] if len(codes) else codes


def _score_metrics(
    scores: pd.DataFrame, reference: pd.DataFrame, configs: pd.DataFrame, ref_column: str
) -> pd.DataFrame:
    """Score metrics of each configuration's ``bt_z`` against ``reference[ref_column]``."""
    joined = scores[[*CONFIG_COLUMNS, *ITEM_COLUMNS, "bt_z"]].merge(
        reference, on=[c for c in reference.columns if c != ref_column], how="inner"
    )
    rows = []
    groups = {key: part for key, part in joined.groupby(CONFIG_COLUMNS, sort=False)}
    for key in configs[CONFIG_COLUMNS].itertuples(index=False, name=None):
        part = groups.get(tuple(key))
        if part is None:
            metrics = {m: np.nan for m in SCORE_METRICS} | {"n_items": 0.0}
        else:
            metrics = score_agreement(part["bt_z"].to_numpy(), part[ref_column].to_numpy())
        rows.append(metrics)
    out = pd.DataFrame(rows, columns=[*SCORE_METRICS, "n_items"])
    out["n_items"] = out["n_items"].astype(np.int64)
    return out


def _label_metrics(
    majority: pd.DataFrame, reference: pd.DataFrame, configs: pd.DataFrame, ref_label: str
) -> pd.DataFrame:
    """Label metrics of each configuration's majority labels against ``reference[ref_label]``.

    ``reference`` holds ``dimension``, ``comparison_id`` and ``ref_label``, one row per comparison.
    """
    index = pd.MultiIndex.from_frame(reference[["dimension", "comparison_id"]].astype(str))
    if not index.is_unique:
        raise ValueError("reference labels: a comparison occurs twice")
    ref_codes = encode_labels(reference[ref_label].reset_index(drop=True))
    m_codes, m_uniques = factorize_columns(majority, ["dimension", "comparison_id"])
    position = index.get_indexer(pd.MultiIndex.from_frame(m_uniques.astype(str)))[m_codes]
    group = _config_codes(majority, configs)
    llm = encode_labels(majority["majority_label"].reset_index(drop=True))
    ref = np.where(position >= 0, ref_codes[np.maximum(position, 0)], MISSING)
    present = (group >= 0) & (position >= 0)
    metrics = label_agreement(group[present], llm[present], ref[present], len(configs), len(LABELS))
    no_verdict = np.bincount(group[present & (llm == MISSING)], minlength=len(configs))
    out = pd.DataFrame(metrics)
    out["n_no_verdict"] = no_verdict.astype(np.int64)
    return out


def _with_mean_rows(
    report: pd.DataFrame,
    metric_columns: Sequence[str],
    sum_columns: Sequence[str],
    keys: Sequence[str] = ("model", "strategy"),
) -> pd.DataFrame:
    """Append, per ``keys`` (a model and strategy), a ``mean`` row: the mean over the dimensions
    present of every metric (NaN ignored) and the sum of every count."""
    if report.empty:
        return report
    keys = list(keys)
    grouped = report.groupby(keys, sort=False, dropna=False)
    mean_rows = pd.concat(
        [grouped[list(metric_columns)].mean(), grouped[list(sum_columns)].sum()], axis=1
    ).reset_index()
    mean_rows["dimension"] = MEAN_DIMENSION
    out = pd.concat([report, mean_rows], ignore_index=True)
    rank = {d: i for i, d in enumerate([*DIMENSIONS, MEAN_DIMENSION])}
    out["_rank"] = out["dimension"].map(rank).fillna(len(rank))
    out = out.sort_values([*keys, "_rank", "dimension"], kind="stable").drop(columns="_rank")
    return out.reset_index(drop=True)


def _configurations(majority: pd.DataFrame) -> pd.DataFrame:
    """The distinct (model, strategy, dimension) of a majority table, sorted."""
    return factorize_columns(majority, CONFIG_COLUMNS)[1]


def agreement_report(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    info: dict[str, ModelInfo] | None = None,
    *,
    reference: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """LLM configurations against the experts: one row per configuration, plus the mean rows.

    Parameters
    ----------
    scores
        ``aq_bt_scores`` (``model, strategy, dimension``, argument keys, ``bt_z``).
    majority
        ``aq_majority_votes``.
    experts
        ``webis_expert_comparisons`` (the expert labels).
    arguments
        ``webis_arguments`` (the published z-scores, the default reference).
    info
        Model flags (:func:`model_info`).
    reference
        Scores to compare with instead of the published ones: ``dimension``, argument keys and
        ``published_z`` (e.g. the expert BT scores of ``aq_expert_bt_scores``).

    Returns
    -------
    pandas.DataFrame
        :data:`AGREEMENT_COLUMNS`: Pearson, Spearman, Kendall, MAE, RMSE of ``bt_z`` against the
        expert z-scores on the configuration's arguments (``n_items``); Cohen's kappa,
        Krippendorff's alpha and percent agreement of the majority labels against the expert
        labels (``n_comparisons`` with a verdict; ``n_no_verdict`` without); ``correlation_mean``
        (mean of r, rho, tau) and ``is_best`` (see :func:`best_configuration`).
    """
    configs = _configurations(majority)
    ref_scores = published_scores(arguments) if reference is None else reference
    ref_scores = ref_scores[["dimension", *ITEM_COLUMNS, "published_z"]]
    ref_labels = experts[["comparison_id", "dimension", "label"]].rename(columns={"label": "expert_label"})
    report = pd.concat(
        [
            configs,
            _score_metrics(scores, ref_scores, configs, "published_z"),
            _label_metrics(majority, ref_labels, configs, "expert_label"),
        ],
        axis=1,
    )
    return _finish_report(report, info or {})


def _finish_report(report: pd.DataFrame, info: dict[str, ModelInfo]) -> pd.DataFrame:
    report = _with_mean_rows(
        report, [*SCORE_METRICS, *LABEL_METRICS], ["n_comparisons", "n_items", "n_no_verdict"]
    )
    report["correlation_mean"] = report[["pearson", "spearman", "kendall"]].mean(axis=1, skipna=False)
    report = _add_flags(report, info) if len(report) else report.assign(scope=None, is_baseline=None, in_registry=None)
    best = best_configuration(report)
    report["is_best"] = (
        (report["model"] == best[0]) & (report["strategy"] == best[1]) if best else False
    )
    for column in ("n_comparisons", "n_items", "n_no_verdict"):
        report[column] = report[column].astype(np.int64)
    return report[AGREEMENT_COLUMNS].reset_index(drop=True)


def best_configuration(report: pd.DataFrame) -> tuple[str, str] | None:
    """The (model, strategy) with the highest mean of r, rho and tau against the experts.

    Ranked on the ``mean`` rows, among the first non-empty tier of: non-baseline models with full
    scope covering all three dimensions; any such complete configuration (baselines too); any
    configuration with a defined mean (if no mean is defined at all: the first configuration by
    name). Ties are broken by model and strategy name.
    """
    if report.empty:
        return None
    means = report[report["dimension"] == MEAN_DIMENSION].copy()
    if "correlation_mean" not in means.columns:
        means["correlation_mean"] = means[["pearson", "spearman", "kendall"]].mean(axis=1, skipna=False)
    dims = report[report["dimension"] != MEAN_DIMENSION].groupby(["model", "strategy"])["dimension"].nunique()
    means["n_dims"] = [dims.get((m, s), 0) for m, s in zip(means["model"], means["strategy"], strict=True)]
    defined = means[means["correlation_mean"].notna()]
    if defined.empty:
        # No configuration has defined correlations (e.g. constant scores): fall back to names.
        top = means.sort_values(["model", "strategy"]).iloc[0] if len(means) else None
        return (str(top["model"]), str(top["strategy"])) if top is not None else None
    means = defined
    complete = means["n_dims"] == len(DIMENSIONS)
    if "scope" in means.columns:
        complete &= means["scope"] == "full"
    tiers = [complete, pd.Series(True, index=means.index)]
    if "is_baseline" in means.columns:
        tiers.insert(0, complete & ~means["is_baseline"].astype(bool))
    pool = next(means[tier] for tier in tiers if tier.any())
    pool = pool.sort_values(["correlation_mean", "model", "strategy"], ascending=[False, True, True])
    top = pool.iloc[0]
    return str(top["model"]), str(top["strategy"])


def cross_model_report(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    best: tuple[str, str] | None,
    info: dict[str, ModelInfo] | None = None,
) -> pd.DataFrame:
    """Every configuration against the best one (same dimension): the agreement metrics.

    Scores are compared on the arguments both scored, labels on the comparisons both labelled.
    """
    columns = [
        *CONFIG_COLUMNS, "best_model", "best_strategy", *SCORE_METRICS, *LABEL_METRICS,
        "n_comparisons", "n_items", *FLAG_COLUMNS,
    ]
    if best is None or majority.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    best_model, best_strategy = best
    configs = _configurations(majority)
    is_best_s = (scores["model"] == best_model) & (scores["strategy"] == best_strategy)
    ref_scores = scores.loc[is_best_s, ["dimension", *ITEM_COLUMNS, "bt_z"]].rename(columns={"bt_z": "best_z"})
    is_best_m = (majority["model"] == best_model) & (majority["strategy"] == best_strategy)
    ref_labels = majority.loc[is_best_m, ["comparison_id", "dimension", "majority_label"]].rename(
        columns={"majority_label": "best_label"}
    )
    report = pd.concat(
        [
            configs,
            _score_metrics(scores, ref_scores, configs, "best_z"),
            _label_metrics(majority, ref_labels, configs, "best_label").drop(columns="n_no_verdict"),
        ],
        axis=1,
    )
    report["best_model"] = best_model
    report["best_strategy"] = best_strategy
    report = _with_mean_rows(
        report,
        [*SCORE_METRICS, *LABEL_METRICS],
        ["n_comparisons", "n_items"],
        keys=["model", "strategy", "best_model", "best_strategy"],
    )
    report = _add_flags(report, info or {})
    for column in ("n_comparisons", "n_items"):
        report[column] = report[column].astype(np.int64)
    return report[columns]


def variability_report(majority: pd.DataFrame, info: dict[str, ModelInfo] | None = None) -> pd.DataFrame:
    """Per configuration: how often the runs agree, and Krippendorff's alpha across the runs.

    ``share_all_equal``, ``share_two_equal``, ``share_all_unequal`` are shares of the comparisons
    whose runs are all valid (``n_comparisons``; ``n_incomplete`` have a missing or invalid run);
    with 3 runs they are the comparisons with 1, 2 and 3 distinct labels. ``krippendorff_alpha``
    treats the runs as raters (nominal; incomplete comparisons count with their valid runs).
    """
    run_columns = sorted(
        [c for c in majority.columns if c.startswith("label_run")], key=lambda c: int(c[len("label_run"):])
    )
    columns = [
        *CONFIG_COLUMNS, "n_runs", "share_all_equal", "share_two_equal", "share_all_unequal",
        "krippendorff_alpha", "n_comparisons", "n_incomplete", *FLAG_COLUMNS,
    ]
    if majority.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    configs = _configurations(majority)
    group = _config_codes(majority, configs)
    runs = np.stack([encode_labels(majority[c].reset_index(drop=True)) for c in run_columns], axis=1)
    # Only runs that exist somewhere in a configuration count (a scoped model may have fewer runs).
    distinct = run_agreement_pattern(runs)
    k = len(configs)
    complete = distinct > 0
    n_complete = np.bincount(group[complete], minlength=k)
    shares = {}
    for name, value in (("share_all_equal", 1), ("share_two_equal", 2), ("share_all_unequal", 3)):
        hits = np.bincount(group[distinct == value], minlength=k)
        with np.errstate(all="ignore"):
            shares[name] = np.where(n_complete > 0, hits / n_complete, np.nan)
    value_counts = np.stack([(runs == code).sum(axis=1) for code in range(len(LABELS))], axis=1)
    alpha = krippendorff_alpha_from_value_counts(value_counts, group, k)
    report = configs.copy()
    report["n_runs"] = len(run_columns)
    for name, values in shares.items():
        report[name] = values
    report["krippendorff_alpha"] = alpha
    report["n_comparisons"] = n_complete.astype(np.int64)
    report["n_incomplete"] = np.bincount(group[~complete], minlength=k).astype(np.int64)
    report = _with_mean_rows(
        report,
        ["share_all_equal", "share_two_equal", "share_all_unequal", "krippendorff_alpha"],
        ["n_comparisons", "n_incomplete"],
    )
    report["n_runs"] = len(run_columns)
    report = _add_flags(report, info or {})
    return report[columns]


# --- Ensembles ---------------------------------------------------------------------------------


def ensemble_members(
    info: dict[str, ModelInfo], present: Iterable[str], requested: Sequence[str] | None = None
) -> list[str]:
    """The members of an ensemble: ``requested`` if given, else every non-baseline model in the
    registry that has judgments, else (no such model yet) every model with judgments."""
    present = sorted(set(present))
    if requested:
        return [m for m in requested if m in present]
    members = [m for m in present if m in info and info[m].in_registry and not info[m].is_baseline]
    return members or present


def ensemble_report(
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    arguments: pd.DataFrame,
    members: Sequence[str],
    name: str,
    settings: BTSettings = DEFAULT_SETTINGS,
    info: dict[str, ModelInfo] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A multi-model ensemble, reported like any configuration.

    Per (strategy, dimension, comparison), the ensemble's label is the plurality of its members'
    majority labels (:func:`argassets.lib.voting.plurality_vote`); its BT scores are fitted on the
    members' majority labels pooled (each member's verdict is one comparison).

    Returns
    -------
    tuple of pandas.DataFrame
        ``(report, ensemble_majority, ensemble_scores)``: the agreement-report rows of the
        configurations ``model = "ensemble:<name>"`` with an extra ``members`` column, the
        ensemble's labels, and its BT scores.
    """
    model = f"ensemble:{name}"
    part = majority[majority["model"].isin(list(members))]
    empty_report = pd.DataFrame({c: pd.Series(dtype="object") for c in [*AGREEMENT_COLUMNS, "members"]})
    if part.empty:
        return empty_report, part.iloc[0:0], pd.DataFrame(columns=[*CONFIG_COLUMNS, *ITEM_COLUMNS, "bt_z"])
    member_codes, member_names = pd.factorize(part["model"], sort=True)
    item_key = ["strategy", "dimension", "comparison_id"]
    item_codes, ens_majority = factorize_columns(part, item_key)
    votes = np.full((len(ens_majority), len(member_names)), MISSING, dtype=np.int8)
    votes[item_codes, member_codes] = encode_labels(part["majority_label"].reset_index(drop=True))
    ens_majority.insert(0, "model", model)
    ens_majority["majority_label"] = pd.Series(
        np.array([*LABELS, None], dtype=object)[np.where((v := plurality_vote(votes)) < 0, 3, v)]
    )
    ens_majority["n_members_voting"] = (votes >= 0).sum(axis=1)

    pooled = part.assign(model=model)
    scores = llm_bt_scores(pooled, experts, arguments, settings)
    flags = dict(info or {})
    member_info = [flags[m] for m in member_names if m in flags]
    scopes = sorted({i.scope for i in member_info}) or ["unknown"]
    flags[model] = ModelInfo(
        is_baseline=bool(member_info) and all(i.is_baseline for i in member_info),
        scope=scopes[0] if len(scopes) == 1 else "mixed: " + " | ".join(scopes),
        in_registry=bool(member_info) and all(i.in_registry for i in member_info),
        position_bias=False,
    )
    report = agreement_report(scores, ens_majority, experts, arguments, flags)
    report["is_best"] = False
    report["members"] = ",".join(str(m) for m in member_names)
    return report, ens_majority, scores


# --- Position bias -----------------------------------------------------------------------------


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
        "model", "strategy", "dimension", "measured", "order_consistency", "order_consistency_majority",
        "first_position_share", "first_position_pvalue", "tie_share", "n_pairs", "n_decisive",
        "n_judgments", "position_bias_in_registry", *FLAG_COLUMNS,
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
    for column in ("order_consistency", "order_consistency_majority", "first_position_share",
                   "first_position_pvalue", "tie_share"):
        report[column] = report[column].astype(float) if column in report.columns else np.nan
    for column in ("n_pairs", "n_decisive", "n_judgments"):
        report[column] = report[column].astype(np.int64)
    report["measured"] = report["measured"].astype(bool)
    rank = {d: i for i, d in enumerate([*DIMENSIONS, "all"])}
    report["_rank"] = report["dimension"].map(rank).fillna(len(rank))
    report = report.sort_values(["model", "strategy", "_rank"], kind="stable").drop(columns="_rank")
    report = report.reset_index(drop=True)
    flags = info or {}
    report["position_bias_in_registry"] = [bool(flags[m].position_bias) if m in flags else False for m in report["model"]]
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


# --- Checks ------------------------------------------------------------------------------------


def metric_range_violations(report: pd.DataFrame) -> pd.DataFrame:
    """Rows of a report with a metric outside its mathematical range (NaN is not a violation).

    Returns
    -------
    pandas.DataFrame
        ``row, metric, value, low, high`` plus the report's key columns.
    """
    keys = [c for c in ("model", "strategy", "dimension") if c in report.columns]
    found = []
    for metric, (low, high) in METRIC_RANGES.items():
        if metric not in report.columns:
            continue
        values = pd.to_numeric(report[metric], errors="coerce").to_numpy(dtype=float)
        bad = np.isfinite(values) & ((values < low - 1e-9) | (values > high + 1e-9))
        bad |= np.isinf(values)
        for row in np.flatnonzero(bad):
            found.append(
                {"row": int(row), **{k: report[k].iat[row] for k in keys}, "metric": metric,
                 "value": float(values[row]), "low": low, "high": high}
            )
    return pd.DataFrame(found, columns=["row", *keys, "metric", "value", "low", "high"])


def disconnected_topics(scores: pd.DataFrame, group_columns: Sequence[str], max_listed: int = 10) -> pd.DataFrame:
    """(group, topic) cells whose comparison graph is not connected, with their components.

    Parameters
    ----------
    scores
        A BT score table with ``component`` (0 = the largest component of the topic).
    group_columns
        The columns of one set of scores (``["dimension"]`` or model, strategy, dimension).
    max_listed
        Arguments listed per smaller component.

    Returns
    -------
    pandas.DataFrame
        One row per disconnected cell: the group columns, ``topic_id``, ``n_components``,
        ``component_sizes`` (largest first) and ``components``, a text naming the arguments
        (``discussion_id/argument_id``) of every component but the largest.
    """
    columns = [*group_columns, "topic_id", "n_components", "component_sizes", "components"]
    if scores.empty:
        return pd.DataFrame(columns=columns)
    keys = [*group_columns, "topic_id"]
    n_comp = scores.groupby(keys, sort=True)["component"].max()
    bad = n_comp[n_comp > 0]
    if bad.empty:
        return pd.DataFrame(columns=columns)
    flagged = scores.merge(bad.rename("_max").reset_index(), on=keys)
    rows = []
    for key, part in flagged.groupby(keys, sort=True):
        sizes = part.groupby("component").size().sort_index()
        described = []
        for comp, members in part[part["component"] > 0].groupby("component"):
            names = [f"{d}/{a}" for d, a in zip(members["discussion_id"], members["argument_id"], strict=True)]
            more = f" (+{len(names) - max_listed} more)" if len(names) > max_listed else ""
            described.append(f"#{comp}: {', '.join(names[:max_listed])}{more}")
        rows.append(
            {
                **dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                "n_components": int(len(sizes)),
                "component_sizes": ",".join(str(int(s)) for s in sizes.to_numpy()),
                "components": "; ".join(described),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def report_configuration_mismatch(
    report: pd.DataFrame, configurations: pd.DataFrame, *, with_mean: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Configurations present in the data but missing from a report, and report rows without data.

    ``configurations`` holds the (model, strategy, dimension) present in the input; a report must
    have exactly one row for each, plus (``with_mean``) one ``mean`` row per (model, strategy).

    Returns
    -------
    tuple of pandas.DataFrame
        ``(missing, extra)``; duplicated report rows count as extra.
    """
    expected = configurations[CONFIG_COLUMNS].drop_duplicates()
    if with_mean and len(expected):
        means = expected[["model", "strategy"]].drop_duplicates().assign(dimension=MEAN_DIMENSION)
        expected = pd.concat([expected, means], ignore_index=True)
    have = report[CONFIG_COLUMNS].astype(str)
    expected = expected.astype(str)
    merged = expected.merge(have.drop_duplicates(), how="left", indicator=True)
    missing = merged[merged["_merge"] == "left_only"].drop(columns="_merge")
    extra_rows = have.merge(expected, how="left", indicator=True)
    extra = extra_rows[extra_rows["_merge"] == "left_only"].drop(columns="_merge")
    duplicated = have[have.duplicated(keep="first")]
    return missing.reset_index(drop=True), pd.concat([extra, duplicated], ignore_index=True)


# --- Presentation ------------------------------------------------------------------------------


def markdown_table(frame: pd.DataFrame, max_rows: int = 200, floatfmt: str = ".3f") -> str:
    """A Markdown table of ``frame`` (first ``max_rows`` rows, with a note when cut)."""
    if frame.empty:
        return "_(no rows)_"
    shown = frame.head(max_rows)
    text = shown.to_markdown(index=False, floatfmt=floatfmt)
    if len(frame) > max_rows:
        text += f"\n\n_{len(frame) - max_rows} more rows not shown; the full table is in DuckDB._"
    return text


def png_markdown(png: bytes, title: str) -> str:
    """Markdown that shows a PNG inline (base64 data URI)."""
    return f"![{title}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"


def _figure_png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buffer.getvalue()


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_scores_vs_experts(scores: pd.DataFrame, model: str, strategy: str) -> bytes:
    """PNG: BT z-score distributions of one (model, strategy) against the experts, per dimension.

    Top row: histograms of the configuration's ``bt_z`` and the published expert z-scores of the
    same arguments; bottom row: LLM against expert score per argument, with Pearson's r.
    """
    plt = _pyplot()
    part = scores[(scores["model"] == model) & (scores["strategy"] == strategy)]
    dims = [d for d in DIMENSIONS if d in set(part["dimension"])] or list(DIMENSIONS)
    fig, axes = plt.subplots(2, len(dims), figsize=(4.2 * len(dims), 7.5), squeeze=False)
    bins = np.linspace(-4, 4, 33)
    for j, dim in enumerate(dims):
        sub = part[part["dimension"] == dim].dropna(subset=["bt_z"])
        ref = sub["published_z"] if "published_z" in sub.columns else pd.Series(dtype=float)
        ax = axes[0, j]
        ax.hist(np.clip(sub["bt_z"], -4, 4), bins=bins, alpha=0.6, label=f"{model} / {strategy}", density=True)
        ax.hist(np.clip(ref.dropna(), -4, 4), bins=bins, alpha=0.6, label="experts (published)", density=True)
        ax.set_title(f"{dim}: BT z-score distribution")
        ax.set_xlabel("z-score")
        if j == 0:
            ax.legend(fontsize=8)
        ax = axes[1, j]
        both = sub.dropna(subset=["published_z"]) if "published_z" in sub.columns else sub.iloc[0:0]
        ax.scatter(both["published_z"], both["bt_z"], s=6, alpha=0.4)
        r = score_agreement(both["bt_z"].to_numpy(), both["published_z"].to_numpy())["pearson"] if len(both) else np.nan
        ax.set_title(f"{dim}: LLM vs experts (r = {r:.3f})")
        ax.set_xlabel("expert z (published)")
        ax.set_ylabel("LLM BT z")
        ax.axline((0, 0), slope=1, color="grey", lw=0.8, ls="--")
    fig.suptitle(f"{model} / {strategy}")
    fig.tight_layout()
    return _figure_png(fig)


def plot_agreement_heatmap(report: pd.DataFrame) -> bytes:
    """PNG: heat map of the agreement report's mean rows (configurations x metrics)."""
    plt = _pyplot()
    metrics = ["pearson", "spearman", "kendall", "cohen_kappa", "krippendorff_alpha", "percent_agreement"]
    means = report[report["dimension"] == MEAN_DIMENSION]
    if means.empty:
        fig, ax = plt.subplots(figsize=(4, 1.5))
        ax.text(0.5, 0.5, "no configurations", ha="center", va="center")
        ax.axis("off")
        return _figure_png(fig)
    means = means.sort_values("correlation_mean", ascending=False)
    values = means[metrics].to_numpy(dtype=float).copy()
    values[:, -1] = values[:, -1] / 100.0
    labels = [
        f"{m} / {s}" + (" *" if b else "") + (" (baseline)" if bl else "")
        for m, s, b, bl in zip(means["model"], means["strategy"], means["is_best"], means["is_baseline"], strict=True)
    ]
    fig, ax = plt.subplots(figsize=(1.2 * len(metrics) + 4, 0.32 * len(labels) + 1.8))
    image = ax.imshow(values, cmap="RdYlGn", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(len(metrics)), [m if m != "percent_agreement" else "agreement (share)" for m in metrics], rotation=30, ha="right")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if np.isfinite(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, shrink=0.8)
    ax.set_title("Agreement with experts (mean over dimensions; * = best)")
    fig.tight_layout()
    return _figure_png(fig)
