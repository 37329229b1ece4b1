"""Study A's published results beside the platform's: the paper's rows, and whether a re-run reproduces them.

The paper ("Argument Quality Assessment with LLMs: A Pairwise Bradley-Terry Approach") publishes two
supplementary tables of 108 rows each (12 models x 3 dimensions x zero/few/cot prompts):

- ``llm_performance_per_llm_prompt_dim.csv``: each configuration against the experts;
- ``best_llm_vs_others_per_llm_prompt_dim.csv``: each configuration against the best one
  (``llama-70B-big``, ``few``).

Both give ``pearson, spearman, kendall, mae, rmse`` (BT z-scores against the reference z-scores) and
``cohen_kappa, %_agreement`` (labels against the reference labels). :func:`read_published_table`
reads one strictly; :func:`published_report_rows` turns it into rows of the platform's reports
(``model = "published:<paper name>"``, ``kind = "published"``, the mean over the dimensions as the
paper's Table 1 reports it, metrics the paper does not give as NaN).

A registry model maps to a paper model with ``published_as``. For such a model,
:func:`metric_intervals` bootstraps the agreement metrics of each of its configurations and
:func:`reproduction_table` says, metric by metric, how far the platform's figure is from the
published one and whether the published value lies inside the bootstrap interval.

The bootstrap
-------------
Percentile intervals from ``n_bootstrap`` resamples: score metrics resample the configuration's
arguments (pairs of BT z-score and reference z-score) with replacement, label metrics resample its
comparisons (pairs of label and reference label). The BT scores themselves are not refitted per
resample: the interval is the sampling uncertainty of the metric over the corpus's arguments and
comparisons, which is what a second draw of the corpus would change; the run-to-run variation of
the judge is in ``aq_variability_report``. The ``mean`` row's interval is that of the mean over
the dimensions of the same replicate index.
"""

from __future__ import annotations

import os
import warnings
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from argassets.argument_quality.agreement import (
    LABEL_METRICS,
    METRIC_RANGES,
    SCORE_METRICS,
    kappa_from_confusion,
    krippendorff_alpha_from_confusion,
)
from argassets.argument_quality.scope import DIMENSIONS, STRATEGIES
from argassets.platform.registry import ModelRegistry

__all__ = [
    "KIND_BASELINE",
    "KIND_MEASURED",
    "KIND_PUBLISHED",
    "PUBLISHED_BEST",
    "PUBLISHED_FILES",
    "PUBLISHED_METRICS",
    "PUBLISHED_PREFIX",
    "REPRODUCED_VALUES",
    "agreement_pairs",
    "metric_intervals",
    "published_grid_problems",
    "published_model_names",
    "published_report_rows",
    "published_rows_problems",
    "read_published_table",
    "read_published_tables",
    "reproduction_markdown",
    "reproduction_summary",
    "reproduction_table",
    "with_published",
    "score_bootstrap",
    "label_bootstrap",
]

#: ``kind`` of a report row: the platform's own figures, the paper's, or a baseline's.
KIND_MEASURED = "measured"
KIND_PUBLISHED = "published"
KIND_BASELINE = "baseline"
#: Prefix of the ``model`` of a published row.
PUBLISHED_PREFIX = "published:"
#: The published tables, relative to the published-data folder, by reference.
PUBLISHED_FILES: dict[str, str] = {
    "experts": "webis-argquality20/published/llm_performance_per_llm_prompt_dim.csv",
    "best": "webis-argquality20/published/best_llm_vs_others_per_llm_prompt_dim.csv",
}
#: The configuration the paper's "best" table compares against.
PUBLISHED_BEST: tuple[str, str] = ("llama-70B-big", "few")
#: Published column -> report column.
PUBLISHED_METRICS: dict[str, str] = {
    "pearson": "pearson",
    "spearman": "spearman",
    "kendall": "kendall",
    "mae": "mae",
    "rmse": "rmse",
    "cohen_kappa": "cohen_kappa",
    "%_agreement": "percent_agreement",
}
#: Values of ``reproduced``.
REPRODUCED_VALUES: tuple[str, ...] = ("true", "false", "unknown")

_KEY_COLUMNS = ("Model", "Dim", "Prompt")
_MEAN = "mean"


def read_published_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """One published table, tidy: ``paper_model, strategy, dimension`` and the report's metric names.

    Parameters
    ----------
    path
        ``llm_performance_per_llm_prompt_dim.csv`` or ``best_llm_vs_others_per_llm_prompt_dim.csv``.

    Returns
    -------
    pandas.DataFrame
        ``paper_model, strategy, dimension, pearson, spearman, kendall, mae, rmse, cohen_kappa,
        percent_agreement`` (percent as published, 0-100), in file order, values exactly as published.

    Raises
    ------
    ValueError
        A missing file or column, an unknown dimension or prompt, a value that is not a number, or a
        configuration given twice; the message names the file and the data row (1 = first row after
        the header).
    """
    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise ValueError(f"{path}: published table not found") from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: empty file") from None
    missing = [c for c in (*_KEY_COLUMNS, *PUBLISHED_METRICS) if c not in raw.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
    if raw.empty:
        raise ValueError(f"{path}: no data rows")
    out = pd.DataFrame(
        {
            "paper_model": raw["Model"].str.strip(),
            "strategy": raw["Prompt"].str.strip(),
            "dimension": raw["Dim"].str.strip(),
        }
    )
    for column, allowed in (("dimension", DIMENSIONS), ("strategy", STRATEGIES)):
        bad = ~out[column].isin(allowed)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            source = "Dim" if column == "dimension" else "Prompt"
            raise ValueError(
                f"{path}: data row {row + 1}: column '{source}' must be one of {', '.join(allowed)}, "
                f"got {raw[source].iat[row]!r}"
            )
    empty = out["paper_model"] == ""
    if empty.any():
        raise ValueError(f"{path}: data row {int(np.flatnonzero(empty.to_numpy())[0]) + 1}: column 'Model' is empty")
    for source, column in PUBLISHED_METRICS.items():
        values = pd.to_numeric(raw[source].str.strip(), errors="coerce")
        bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=float))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(
                f"{path}: data row {row + 1}: column '{source}' must be a number, got {raw[source].iat[row]!r}"
            )
        out[column] = values.to_numpy(dtype=float)
    duplicated = out.duplicated(["paper_model", "strategy", "dimension"], keep="first")
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        first = out.iloc[row]
        raise ValueError(
            f"{path}: data row {row + 1}: configuration ({first['paper_model']}, {first['dimension']}, "
            f"{first['strategy']}) given twice"
        )
    return out


def published_model_names(registry: ModelRegistry | None) -> dict[str, str]:
    """Paper name -> registry model name, for every registry entry with ``published_as``."""
    out: dict[str, str] = {}
    for entry in registry.models if registry is not None else []:
        if entry.published_as:
            out[entry.published_as] = entry.name
    return out


def published_grid_problems(table: pd.DataFrame) -> pd.DataFrame:
    """What keeps a published table from being the full grid of models x dimensions x strategies.

    Returns
    -------
    pandas.DataFrame
        ``paper_model, strategy, dimension, problem`` (``missing`` or ``metric out of range: <name>``);
        empty for a complete table within the metrics' ranges.
    """
    rows = []
    models = sorted(table["paper_model"].unique()) if len(table) else []
    have = (
        set(table[["paper_model", "strategy", "dimension"]].itertuples(index=False, name=None)) if len(table) else set()
    )
    for model in models:
        for strategy in STRATEGIES:
            for dimension in DIMENSIONS:
                if (model, strategy, dimension) not in have:
                    rows.append((model, strategy, dimension, "missing"))
    for column in PUBLISHED_METRICS.values():
        low, high = METRIC_RANGES[column]
        values = table[column].to_numpy(dtype=float) if len(table) else np.array([])
        for i in np.flatnonzero(~np.isfinite(values) | (values < low) | (values > high)):
            record = table.iloc[int(i)]
            rows.append(
                (record["paper_model"], record["strategy"], record["dimension"], f"metric out of range: {column}")
            )
    return pd.DataFrame(rows, columns=["paper_model", "strategy", "dimension", "problem"])


def published_report_rows(
    table: pd.DataFrame,
    columns: Sequence[str],
    mapped: Mapping[str, str] | None = None,
    *,
    best: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """The published table as rows of a report with ``columns``, plus a ``mean`` row per configuration.

    Parameters
    ----------
    table
        :func:`read_published_table`.
    columns
        The report's columns; those the paper does not give are NaN (metrics and counts), ``False``
        (flags) or ``"full"`` (``scope``).
    mapped
        Paper name -> registry model (:func:`published_model_names`): sets ``in_registry``.
    best
        For the cross-model report: the published best configuration (paper name, strategy); fills
        ``best_model = "published:<name>"`` and ``best_strategy``.

    Returns
    -------
    pandas.DataFrame
        ``model = "published:<paper name>"``, ``kind = "published"``, ``published_as`` = the paper
        name; the ``mean`` row holds the mean of each metric over the three dimensions (unrounded).
    """
    mapped = dict(mapped or {})
    metrics = list(PUBLISHED_METRICS.values())
    long = table.rename(columns={"paper_model": "published_as"}).copy()
    means = long.groupby(["published_as", "strategy"], sort=False)[metrics].mean().reset_index()
    means["dimension"] = _MEAN
    long = pd.concat([long, means], ignore_index=True)
    rank = {d: i for i, d in enumerate([*DIMENSIONS, _MEAN])}
    srank = {s: i for i, s in enumerate(STRATEGIES)}
    long = long.assign(_d=long["dimension"].map(rank), _s=long["strategy"].map(srank))
    long = long.sort_values(["published_as", "_s", "_d"], kind="stable").drop(columns=["_d", "_s"])
    long["model"] = PUBLISHED_PREFIX + long["published_as"]
    long["kind"] = KIND_PUBLISHED
    out = pd.DataFrame(index=range(len(long)))
    for column in columns:
        if column in long.columns:
            out[column] = long[column].to_numpy()
        elif column in ("is_best", "is_baseline"):
            out[column] = False
        elif column == "in_registry":
            out[column] = long["published_as"].isin(list(mapped)).to_numpy()
        elif column == "scope":
            out[column] = "full"
        elif column == "best_model":
            out[column] = PUBLISHED_PREFIX + best[0] if best else None
        elif column == "best_strategy":
            out[column] = best[1] if best else None
        elif column.startswith("n_"):
            out[column] = pd.array([pd.NA] * len(long), dtype="Int64")
        elif column in ("reproduced", "published_as_of"):
            out[column] = None
        else:
            out[column] = np.nan
    return out


# --- Bootstrap -----------------------------------------------------------------------------------


def _stream(seed: int, key: Sequence[object]) -> np.random.Generator:
    """An independent random stream per configuration, whatever the order configurations come in."""
    return np.random.default_rng([seed, zlib.crc32("\x1f".join(str(k) for k in key).encode())])


def score_bootstrap(x: np.ndarray, y: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Replicates of Pearson, Spearman, Kendall (tau-b), MAE and RMSE from resampled pairs.

    Parameters
    ----------
    x, y
        Paired scores (pairs with a NaN are dropped first).
    n_bootstrap
        Replicates.
    rng
        The random stream.

    Returns
    -------
    dict
        ``metric -> (n_bootstrap,)`` array; a replicate whose correlation is undefined (a constant
        resample) is NaN. All NaN with fewer than two pairs.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    out = {m: np.full(n_bootstrap, np.nan) for m in SCORE_METRICS}
    if n < 2 or n_bootstrap < 1:
        return out
    draws = rng.integers(0, n, size=(n_bootstrap, n))
    xs, ys = x[draws], y[draws]
    diff = xs - ys
    out["mae"] = np.abs(diff).mean(axis=1)
    out["rmse"] = np.sqrt((diff * diff).mean(axis=1))
    out["pearson"] = _rowwise_pearson(xs, ys)
    out["spearman"] = _rowwise_pearson(stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1))
    kendall = np.full(n_bootstrap, np.nan)
    for b in range(n_bootstrap):
        if np.ptp(xs[b]) > 0 and np.ptp(ys[b]) > 0:
            kendall[b] = stats.kendalltau(xs[b], ys[b]).statistic
    out["kendall"] = kendall
    return out


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(all="ignore"):
        r = (xc * yc).sum(axis=1) / denominator
    return np.where(denominator > 0, np.clip(r, -1.0, 1.0), np.nan)


def label_bootstrap(
    a: np.ndarray, b: np.ndarray, n_bootstrap: int, rng: np.random.Generator, n_categories: int = 3
) -> dict[str, np.ndarray]:
    """Replicates of Cohen's kappa, Krippendorff's alpha and percent agreement from resampled units.

    Units where either code is negative (missing) are dropped first, as the report does.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ok = (a >= 0) & (b >= 0)
    a, b = a[ok], b[ok]
    n = len(a)
    out = {m: np.full(n_bootstrap, np.nan) for m in LABEL_METRICS}
    if n < 1 or n_bootstrap < 1:
        return out
    cell = a * n_categories + b
    draws = rng.integers(0, n, size=(n_bootstrap, n))
    flat = (np.arange(n_bootstrap)[:, None] * n_categories * n_categories + cell[draws]).ravel()
    confusion = (
        np.bincount(flat, minlength=n_bootstrap * n_categories * n_categories)
        .reshape(n_bootstrap, n_categories, n_categories)
        .astype(float)
    )
    out["cohen_kappa"] = kappa_from_confusion(confusion)
    out["krippendorff_alpha"] = krippendorff_alpha_from_confusion(confusion)
    out["percent_agreement"] = 100.0 * np.trace(confusion, axis1=1, axis2=2) / n
    return out


def metric_intervals(
    score_pairs: pd.DataFrame,
    label_pairs: pd.DataFrame,
    *,
    n_bootstrap: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Percentile bootstrap intervals of every agreement metric, per configuration and for its mean.

    Parameters
    ----------
    score_pairs
        ``model, strategy, dimension, x, y``: per argument, the configuration's BT z-score and the
        reference z-score.
    label_pairs
        ``model, strategy, dimension, a, b``: per comparison, the configuration's label code and the
        reference label code (negative = missing).
    n_bootstrap, seed, confidence
        Replicates, seed (each configuration draws from its own stream derived from it) and coverage.

    Returns
    -------
    pandas.DataFrame
        ``model, strategy, dimension, metric, ci_low, ci_high, n_bootstrap``; ``dimension = "mean"``
        rows hold the interval of the mean over the dimensions present. NaN where fewer than half
        the replicates are defined.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_bootstrap < 1:
        raise ValueError(f"n_bootstrap must be >= 1, got {n_bootstrap!r}")
    keys = ["model", "strategy", "dimension"]
    replicates: dict[tuple[str, str, str], dict[str, np.ndarray]] = {}
    for key, part in score_pairs.groupby(keys, sort=True):
        replicates.setdefault(key, {}).update(
            score_bootstrap(part["x"].to_numpy(), part["y"].to_numpy(), n_bootstrap, _stream(seed, ("score", *key)))
        )
    for key, part in label_pairs.groupby(keys, sort=True):
        replicates.setdefault(key, {}).update(
            label_bootstrap(part["a"].to_numpy(), part["b"].to_numpy(), n_bootstrap, _stream(seed, ("label", *key)))
        )
    by_config: dict[tuple[str, str], list[dict[str, np.ndarray]]] = {}
    for (model, strategy, _), values in sorted(replicates.items()):
        by_config.setdefault((model, strategy), []).append(values)
    for (model, strategy), parts in by_config.items():
        mean: dict[str, np.ndarray] = {}
        for metric in (*SCORE_METRICS, *LABEL_METRICS):
            stack = [p[metric] for p in parts if metric in p]
            if stack:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: NaN
                    mean[metric] = np.nanmean(np.vstack(stack), axis=0)
        replicates[(model, strategy, _MEAN)] = mean
    tail = (1.0 - confidence) / 2.0
    rows = []
    for (model, strategy, dimension), values in replicates.items():
        for metric, draws in values.items():
            finite = draws[np.isfinite(draws)]
            if len(finite) * 2 < len(draws) or not len(finite):
                low = high = np.nan
            else:
                low, high = np.quantile(finite, [tail, 1.0 - tail])
            rows.append((model, strategy, dimension, metric, float(low), float(high), int(n_bootstrap)))
    out = pd.DataFrame(rows, columns=[*keys, "metric", "ci_low", "ci_high", "n_bootstrap"])
    rank = {d: i for i, d in enumerate([*DIMENSIONS, _MEAN])}
    out = out.assign(_r=out["dimension"].map(rank)).sort_values(["model", "strategy", "_r", "metric"], kind="stable")
    return out.drop(columns="_r").reset_index(drop=True)


# --- Reproduction --------------------------------------------------------------------------------


def reproduction_table(
    report: pd.DataFrame,
    published: pd.DataFrame,
    published_as: Mapping[str, str],
    intervals: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per measured configuration of a model with ``published_as`` and per published metric: the
    platform's value, the published one, their difference and whether the published value lies
    inside the platform's bootstrap interval.

    Parameters
    ----------
    report
        Measured report rows (``model, strategy, dimension`` and the metrics, ``mean`` rows included).
    published
        :func:`published_report_rows` (``published_as``, ``strategy``, ``dimension``, metrics).
    published_as
        Registry model -> paper name.
    intervals
        :func:`metric_intervals` (``None``: every ``reproduced`` is ``unknown``).

    Returns
    -------
    pandas.DataFrame
        ``model, published_as, strategy, dimension, metric, value, published, delta (value -
        published), ci_low, ci_high, reproduced`` with ``reproduced`` ``true`` (inside the closed
        interval), ``false`` (outside) or ``unknown`` (no interval, or no value on either side). A
        ``mean`` row of a configuration that lacks a dimension is not compared (``published`` NaN,
        ``unknown``).
    """
    columns = [
        "model",
        "published_as",
        "strategy",
        "dimension",
        "metric",
        "value",
        "published",
        "delta",
        "ci_low",
        "ci_high",
        "reproduced",
    ]
    metrics = list(PUBLISHED_METRICS.values())
    mine = report[report["model"].isin(list(published_as))]
    if mine.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    long = mine.melt(
        id_vars=["model", "strategy", "dimension"], value_vars=metrics, var_name="metric", value_name="value"
    )
    long["published_as"] = long["model"].map(dict(published_as))
    theirs = published.melt(
        id_vars=["published_as", "strategy", "dimension"], value_vars=metrics, var_name="metric", value_name="published"
    )
    long = long.merge(theirs, on=["published_as", "strategy", "dimension", "metric"], how="left")
    if intervals is not None and len(intervals):
        long = long.merge(
            intervals[["model", "strategy", "dimension", "metric", "ci_low", "ci_high"]],
            on=["model", "strategy", "dimension", "metric"],
            how="left",
        )
    else:
        long["ci_low"] = np.nan
        long["ci_high"] = np.nan
    # A mean row is comparable only when the configuration covers every dimension the paper averages.
    covered = mine[mine["dimension"] != _MEAN].groupby(["model", "strategy"])["dimension"].nunique()
    partial = [(m, s) for (m, s), k in covered.items() if k < len(DIMENSIONS)]
    if partial:
        incomplete = (long["dimension"] == _MEAN) & pd.Series(
            list(zip(long["model"], long["strategy"], strict=True)), index=long.index
        ).isin(partial)
        long.loc[incomplete, "published"] = np.nan
    value = long["value"].to_numpy(dtype=float)
    theirs_v = long["published"].to_numpy(dtype=float)
    low = long["ci_low"].to_numpy(dtype=float)
    high = long["ci_high"].to_numpy(dtype=float)
    long["delta"] = value - theirs_v
    known = np.isfinite(theirs_v) & np.isfinite(low) & np.isfinite(high) & np.isfinite(value)
    inside = (theirs_v >= low) & (theirs_v <= high)
    long["reproduced"] = np.where(known, np.where(inside, "true", "false"), "unknown")
    rank = {d: i for i, d in enumerate([*DIMENSIONS, _MEAN])}
    order = {m: i for i, m in enumerate(metrics)}
    long = long.assign(_d=long["dimension"].map(rank), _m=long["metric"].map(order))
    long = long.sort_values(["model", "strategy", "_d", "_m"], kind="stable").drop(columns=["_d", "_m"])
    return long[columns].reset_index(drop=True)


def reproduction_summary(reproduction: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: ``delta_<metric>`` for every published metric, and the verdicts.

    ``reproduced`` is ``true`` when every published metric with an interval lies inside it (and at
    least one has one), ``false`` when one lies outside, else ``unknown``; ``metrics_reproduced``
    of ``metrics_compared`` count the metrics inside, of those with a verdict.
    """
    keys = ["model", "strategy", "dimension"]
    metrics = list(PUBLISHED_METRICS.values())
    columns = [
        *keys,
        "published_as",
        *(f"delta_{m}" for m in metrics),
        "reproduced",
        "metrics_reproduced",
        "metrics_compared",
    ]
    if reproduction.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
    wide = reproduction.pivot_table(index=keys, columns="metric", values="delta", aggfunc="first", dropna=False)
    wide = wide.reindex(columns=metrics).add_prefix("delta_").reset_index()
    grouped = reproduction.groupby(keys, sort=False)["reproduced"]
    verdicts = pd.DataFrame(
        {
            "reproduced": grouped.agg(
                lambda s: "false" if (s == "false").any() else "true" if (s == "true").any() else "unknown"
            ),
            "metrics_reproduced": grouped.agg(lambda s: int((s == "true").sum())),
            "metrics_compared": grouped.agg(lambda s: int((s != "unknown").sum())),
            "published_as": reproduction.groupby(keys, sort=False)["published_as"].first(),
        }
    ).reset_index()
    return wide.merge(verdicts, on=keys)[columns]


# --- Putting the published rows into the reports ---------------------------------------------------


def agreement_pairs(
    scores: pd.DataFrame,
    majority: pd.DataFrame,
    experts: pd.DataFrame,
    reference_scores: pd.DataFrame,
    models: Sequence[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairs the agreement metrics of ``models`` are computed from, for :func:`metric_intervals`.

    Parameters
    ----------
    scores
        ``aq_bt_scores``.
    majority
        ``aq_majority_votes``.
    experts
        ``webis_expert_comparisons`` (``comparison_id, dimension, label``).
    reference_scores
        ``dimension``, argument keys and ``published_z`` (the report's reference).
    models
        The models whose configurations are wanted.

    Returns
    -------
    tuple of pandas.DataFrame
        ``(score_pairs, label_pairs)``: ``model, strategy, dimension, x, y`` (BT z-score, reference
        z-score, per argument both have) and ``model, strategy, dimension, a, b`` (label codes of
        the configuration and of the experts, per comparison).
    """
    from argassets.argument_quality.bradley_terry import ITEM_COLUMNS
    from argassets.argument_quality.voting import encode_labels

    keys = ["model", "strategy", "dimension"]
    wanted = list(models)
    mine = scores.loc[scores["model"].isin(wanted), [*keys, *ITEM_COLUMNS, "bt_z"]]
    joined = mine.merge(
        reference_scores[["dimension", *ITEM_COLUMNS, "published_z"]], on=["dimension", *ITEM_COLUMNS], how="inner"
    )
    score_pairs = joined[[*keys]].assign(
        x=joined["bt_z"].to_numpy(dtype=float), y=joined["published_z"].to_numpy(dtype=float)
    )
    labels = majority.loc[majority["model"].isin(wanted), [*keys, "comparison_id", "majority_label"]]
    expert_labels = experts[["dimension", "comparison_id", "label"]].astype({"comparison_id": str})
    labelled = labels.astype({"comparison_id": str}).merge(
        expert_labels, on=["dimension", "comparison_id"], how="inner"
    )
    label_pairs = labelled[[*keys]].assign(
        a=encode_labels(labelled["majority_label"].reset_index(drop=True)),
        b=encode_labels(labelled["label"].reset_index(drop=True)),
    )
    return score_pairs.reset_index(drop=True), label_pairs.reset_index(drop=True)


def with_published(
    report: pd.DataFrame,
    published: pd.DataFrame | None,
    published_as: Mapping[str, str],
    intervals: pd.DataFrame | None = None,
    *,
    best: tuple[str, str] | None = None,
    reproduce: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A report with ``kind`` and ``published_as`` (and the reproduction columns), plus the published rows.

    Parameters
    ----------
    report
        The platform's report (:func:`argassets.argument_quality.agreement_reports.agreement_report` or
        ``cross_model_report``), with ``is_baseline``.
    published
        :func:`read_published_table`, or ``None`` when the published tables are not available
        (then no published row is added and ``reproduced`` is ``unknown``).
    published_as
        Registry model -> paper name (models with ``published_as``).
    intervals
        :func:`metric_intervals` of the mapped models' configurations.
    best
        The published best configuration, for the cross-model report's published rows.
    reproduce
        Add ``delta_<metric>`` and ``reproduced`` (the agreement report).

    Returns
    -------
    tuple of pandas.DataFrame
        ``(report, reproduction)``: the measured rows (``kind`` ``measured`` or ``baseline``) then
        the published ones (``kind = "published"``); ``reproduction`` is :func:`reproduction_table`.
    """
    out = report.copy()
    baseline = out["is_baseline"].astype(bool) if "is_baseline" in out.columns else pd.Series(False, index=out.index)
    out["kind"] = np.where(baseline, KIND_BASELINE, KIND_MEASURED)
    out["published_as"] = out["model"].map(dict(published_as)).astype("object")
    reproduction = pd.DataFrame()
    if reproduce:
        published_rows = (
            published_report_rows(published, ["published_as", "strategy", "dimension", *PUBLISHED_METRICS.values()])
            if published is not None
            else pd.DataFrame(columns=["published_as", "strategy", "dimension", *PUBLISHED_METRICS.values()])
        )
        reproduction = reproduction_table(out, published_rows, published_as, intervals)
        summary = reproduction_summary(reproduction).drop(columns="published_as")
        out = out.merge(summary, on=["model", "strategy", "dimension"], how="left")
        mapped = out["published_as"].notna()
        out["reproduced"] = out["reproduced"].fillna("unknown").astype(object).where(mapped, None)
        for column in ("metrics_reproduced", "metrics_compared"):
            counts = pd.to_numeric(out[column], errors="coerce").fillna(0).astype(np.int64)
            out[column] = pd.array([int(c) if m else pd.NA for c, m in zip(counts, mapped, strict=True)], dtype="Int64")
    if published is not None and len(published):
        rows = published_report_rows(published, list(out.columns), {v: k for k, v in published_as.items()}, best=best)
        # Columns the paper does not give are left out of the concatenation and come back as NaN.
        rows = rows.dropna(axis=1, how="all")
        out = pd.concat([out, rows], ignore_index=True)[list(out.columns)]
    for column in [c for c in out.columns if c.startswith("n_")]:
        out[column] = pd.array(out[column], dtype="Int64")
    return out, reproduction


def reproduction_markdown(reproduction: pd.DataFrame, confidence: float = 0.95, max_rows: int = 300) -> str:
    """A Markdown summary of :func:`reproduction_table`: counts, then one line per configuration and metric."""
    if reproduction.empty:
        return (
            "_No measured configuration of a model with `published_as`: nothing to compare with the published figures._"
        )
    configs = reproduction[["model", "strategy", "dimension"]].drop_duplicates()
    verdicts = reproduction_summary(reproduction)["reproduced"].value_counts()
    counts = reproduction["reproduced"].value_counts()
    lines = [
        f"**{len(configs)} configuration rows** of {reproduction['model'].nunique()} model(s) with "
        f"`published_as` against the paper; a metric is *reproduced* when the published value lies inside "
        f"the platform's {confidence:.0%} bootstrap interval.",
        "",
        f"- configurations: {int(verdicts.get('true', 0))} reproduced, {int(verdicts.get('false', 0))} not, "
        f"{int(verdicts.get('unknown', 0))} unknown",
        f"- metrics: {int(counts.get('true', 0))} inside, {int(counts.get('false', 0))} outside, "
        f"{int(counts.get('unknown', 0))} unknown",
        "",
    ]
    shown = reproduction.head(max_rows)
    lines.append(shown.to_markdown(index=False, floatfmt=".3f"))
    if len(reproduction) > max_rows:
        lines.append(f"\n_{len(reproduction) - max_rows} more rows not shown._")
    return "\n".join(lines)


def published_rows_problems(report: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """How the published rows of a report differ from the published table.

    Every published configuration must appear exactly once as ``model = "published:<name>"`` with
    its exact values, with one ``mean`` row per (model, strategy) holding the mean over the
    dimensions (to 1e-12), no other published row, and every value inside its metric's range.

    Returns
    -------
    pandas.DataFrame
        ``model, strategy, dimension, problem``; empty when the rows are all there and right.
    """
    columns = ["model", "strategy", "dimension", "problem"]
    problems: list[tuple[str, str, str, str]] = []
    metrics = list(PUBLISHED_METRICS.values())
    expected = (
        published_report_rows(published, ["model", "strategy", "dimension", *metrics]) if len(published) else None
    )
    rows = report[report["kind"] == KIND_PUBLISHED] if "kind" in report.columns else report.iloc[0:0]
    key = ["model", "strategy", "dimension"]
    have = rows.set_index(key)
    if have.index.has_duplicates:
        for dup in have.index[have.index.duplicated()].unique():
            problems.append((*dup, "given twice"))
        have = have[~have.index.duplicated()]
    if expected is not None:
        want = expected.set_index(key)
        for index in want.index:
            if index not in have.index:
                problems.append((*index, "missing"))
                continue
            for metric in metrics:
                value = float(have.at[index, metric])
                target = float(want.at[index, metric])
                exact = index[2] != _MEAN
                if (exact and value != target) or (not exact and not abs(value - target) <= 1e-12):
                    problems.append((*index, f"{metric} is {value!r}, published {target!r}"))
        for index in have.index:
            if index not in want.index:
                problems.append((*index, "not in the published table"))
    elif len(have):
        for index in have.index:
            problems.append((*index, "not in the published table"))
    for metric in metrics:
        if metric not in rows.columns:
            continue
        low, high = METRIC_RANGES[metric]
        values = rows[metric].to_numpy(dtype=float)
        for i in np.flatnonzero(np.isfinite(values) & ((values < low) | (values > high))):
            record = rows.iloc[int(i)]
            problems.append(
                (
                    record["model"],
                    record["strategy"],
                    record["dimension"],
                    f"{metric} out of range: {float(values[i])!r}",
                )
            )
    return pd.DataFrame(problems, columns=columns)


def read_published_tables(root: str | os.PathLike[str] | None) -> dict[str, pd.DataFrame]:
    """The published tables found under the data folder ``root``, by reference (``experts``, ``best``).

    A table whose file is absent (or ``root`` is ``None``) is left out; a file that is there but
    malformed raises (:func:`read_published_table`).
    """
    out: dict[str, pd.DataFrame] = {}
    if root is None:
        return out
    for reference, relative in PUBLISHED_FILES.items():
        path = Path(root) / relative
        if path.is_file():
            out[reference] = read_published_table(path)
    return out
