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

Reading lives here; the intervals of the platform's metrics are the report's own (clustered over
topics, :mod:`~argassets.argument_quality.agreement_intervals`), the comparison with the paper
(whether a re-run reproduces it) is in :mod:`~argassets.argument_quality.published_reproduction`.
The paper's rows carry aggregates only, so they have no interval: their ``interval_method`` says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from argassets.argument_quality.scope import DIMENSIONS, STRATEGIES
from argassets.platform.pairwise.agreement import METRIC_RANGES
from argassets.platform.registry.entries import ModelRegistry

__all__ = [
    "KIND_BASELINE",
    "KIND_MEASURED",
    "KIND_PUBLISHED",
    "MEAN_DIMENSION",
    "PUBLISHED_BEST",
    "PUBLISHED_FILES",
    "PUBLISHED_INTERVAL",
    "PUBLISHED_METRICS",
    "PUBLISHED_PREFIX",
    "REPRODUCED_VALUES",
    "published_grid_problems",
    "published_model_names",
    "published_report_rows",
    "published_rows_problems",
    "read_published_table",
    "read_published_tables",
]

#: ``interval_method`` of a published row: the paper gives aggregates, no per-item labels.
PUBLISHED_INTERVAL = "none: published aggregate (no per-item labels)"
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
#: ``dimension`` of a row holding the mean over the three dimensions (as the paper's Table 1).
MEAN_DIMENSION = "mean"


def _read_raw_table(path: Path) -> pd.DataFrame:
    """The file as text columns; a missing file, an empty one or a missing column is an error."""
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
    return raw


def _configuration_keys(raw: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``paper_model, strategy, dimension`` of each row; an unknown dimension or prompt, or an empty
    model, is an error naming the data row."""
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
    return out


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
    raw = _read_raw_table(path)
    out = _configuration_keys(raw, path)
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


def _with_mean_rows(long: pd.DataFrame) -> pd.DataFrame:
    """``long`` with a ``mean`` row per (paper model, strategy), sorted by model, strategy, dimension."""
    metrics = list(PUBLISHED_METRICS.values())
    means = long.groupby(["published_as", "strategy"], sort=False)[metrics].mean().reset_index()
    means["dimension"] = MEAN_DIMENSION
    long = pd.concat([long, means], ignore_index=True)
    rank = {d: i for i, d in enumerate([*DIMENSIONS, MEAN_DIMENSION])}
    srank = {s: i for i, s in enumerate(STRATEGIES)}
    long = long.assign(_d=long["dimension"].map(rank), _s=long["strategy"].map(srank))
    return long.sort_values(["published_as", "_s", "_d"], kind="stable").drop(columns=["_d", "_s"])


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
    long = _with_mean_rows(table.rename(columns={"paper_model": "published_as"}).copy())
    long["model"] = PUBLISHED_PREFIX + long["published_as"]
    long["kind"] = KIND_PUBLISHED
    out = pd.DataFrame(index=range(len(long)))
    for column in columns:
        if column in long.columns:
            out[column] = long[column].to_numpy()
        elif column in ("best_set", "is_baseline"):
            out[column] = False
        elif column == "interval_method":
            out[column] = PUBLISHED_INTERVAL
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
        elif column in ("reproduced", "published_as_of", "interval_unit"):
            out[column] = None
        else:
            out[column] = np.nan
    return out


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
                exact = index[2] != MEAN_DIMENSION
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
