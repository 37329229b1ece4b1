"""Bradley-Terry scores of items from labelled pairs, per group and stratum, with bootstrap intervals."""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from argassets.platform.pairwise.bradley_terry import DEFAULT_MAX_ITER, DEFAULT_TOL, Engine, fit_strengths, z_normalise
from argassets.platform.pairwise.labels import MISSING, encode_labels, factorize_columns
from argassets.platform.pairwise.matrices import TIE_HANDLING, TieHandling, comparison_components, count_matrices

__all__ = ["BTSettings", "DEFAULT_SETTINGS", "PairColumns", "bt_scores"]


@dataclass(frozen=True)
class BTSettings:
    """How labels become strengths.

    Attributes
    ----------
    ties
        How a ``Tie`` enters the win-count matrix (see :data:`TIE_HANDLING`).
    alpha
        Regularisation of ILSR (``alpha`` of ``choix.ilsr_pairwise_dense``); must be > 0 when a
        comparison graph may be disconnected.
    engine
        ``batched`` (vectorised ILSR over many matrices) or ``choix`` (one call per matrix).
    max_iter, tol
        ILSR stops when the L1 norm of the change of the parameters is below ``tol``; it fails
        after ``max_iter`` iterations.
    """

    ties: TieHandling = "win_each"
    alpha: float = 0.001
    engine: Engine = "batched"
    max_iter: int = DEFAULT_MAX_ITER
    tol: float = DEFAULT_TOL

    def __post_init__(self) -> None:
        if self.ties not in TIE_HANDLING:
            raise ValueError(f"ties must be one of {', '.join(TIE_HANDLING)}, got {self.ties!r}")
        if not self.alpha >= 0:
            raise ValueError(f"alpha must be >= 0, got {self.alpha!r}")
        if self.engine not in ("batched", "choix"):
            raise ValueError(f"engine must be 'batched' or 'choix', got {self.engine!r}")

    def describe(self) -> str:
        return f"ties={self.ties}, alpha={self.alpha:g}, ILSR ({self.engine})"


#: Win each for a tie, alpha = 0.001, the batched engine.
DEFAULT_SETTINGS = BTSettings()


@dataclass(frozen=True)
class PairColumns:
    """Where a comparisons table keeps its two items, and how the scores table names an item.

    Attributes
    ----------
    item_a, item_b
        Key columns of item A and of item B (same length; a column may be shared, e.g. a topic).
    item
        Names of the item's key columns in the output, in the same order.
    stratum
        Column whose value partitions the pairs into separately fitted sets (items are compared
        only within one), or ``None`` for one set per group.
    """

    item_a: tuple[str, ...] = ("item_a",)
    item_b: tuple[str, ...] = ("item_b",)
    item: tuple[str, ...] = ("item",)
    stratum: str | None = None

    def __post_init__(self) -> None:
        if not len(self.item_a) == len(self.item_b) == len(self.item) >= 1:
            raise ValueError("item_a, item_b and item must name the same number (>= 1) of columns")


@dataclass(frozen=True)
class _Cells:
    """The comparisons of every (group, stratum) cell, indexed for batching.

    A node is one item within one cell; nodes are numbered cell by cell, items sorted.
    """

    cell: np.ndarray  # per comparison: its cell
    node_a: np.ndarray  # per comparison: node of item A
    node_b: np.ndarray
    node_cell: np.ndarray  # per node: its cell
    node_item: np.ndarray  # per node: global item index
    cell_group: np.ndarray  # per cell: its group
    cell_stratum: np.ndarray  # per cell: its stratum key
    cell_batch: np.ndarray  # per cell: its batch (same stratum and same set of items)
    node_start: np.ndarray  # per cell: its first node
    n_batches: int


def _index_cells(
    group: np.ndarray, stratum: np.ndarray, item_a: np.ndarray, item_b: np.ndarray, n_items: int
) -> _Cells:
    strata, stratum_code = np.unique(stratum, return_inverse=True)
    cell_keys, cell = np.unique(group.astype(np.int64) * len(strata) + stratum_code, return_inverse=True)
    n_cells = len(cell_keys)
    m = len(cell)
    node_keys, node_inverse = np.unique(
        np.concatenate([cell, cell]).astype(np.int64) * n_items + np.concatenate([item_a, item_b]).astype(np.int64),
        return_inverse=True,
    )
    node_cell = node_keys // n_items
    node_item = node_keys % n_items
    node_start = np.searchsorted(node_cell, np.arange(n_cells + 1))
    cell_stratum = strata[cell_keys % len(strata)]
    # Cells of the same stratum with the same item set are solved together.
    signature = pd.Series(
        [
            int(cell_stratum[c]).to_bytes(8, "little", signed=True)
            + node_item[node_start[c] : node_start[c + 1]].tobytes()
            for c in range(n_cells)
        ]
    )
    cell_batch, uniques = pd.factorize(signature)
    return _Cells(
        cell=cell,
        node_a=node_inverse[:m],
        node_b=node_inverse[m:],
        node_cell=node_cell,
        node_item=node_item,
        cell_group=cell_keys // len(strata),
        cell_stratum=cell_stratum,
        cell_batch=cell_batch.astype(np.int64),
        node_start=node_start,
        n_batches=len(uniques),
    )


def _stable_hash(values: Sequence[object]) -> int:
    return zlib.crc32("\x1f".join(str(v) for v in values).encode("utf-8"))


def _group_key_hash(group_uniques: pd.DataFrame | None) -> np.ndarray:
    """A stable number per group key (for per-group random streams)."""
    if group_uniques is None:
        return np.zeros(1, dtype=np.int64)
    keys = group_uniques.itertuples(index=False, name=None)
    return np.array([_stable_hash(key) for key in keys], dtype=np.int64)


def _stratum_keys(frame: pd.DataFrame, stratum: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Per comparison: its stratum's key (integers as they are) and its seed (a stable number).

    Integer strata are their own key and seed; other values are numbered in sorted order and
    seeded by a hash of their text, so a stratum's random stream never depends on the others.
    """
    if stratum is None:
        zeros = np.zeros(len(frame), dtype=np.int64)
        return zeros, zeros
    values = frame[stratum]
    if pd.api.types.is_integer_dtype(values.dtype):
        keys = values.to_numpy().astype(np.int64)
        return keys, keys
    codes, uniques = factorize_columns(frame, [stratum])
    seeds = np.array([_stable_hash([v]) for v in uniques[stratum]], dtype=np.int64)
    return codes, seeds[codes]


def _empty_scores(
    comparisons: pd.DataFrame, group_columns: list[str], columns: PairColumns, out: list[str]
) -> pd.DataFrame:
    empty = pd.DataFrame({c: pd.Series(dtype="float64") for c in out})
    empty = empty.astype({c: "object" for c in group_columns})
    dtypes = {name: comparisons[source].dtype for name, source in zip(columns.item, columns.item_a, strict=True)}
    return empty.astype({**dtypes, "n_comparisons": "int64", "component": "int64"})


def _needed_columns(
    comparisons: pd.DataFrame,
    group_columns: list[str],
    columns: PairColumns,
    label_column: str,
    weight_column: str | None,
    n_bootstrap: int,
) -> list[str]:
    """The columns :func:`bt_scores` reads, checked present; no bootstrap with weights."""
    stratum = [columns.stratum] if columns.stratum else []
    needed = list(dict.fromkeys([*group_columns, *stratum, *columns.item_a, *columns.item_b, label_column]))
    missing = [c for c in needed if c not in comparisons.columns]
    if missing:
        raise ValueError(f"comparisons: missing column(s) {', '.join(missing)}")
    if weight_column is not None:
        if n_bootstrap:
            raise ValueError("bt_scores: a bootstrap of weighted (soft-count) comparisons is not defined")
        needed.append(weight_column)
    return needed


def bt_scores(
    comparisons: pd.DataFrame,
    group_columns: Sequence[str],
    settings: BTSettings = DEFAULT_SETTINGS,
    *,
    columns: PairColumns = PairColumns(),
    label_column: str = "label",
    weight_column: str | None = None,
    n_bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """BT scores per group and stratum, z-normalised per group.

    Parameters
    ----------
    comparisons
        One row per labelled pair: the ``group_columns``, the item columns of ``columns`` and the
        label (``A``/``B``/``Tie``; rows with a missing label are ignored).
    group_columns
        Columns that identify one independent set of scores (e.g. a facet, or judge and facet).
    settings, columns, label_column
        Tie handling, regularisation and engine; the item and stratum columns; the label's column.
    weight_column
        Optional non-negative weights added to the win counts instead of 1 (soft counts:
        :func:`argassets.platform.pairwise.expected.expected_vote_rows`); ``n_comparisons`` is
        then the summed weight, rounded. No bootstrap with weights.
    n_bootstrap
        Bootstrap replicates for percentile intervals of ``bt_z`` (0: none). Each replicate
        resamples the pairs of every stratum with replacement, fits BT per stratum and
        z-normalises over the group, as for the point estimate.
    seed
        Seed of the bootstrap. Each (group, stratum) draws from its own stream derived from the
        seed, the group's key and the stratum, so results do not depend on which others are present.
    confidence
        Coverage of the bootstrap interval.

    Returns
    -------
    pandas.DataFrame
        One row per (group, item) compared at least once: the group columns, the item columns,
        ``bt_score`` (log-strength, mean 0 per stratum), ``bt_z`` (z over the group),
        ``n_comparisons``, ``component`` (0 = the stratum's largest connected component of the
        comparison graph) and, with a bootstrap, ``ci_low, ci_high`` (percentile interval of
        ``bt_z``), sorted by group and item.

    Raises
    ------
    ValueError
        A missing column, an item compared with itself (naming the row), or a bad ``confidence``.
    """
    group_columns = list(group_columns)
    frame, codes = _labelled_rows(
        comparisons, group_columns, columns, label_column, weight_column, n_bootstrap, confidence
    )
    weights = _weights(frame, weight_column)
    if frame.empty:
        return _empty_scores(comparisons, group_columns, columns, _score_columns(group_columns, columns, n_bootstrap))
    out = _fitted_scores(frame, codes, weights, group_columns, columns, settings, n_bootstrap, seed, confidence)
    return out.sort_values([*group_columns, *columns.item], kind="stable").reset_index(drop=True)


def _score_columns(group_columns: list[str], columns: PairColumns, n_bootstrap: int) -> list[str]:
    out_columns = [*group_columns, *columns.item, "bt_score", "bt_z", "n_comparisons", "component"]
    return out_columns + ["ci_low", "ci_high"] if n_bootstrap else out_columns


def _labelled_rows(
    comparisons: pd.DataFrame,
    group_columns: list[str],
    columns: PairColumns,
    label_column: str,
    weight_column: str | None,
    n_bootstrap: int,
    confidence: float,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows with a label (only the columns the fit needs) and their label codes."""
    needed = _needed_columns(comparisons, group_columns, columns, label_column, weight_column, n_bootstrap)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    codes_all = encode_labels(comparisons[label_column].reset_index(drop=True))
    keep = codes_all != MISSING
    return comparisons.loc[keep, needed].reset_index(drop=True), codes_all[keep]


def _fitted_scores(
    frame: pd.DataFrame,
    codes: np.ndarray,
    weights: np.ndarray | None,
    group_columns: list[str],
    columns: PairColumns,
    settings: BTSettings,
    n_bootstrap: int,
    seed: int,
    confidence: float,
) -> pd.DataFrame:
    """BT fitted per (group, stratum) cell, z-normalised per group, with the bootstrap when asked."""
    group_codes, group_uniques = factorize_columns(frame, group_columns)
    item_a, item_b, item_frame = _item_codes(frame, columns)
    stratum_key, stratum_seed = _stratum_keys(frame, columns.stratum)
    cells = _index_cells(group_codes, stratum_key, item_a, item_b, len(item_frame))
    group_hash = _group_key_hash(group_uniques if group_columns else None)
    seeds = _cell_seeds(cells, stratum_key, stratum_seed, group_hash, seed) if n_bootstrap else []
    node_score, boot = _fit_cells(cells, codes, settings, n_bootstrap, seeds, weights)
    return _scores_table(cells, group_uniques, group_columns, item_frame, node_score, boot, confidence, weights)


def _weights(frame: pd.DataFrame, weight_column: str | None) -> np.ndarray | None:
    """The rows' weights (``None``: each row counts 1); a negative or non-finite one names its row."""
    if weight_column is None:
        return None
    weights = pd.to_numeric(frame[weight_column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"comparisons row {row}: weight {frame[weight_column].iat[row]!r} is not a number >= 0")
    return weights


def _item_codes(frame: pd.DataFrame, columns: PairColumns) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Item index of side A and side B of every pair, and the items; an item against itself is an error."""
    sides = pd.concat(
        [
            frame[list(columns.item_a)].set_axis(list(columns.item), axis=1),
            frame[list(columns.item_b)].set_axis(list(columns.item), axis=1),
        ],
        ignore_index=True,
    )
    item_codes, item_frame = factorize_columns(sides, columns.item)
    item_a, item_b = item_codes[: len(frame)], item_codes[len(frame) :]
    if np.any(item_a == item_b):
        row = int(np.flatnonzero(item_a == item_b)[0])
        raise ValueError(f"comparisons row {row}: an item is compared with itself")
    return item_a, item_b, item_frame


def _scores_table(
    cells: _Cells,
    group_uniques: pd.DataFrame,
    group_columns: list[str],
    item_frame: pd.DataFrame,
    node_score: np.ndarray,
    boot: np.ndarray | None,
    confidence: float,
    weights: np.ndarray | None = None,
) -> pd.DataFrame:
    """One row per node: its group and item keys, scores, comparison count, component, interval."""
    node_group = cells.cell_group[cells.node_cell]
    out = pd.DataFrame(index=np.arange(len(cells.node_cell)))
    for c in group_columns:
        out[c] = group_uniques[c].to_numpy()[node_group]
    for c in item_frame.columns:
        out[c] = item_frame[c].to_numpy()[cells.node_item]
    out["bt_score"] = node_score
    out["bt_z"] = z_normalise(node_score, node_group)
    sides = None if weights is None else np.concatenate([weights, weights])
    counted = np.bincount(np.concatenate([cells.node_a, cells.node_b]), sides, minlength=len(cells.node_cell))
    out["n_comparisons"] = np.round(counted).astype(np.int64)
    out["component"] = comparison_components(len(cells.node_cell), cells.node_a, cells.node_b, cells.node_cell)
    if boot is not None:
        boot_z = z_normalise(boot, node_group)
        tail = (1.0 - confidence) / 2.0 * 100.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out["ci_low"] = np.nanpercentile(boot_z, tail, axis=1)
            out["ci_high"] = np.nanpercentile(boot_z, 100.0 - tail, axis=1)
    return out


def _cell_seeds(
    cells: _Cells, stratum_key: np.ndarray, stratum_seed: np.ndarray, group_hash: np.ndarray, seed: int
) -> list[tuple[int, int, int]]:
    """The bootstrap seed of every cell: (seed, its group's hash, its stratum's seed)."""
    seed_of_key = dict(zip(stratum_key.tolist(), stratum_seed.tolist(), strict=False))
    return [
        (seed, int(group_hash[cells.cell_group[c]]), int(seed_of_key[int(cells.cell_stratum[c])]))
        for c in range(len(cells.cell_group))
    ]


def _fit_cells(
    cells: _Cells,
    codes: np.ndarray,
    settings: BTSettings,
    n_bootstrap: int,
    seeds: list[tuple[int, int, int]],
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Log-strength of every node, batch by batch, and its bootstrap replicates (or ``None``)."""
    n_nodes = len(cells.node_cell)
    node_score = np.zeros(n_nodes)
    boot = np.full((n_nodes, n_bootstrap), np.nan) if n_bootstrap else None
    comp_batch = cells.cell_batch[cells.cell]
    order = np.argsort(comp_batch, kind="stable")
    bounds = np.searchsorted(comp_batch[order], np.arange(cells.n_batches + 1))
    for b in range(cells.n_batches):
        rows = order[bounds[b] : bounds[b + 1]]
        batch_cells = np.flatnonzero(cells.cell_batch == b)
        n = int(cells.node_start[batch_cells[0] + 1] - cells.node_start[batch_cells[0]])
        local = np.full(len(cells.cell_group), -1, dtype=np.int64)
        local[batch_cells] = np.arange(len(batch_cells))
        r_cell = local[cells.cell[rows]]
        la = cells.node_a[rows] - cells.node_start[cells.cell[rows]]
        lb = cells.node_b[rows] - cells.node_start[cells.cell[rows]]
        row_weights = None if weights is None else weights[rows]
        counts = count_matrices(n, r_cell, len(batch_cells), la, lb, codes[rows], settings.ties, row_weights)
        params = fit_strengths(
            counts, settings.alpha, max_iter=settings.max_iter, tol=settings.tol, engine=settings.engine
        )
        node_ids = cells.node_start[batch_cells][:, None] + np.arange(n)[None, :]
        node_score[node_ids] = params
        if boot is not None:
            batch_seeds = [seeds[c] for c in batch_cells]
            boot[node_ids] = _bootstrap_cells(
                params, r_cell, la, lb, codes[rows], n, settings, n_bootstrap, batch_seeds
            )
    return node_score, boot


def _resampled_counts(
    chunk: range,
    order: np.ndarray,
    bounds: np.ndarray,
    la: np.ndarray,
    lb: np.ndarray,
    codes: np.ndarray,
    n: int,
    settings: BTSettings,
    n_bootstrap: int,
    seeds: list[tuple[int, int, int]],
) -> np.ndarray:
    """Count matrices of every replicate of every cell of ``chunk``: each cell's comparisons drawn
    with replacement from its own seeded stream (as many as it has)."""
    cell_ids, ia, ib, cc, ww = [], [], [], [], []
    for j, k in enumerate(chunk):
        rows = order[bounds[k] : bounds[k + 1]]
        m = len(rows)
        rng = np.random.default_rng(np.random.SeedSequence(list(seeds[k])))
        draws = rng.integers(0, m, size=(n_bootstrap, m))
        weights = np.bincount((np.arange(n_bootstrap)[:, None] * m + draws).ravel(), minlength=n_bootstrap * m).reshape(
            n_bootstrap, m
        )
        cell_ids.append(np.repeat(j * n_bootstrap + np.arange(n_bootstrap), m))
        ia.append(np.tile(la[rows], n_bootstrap))
        ib.append(np.tile(lb[rows], n_bootstrap))
        cc.append(np.tile(codes[rows], n_bootstrap))
        ww.append(weights.ravel())
    return count_matrices(
        n,
        np.concatenate(cell_ids),
        len(chunk) * n_bootstrap,
        np.concatenate(ia),
        np.concatenate(ib),
        np.concatenate(cc),
        settings.ties,
        np.concatenate(ww).astype(float),
    )


def _bootstrap_cells(
    params: np.ndarray,
    r_cell: np.ndarray,
    la: np.ndarray,
    lb: np.ndarray,
    codes: np.ndarray,
    n: int,
    settings: BTSettings,
    n_bootstrap: int,
    seeds: list[tuple[int, int, int]],
) -> np.ndarray:
    """Bootstrap log-strengths ``(cells, n, n_bootstrap)`` of a batch of cells sharing ``n`` items.

    Every replicate draws each cell's comparisons with replacement (as many as it has), fits BT
    from the point estimate, and leaves items that drew no comparison as NaN.
    """
    k_cells = len(seeds)
    order = np.argsort(r_cell, kind="stable")
    bounds = np.searchsorted(r_cell[order], np.arange(k_cells + 1))
    out = np.full((k_cells, n, n_bootstrap), np.nan)
    # Stack about 4 million matrix entries (32 MB) per solve.
    per_chunk = max(1, 4_000_000 // (n * n * n_bootstrap))
    for start in range(0, k_cells, per_chunk):
        chunk = range(start, min(k_cells, start + per_chunk))
        counts = _resampled_counts(chunk, order, bounds, la, lb, codes, n, settings, n_bootstrap, seeds)
        init = np.repeat(params[start : start + len(chunk)], n_bootstrap, axis=0)
        fitted = fit_strengths(
            counts,
            settings.alpha,
            initial_params=init,
            max_iter=settings.max_iter,
            # Replicates only feed percentiles: single precision, mean change per item < 1e-5.
            tol=max(settings.tol, 1e-5 * n),
            engine=settings.engine,
            precision="single",
        )
        seen = (counts.sum(axis=2) + counts.sum(axis=1)) > 0
        fitted = np.where(seen, fitted, np.nan).reshape(len(chunk), n_bootstrap, n)
        out[start : start + len(chunk)] = np.swapaxes(fitted, 1, 2)
    return out
