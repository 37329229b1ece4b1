"""Bradley-Terry scores of the experts and of every LLM configuration, beside the published expert scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from argassets.argument_quality.bradley_terry import DEFAULT_SETTINGS, ITEM_COLUMNS, BTSettings, bt_scores
from argassets.argument_quality.scope import DIMENSIONS
from argassets.platform.pairwise.agreement import SCORE_METRICS, score_agreement
from argassets.platform.pairwise.expected import MAJORITY_PROBABILITY_COLUMNS, expected_vote_rows

CONFIG_COLUMNS = ["model", "strategy", "dimension"]

MEAN_DIMENSION = "mean"

COMPARISON_SIDES = ["discussion_id_a", "argument_id_a", "discussion_id_b", "argument_id_b"]


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


def _labelled_comparisons(majority: pd.DataFrame, experts: pd.DataFrame, carry: Sequence[str] = ()) -> pd.DataFrame:
    """Majority labels (and the ``carry`` columns) with the topic and argument ids of their comparison."""
    pos = _expert_positions(experts, majority)
    out = majority[["model", "strategy", "dimension", "majority_label", *carry]].reset_index(drop=True)
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
        ci_low, ci_high, published_z, n_comparisons, component`` (``ci_*`` NaN without bootstrap),
        ``expected_bt_score, expected_bt_z``: the fit on expected wins (:func:`expected_bt_scores`;
        NaN for a configuration without label probabilities).
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
    expected = expected_bt_scores(majority, experts, settings)
    scores = scores.merge(expected, on=[*CONFIG_COLUMNS, *ITEM_COLUMNS], how="left", validate="one_to_one")
    order = [
        *CONFIG_COLUMNS,
        *ITEM_COLUMNS,
        "bt_score",
        "bt_z",
        "ci_low",
        "ci_high",
        "published_z",
        "n_comparisons",
        "component",
        "expected_bt_score",
        "expected_bt_z",
    ]
    return scores[order]


def expected_bt_scores(
    majority: pd.DataFrame, experts: pd.DataFrame, settings: BTSettings = DEFAULT_SETTINGS
) -> pd.DataFrame:
    """BT scores on expected wins: each comparison enters once per label, weighted by the
    probability that the majority of its runs is that label (soft counts; no bootstrap).

    Only configurations whose every comparison has that distribution are fitted (a partial fit
    would not be comparable with the sampled one); the others have no rows.

    Returns
    -------
    pandas.DataFrame
        ``model, strategy, dimension, topic_id, discussion_id, argument_id, expected_bt_score,
        expected_bt_z``.
    """
    columns = [*CONFIG_COLUMNS, *ITEM_COLUMNS, "expected_bt_score", "expected_bt_z"]
    distributions = list(MAJORITY_PROBABILITY_COLUMNS)
    if majority.empty or not set(distributions) <= set(majority.columns):
        return pd.DataFrame({c: pd.Series(dtype="int64" if c in ITEM_COLUMNS else "object") for c in columns})
    known = majority[distributions].notna().all(axis=1)
    complete = known.groupby([majority[c] for c in CONFIG_COLUMNS], sort=False).transform("all")
    labelled = _labelled_comparisons(majority[complete.to_numpy()], experts, carry=distributions)
    soft = expected_vote_rows(labelled, distribution_columns=distributions, label_column="majority_label")
    scores = bt_scores(soft, CONFIG_COLUMNS, settings, label_column="majority_label", weight_column="weight")
    scores = scores.rename(columns={"bt_score": "expected_bt_score", "bt_z": "expected_bt_z"})
    return scores[columns]
