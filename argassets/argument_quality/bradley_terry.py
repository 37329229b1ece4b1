"""Bradley-Terry strengths from pairwise labels, per topic, with choix's ILSR, batched.

Model
-----
Under the Bradley-Terry model, argument :math:`i` beats argument :math:`j` with probability
:math:`e^{\\theta_i} / (e^{\\theta_i} + e^{\\theta_j})`. The strengths :math:`\\theta` are estimated
per topic (comparisons exist only within a topic) by iterative Luce spectral ranking
(``choix.ilsr_pairwise_dense``) from a win-count matrix ``W[i, j]`` = times *i* beat *j*.
``alpha`` > 0 adds ``alpha`` to every transition rate of the LSR Markov chain, the regularisation
choix documents; it keeps the estimate finite for arguments that never lose or never win and for
comparison graphs that are not connected.

Ties do not exist in the plain model; :data:`TIE_HANDLING` names the ways they can enter the count
matrix: ``win_each`` (a tie is one win for each side, the default: it reproduces the corpus's
published scores best, see ``docs/aggregation.md``), ``half_each`` (half a win for each side) or
``drop`` (ignored).

Scores are reported on two scales: ``bt_score``, the log-strength centred to mean 0 within its
topic (choix's convention), and ``bt_z``, the scores z-normalised over all arguments of one
configuration and dimension at once with the population standard deviation, as the published
scores are.

The fit itself (choix's ILSR estimate, and its batched Newton solver) is
:func:`argassets.platform.bradley_terry.fit_strengths`, shared with Study B.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from argassets.argument_quality.voting import MISSING, encode_labels, factorize_columns
from argassets.platform.bradley_terry import DEFAULT_MAX_ITER, DEFAULT_TOL, Engine, fit_strengths
from argassets.platform.graphs import components

__all__ = [
    "BTSettings",
    "DEFAULT_SETTINGS",
    "TIE_HANDLING",
    "TieHandling",
    "bt_scores",
    "comparison_components",
    "count_matrices",
]

TieHandling = Literal["win_each", "half_each", "drop"]
TIE_HANDLING: tuple[str, ...] = ("win_each", "half_each", "drop")
_TIE_WEIGHT = {"win_each": 1.0, "half_each": 0.5, "drop": 0.0}

#: Item key columns of one side of a comparison, and of the output.
ITEM_COLUMNS = ("topic_id", "discussion_id", "argument_id")
SIDE_COLUMNS = {
    "a": ("topic_id", "discussion_id_a", "argument_id_a"),
    "b": ("topic_id", "discussion_id_b", "argument_id_b"),
}


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


#: Chosen on the real expert data: reproduces the published z-scores best (docs/aggregation.md).
DEFAULT_SETTINGS = BTSettings()


def count_matrices(
    n_items: int,
    cells: np.ndarray,
    n_cells: int,
    item_a: np.ndarray,
    item_b: np.ndarray,
    codes: np.ndarray,
    ties: TieHandling = "win_each",
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Stacked win-count matrices ``W[cell, i, j]`` = (weighted) times item *i* beat item *j*.

    Parameters
    ----------
    n_items
        Items per matrix (local indices ``0 .. n_items-1``).
    cells, n_cells
        Matrix of each comparison, and how many matrices.
    item_a, item_b
        Local index of argument A and B of each comparison.
    codes
        Label codes (0 = A wins, 1 = B wins, 2 = tie, -1 = ignored).
    ties
        See :data:`TIE_HANDLING`.
    weights
        Multiplicity of each comparison (bootstrap); default 1.
    """
    w = np.ones(len(codes)) if weights is None else np.asarray(weights, dtype=float)
    tie_w = _TIE_WEIGHT[ties]
    base = cells.astype(np.int64) * n_items * n_items
    winner = np.where(codes == 1, item_b, item_a).astype(np.int64)
    loser = np.where(codes == 1, item_a, item_b).astype(np.int64)
    decisive = (codes == 0) | (codes == 1)
    tie = codes == 2
    size = n_cells * n_items * n_items
    flat = np.bincount(base[decisive] + winner[decisive] * n_items + loser[decisive], w[decisive], size)
    if tie_w > 0 and tie.any():
        ia, ib, bt = item_a[tie].astype(np.int64), item_b[tie].astype(np.int64), base[tie]
        flat += np.bincount(bt + ia * n_items + ib, tie_w * w[tie], size)
        flat += np.bincount(bt + ib * n_items + ia, tie_w * w[tie], size)
    return flat.reshape(n_cells, n_items, n_items)


def comparison_components(n_nodes: int, node_a: np.ndarray, node_b: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Connected components of comparison graphs, numbered within each group by size.

    Parameters
    ----------
    n_nodes
        Number of nodes (all groups together; every node belongs to one group, and edges join
        nodes of the same group).
    node_a, node_b
        The two nodes of each comparison (an undirected edge).
    groups
        Group of each node (e.g. one configuration and topic).

    Returns
    -------
    numpy.ndarray
        Component number of each node within its group: 0 for the largest component (ties broken
        by the smallest node), 1 for the next, ...; a connected group has only 0.
    """
    if n_nodes == 0:
        return np.zeros(0, dtype=np.int64)
    n_components, labels = components(n_nodes, node_a, node_b)
    size = np.bincount(labels, minlength=n_components)
    first = np.full(n_components, n_nodes, dtype=np.int64)
    np.minimum.at(first, labels, np.arange(n_nodes))
    comp_group = np.asarray(groups)[first]
    order = np.lexsort((first, -size, comp_group))
    rank = np.empty(n_components, dtype=np.int64)
    sorted_groups = comp_group[order]
    group_start = np.searchsorted(sorted_groups, sorted_groups)
    rank[order] = np.arange(n_components) - group_start
    return rank[labels]


@dataclass(frozen=True)
class _Cells:
    """The comparisons of every (group, topic) cell, indexed for batching.

    A node is one argument within one cell; nodes are numbered cell by cell, arguments sorted.
    """

    cell: np.ndarray  # per comparison: its cell
    node_a: np.ndarray  # per comparison: node of argument A
    node_b: np.ndarray
    node_cell: np.ndarray  # per node: its cell
    node_item: np.ndarray  # per node: global argument index
    cell_group: np.ndarray  # per cell: its group
    cell_topic: np.ndarray  # per cell: its topic
    cell_batch: np.ndarray  # per cell: its batch (same topic and same set of arguments)
    node_start: np.ndarray  # per cell: its first node
    n_batches: int


def _index_cells(group: np.ndarray, topic: np.ndarray, item_a: np.ndarray, item_b: np.ndarray, n_items: int) -> _Cells:
    topics, topic_code = np.unique(topic, return_inverse=True)
    cell_keys, cell = np.unique(group.astype(np.int64) * len(topics) + topic_code, return_inverse=True)
    n_cells = len(cell_keys)
    m = len(cell)
    node_keys, node_inverse = np.unique(
        np.concatenate([cell, cell]).astype(np.int64) * n_items + np.concatenate([item_a, item_b]).astype(np.int64),
        return_inverse=True,
    )
    node_cell = node_keys // n_items
    node_item = node_keys % n_items
    node_start = np.searchsorted(node_cell, np.arange(n_cells + 1))
    cell_topic = topics[cell_keys % len(topics)]
    # Cells of the same topic with the same argument set are solved together.
    signature = pd.Series(
        [
            int(cell_topic[c]).to_bytes(8, "little", signed=True)
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
        cell_group=cell_keys // len(topics),
        cell_topic=cell_topic,
        cell_batch=cell_batch.astype(np.int64),
        node_start=node_start,
        n_batches=len(uniques),
    )


def _z_by_group(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """z-normalise each column of ``values`` within each group (population std, NaN ignored)."""
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    ok = np.isfinite(values)
    filled = np.where(ok, values, 0.0)
    cnt = np.zeros((n_groups, values.shape[1]))
    s1 = np.zeros_like(cnt)
    np.add.at(cnt, groups, ok)
    np.add.at(s1, groups, filled)
    with np.errstate(all="ignore"):
        mean = s1 / cnt
        dev = np.where(ok, values - mean[groups], 0.0)
        s2 = np.zeros_like(cnt)
        np.add.at(s2, groups, dev * dev)
        std = np.sqrt(s2 / cnt)
        z = np.where(std[groups] > 0, dev / std[groups], 0.0)
    return np.where(ok, z, np.nan)


def _group_key_hash(group_uniques: pd.DataFrame | None) -> np.ndarray:
    """A stable number per group key (for per-group random streams)."""
    if group_uniques is None:
        return np.zeros(1, dtype=np.int64)
    return np.array(
        [
            zlib.crc32("\x1f".join(str(k) for k in key).encode("utf-8"))
            for key in group_uniques.itertuples(index=False, name=None)
        ],
        dtype=np.int64,
    )


def bt_scores(
    comparisons: pd.DataFrame,
    group_columns: Sequence[str],
    settings: BTSettings = DEFAULT_SETTINGS,
    *,
    label_column: str = "label",
    n_bootstrap: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """BT scores per group (e.g. configuration) and topic, z-normalised per group.

    Parameters
    ----------
    comparisons
        One row per labelled comparison: the ``group_columns``, ``topic_id``,
        ``discussion_id_a``, ``argument_id_a``, ``discussion_id_b``, ``argument_id_b`` and the
        label (``A``/``B``/``Tie``; rows with a missing label are ignored).
    group_columns
        Columns that identify one independent set of scores (e.g. ``["dimension"]`` for the
        experts, ``["model", "strategy", "dimension"]`` for LLM configurations).
    settings
        Tie handling, regularisation and engine.
    label_column
        Column holding the label.
    n_bootstrap
        Bootstrap replicates for percentile intervals of ``bt_z`` (0: none). Each replicate
        resamples the comparisons of every topic with replacement, fits BT per topic and
        z-normalises over the group, as for the point estimate.
    seed
        Seed of the bootstrap. Each (group, topic) draws from its own stream derived from the seed,
        the group's key and the topic, so results do not depend on which other groups are present.
    confidence
        Coverage of the bootstrap interval.

    Returns
    -------
    pandas.DataFrame
        One row per (group, topic, argument) compared at least once: the group columns,
        ``topic_id, discussion_id, argument_id, bt_score`` (log-strength, mean 0 per topic),
        ``bt_z`` (z over the group), ``n_comparisons``, ``component`` (0 = the topic's largest
        connected component of the comparison graph) and, with a bootstrap, ``ci_low, ci_high``
        (percentile interval of ``bt_z``), sorted by group and argument.
    """
    group_columns = list(group_columns)
    needed = [*group_columns, "topic_id", *SIDE_COLUMNS["a"][1:], *SIDE_COLUMNS["b"][1:], label_column]
    missing = [c for c in needed if c not in comparisons.columns]
    if missing:
        raise ValueError(f"comparisons: missing column(s) {', '.join(missing)}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    codes_all = encode_labels(comparisons[label_column].reset_index(drop=True))
    keep = codes_all != MISSING
    frame = comparisons.loc[keep, needed].reset_index(drop=True)
    codes = codes_all[keep]
    out_columns = [*group_columns, *ITEM_COLUMNS, "bt_score", "bt_z", "n_comparisons", "component"]
    if n_bootstrap:
        out_columns += ["ci_low", "ci_high"]
    if frame.empty:
        empty = pd.DataFrame({c: pd.Series(dtype="float64") for c in out_columns})
        empty = empty.astype({c: "object" for c in group_columns})
        return empty.astype({c: "int64" for c in (*ITEM_COLUMNS, "n_comparisons", "component")})

    group_codes, group_uniques = factorize_columns(frame, group_columns)
    sides = pd.concat(
        [
            frame[list(SIDE_COLUMNS["a"])].set_axis(list(ITEM_COLUMNS), axis=1),
            frame[list(SIDE_COLUMNS["b"])].set_axis(list(ITEM_COLUMNS), axis=1),
        ],
        ignore_index=True,
    )
    item_codes, item_frame = factorize_columns(sides, ITEM_COLUMNS)
    m = len(frame)
    item_a, item_b = item_codes[:m], item_codes[m:]
    if np.any(item_a == item_b):
        row = int(np.flatnonzero(item_a == item_b)[0])
        raise ValueError(f"comparisons row {row}: an argument is compared with itself")
    topic = frame["topic_id"].to_numpy().astype(np.int64)
    cells = _index_cells(group_codes, topic, item_a, item_b, len(item_frame))
    group_hash = _group_key_hash(group_uniques if group_columns else None)

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
        counts = count_matrices(n, r_cell, len(batch_cells), la, lb, codes[rows], settings.ties)
        params = fit_strengths(
            counts, settings.alpha, max_iter=settings.max_iter, tol=settings.tol, engine=settings.engine
        )
        node_ids = cells.node_start[batch_cells][:, None] + np.arange(n)[None, :]
        node_score[node_ids] = params
        if boot is not None:
            seeds = [(seed, int(group_hash[cells.cell_group[c]]), int(cells.cell_topic[c])) for c in batch_cells]
            boot[node_ids] = _bootstrap_cells(params, r_cell, la, lb, codes[rows], n, settings, n_bootstrap, seeds)

    node_group = cells.cell_group[cells.node_cell]
    node_component = comparison_components(n_nodes, cells.node_a, cells.node_b, cells.node_cell)
    n_comp = np.bincount(np.concatenate([cells.node_a, cells.node_b]), minlength=n_nodes)

    out = pd.DataFrame(index=np.arange(n_nodes))
    for c in group_columns:
        out[c] = group_uniques[c].to_numpy()[node_group]
    for c in ITEM_COLUMNS:
        out[c] = item_frame[c].to_numpy().astype(np.int64)[cells.node_item]
    out["bt_score"] = node_score
    out["bt_z"] = _z_by_group(node_score[:, None], node_group)[:, 0]
    out["n_comparisons"] = n_comp.astype(np.int64)
    out["component"] = node_component
    if boot is not None:
        boot_z = _z_by_group(boot, node_group)
        tail = (1.0 - confidence) / 2.0 * 100.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out["ci_low"] = np.nanpercentile(boot_z, tail, axis=1)
            out["ci_high"] = np.nanpercentile(boot_z, 100.0 - tail, axis=1)
    return out.sort_values([*group_columns, *ITEM_COLUMNS], kind="stable").reset_index(drop=True)


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
    """Bootstrap log-strengths ``(cells, n, n_bootstrap)`` of a batch of cells sharing ``n`` arguments.

    Every replicate draws each cell's comparisons with replacement (as many as it has), fits BT
    from the point estimate, and leaves arguments that drew no comparison as NaN.
    """
    k_cells = len(seeds)
    order = np.argsort(r_cell, kind="stable")
    bounds = np.searchsorted(r_cell[order], np.arange(k_cells + 1))
    out = np.full((k_cells, n, n_bootstrap), np.nan)
    # Stack about 4 million matrix entries (32 MB) per solve.
    per_chunk = max(1, 4_000_000 // (n * n * n_bootstrap))
    for start in range(0, k_cells, per_chunk):
        chunk = range(start, min(k_cells, start + per_chunk))
        cell_ids, ia, ib, cc, ww = [], [], [], [], []
        for j, k in enumerate(chunk):
            rows = order[bounds[k] : bounds[k + 1]]
            m = len(rows)
            rng = np.random.default_rng(np.random.SeedSequence(list(seeds[k])))
            draws = rng.integers(0, m, size=(n_bootstrap, m))
            weights = np.bincount(
                (np.arange(n_bootstrap)[:, None] * m + draws).ravel(), minlength=n_bootstrap * m
            ).reshape(n_bootstrap, m)
            cell_ids.append(np.repeat(j * n_bootstrap + np.arange(n_bootstrap), m))
            ia.append(np.tile(la[rows], n_bootstrap))
            ib.append(np.tile(lb[rows], n_bootstrap))
            cc.append(np.tile(codes[rows], n_bootstrap))
            ww.append(weights.ravel())
        counts = count_matrices(
            n,
            np.concatenate(cell_ids),
            len(chunk) * n_bootstrap,
            np.concatenate(ia),
            np.concatenate(ib),
            np.concatenate(cc),
            settings.ties,
            np.concatenate(ww).astype(float),
        )
        init = np.repeat(params[start : start + len(chunk)], n_bootstrap, axis=0)
        fitted = fit_strengths(
            counts,
            settings.alpha,
            initial_params=init,
            max_iter=settings.max_iter,
            # Replicates only feed percentiles: single precision, mean change per argument < 1e-5.
            tol=max(settings.tol, 1e-5 * n),
            engine=settings.engine,
            precision="single",
        )
        seen = (counts.sum(axis=2) + counts.sum(axis=1)) > 0
        fitted = np.where(seen, fitted, np.nan).reshape(len(chunk), n_bootstrap, n)
        out[start : start + len(chunk)] = np.swapaxes(fitted, 1, 2)
    return out
