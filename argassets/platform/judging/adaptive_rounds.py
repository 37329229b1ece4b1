"""Judging a pairwise partition in rounds: the pairs that matter, until a stated criterion stops it.

Each cell of the partition (Study A: a dimension and strategy) is planned on its own by
:func:`argassets.platform.design.adaptive.plan_round` (round 0 a seeded spanning design, then the
pairs of most expected information, BT refitted between rounds); the cells' rounds are judged
together, one call of ``send`` per round, which goes through the judgment cache
(:func:`~argassets.platform.judging.incremental.judge_incrementally`). ``plan_round`` keeps no
state, so a re-run replays every round from the cache (sending nothing) and a killed run resumes
at the round it was killed in (docs/study_design.md, "Adaptive LLM judging").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from argassets.platform.design.adaptive import AdaptiveSettings, RoundPlan, plan_round
from argassets.platform.judging.interface import CachedCompletion, ChatRequest
from argassets.platform.registry.adaptive import STOP_WORDS

__all__ = ["PAIR_COLUMNS", "AdaptiveOutcome", "CellOutcome", "judge_in_rounds"]

#: The columns of a study's pairwise design (``StudyDefinition.adaptive_pairs``).
PAIR_COLUMNS = ["key", "cell", "pair_id", "group", "item_a", "item_b"]

#: Judges requests through the cache: every run of each, in request then run order.
Send = Callable[[list[ChatRequest]], list[CachedCompletion]]
#: The verdict of each completion oriented to its pair (A, B, Tie or None), in completion order.
Verdicts = Callable[[Sequence[CachedCompletion]], Sequence[Any]]


@dataclass(frozen=True)
class CellOutcome:
    """Where one cell stopped: its rounds judged, the reason and the last stopping figures."""

    cell: str
    rounds: int
    reason: str
    judged_pairs: int
    candidate_pairs: int
    stability: float
    interval_width: float
    predicted_agreement: float

    @property
    def share_judged(self) -> float:
        return self.judged_pairs / self.candidate_pairs if self.candidate_pairs else 0.0


@dataclass(frozen=True)
class AdaptiveOutcome:
    """The completions of every round (in round order) and how each cell stopped."""

    completions: list[CachedCompletion]
    cells: list[CellOutcome]
    #: The option as stated in the registry (``AdaptiveJudging.describe``).
    stated: str = ""

    @property
    def share_judged(self) -> float:
        """Judged pairs over every candidate pair of the partition's cells."""
        candidates = sum(c.candidate_pairs for c in self.cells)
        return sum(c.judged_pairs for c in self.cells) / candidates if candidates else 0.0

    def note(self) -> str:
        """What the reports say of the partition: "partial by design (adaptive, 23.4% judged, stopped by ...)"."""
        reasons = pd.Series([STOP_WORDS.get(c.reason, c.reason) for c in self.cells]).value_counts()
        stopped = ", ".join(
            reason if count == len(self.cells) else f"{reason} in {count} of {len(self.cells)} cells"
            for reason, count in reasons.items()
        )
        return f"partial by design (adaptive, {self.share_judged:.1%} judged, stopped by {stopped or 'nothing'})"

    def metadata(self) -> dict[str, Any]:
        """The partition's design metadata: the note, the share judged, and each cell's stop."""
        cells = [
            {
                "cell": c.cell,
                "rounds": c.rounds,
                "stop_reason": c.reason,
                "judged_pairs": c.judged_pairs,
                "candidate_pairs": c.candidate_pairs,
                "share_judged": round(c.share_judged, 4),
                "stability": _json_float(c.stability),
                "interval_width": _json_float(c.interval_width),
                "predicted_agreement": _json_float(c.predicted_agreement),
            }
            for c in self.cells
        ]
        return {
            "design": "adaptive",
            "design_note": self.note(),
            "design_option": self.stated,
            "share_judged": round(self.share_judged, 4),
            "rounds": max((c.rounds for c in self.cells), default=0),
            "design_cells": cells,
        }


def _json_float(value: float) -> float | None:
    return None if value != value else round(float(value), 4)


def check_pairs(pairs: pd.DataFrame, requests: Sequence[ChatRequest], where: str) -> pd.DataFrame:
    """The design with its columns checked: every request in it once, no unknown key (``where`` names the entry)."""
    missing = [column for column in PAIR_COLUMNS if column not in pairs.columns]
    if missing:
        raise ValueError(f"{where}: the study's adaptive_pairs lack the column(s) {missing}")
    keys = pd.Index(pairs["key"])
    if keys.has_duplicates:
        raise ValueError(f"{where}: adaptive_pairs name request {keys[keys.duplicated()][0]!r} twice")
    asked = {request.key for request in requests}
    if set(keys) != asked:
        odd = sorted(map(str, set(keys) ^ asked))[0]
        raise ValueError(f"{where}: request {odd!r} is in only one of the requests and the adaptive_pairs")
    return pairs[PAIR_COLUMNS].reset_index(drop=True)


@dataclass
class _Cell:
    """One cell's candidates, its judgments so far and its last plan."""

    name: str
    candidates: pd.DataFrame
    judged: list[pd.DataFrame] = field(default_factory=list)
    plan: RoundPlan | None = None

    def judgments(self) -> pd.DataFrame:
        if not self.judged:
            return pd.DataFrame({"pair_id": [], "round": [], "label": []})
        return pd.concat(self.judged, ignore_index=True)


def _cells(pairs: pd.DataFrame) -> list[_Cell]:
    cells = []
    for name, rows in pairs.groupby("cell", sort=True):
        candidates = rows.drop_duplicates("pair_id")[["pair_id", "group", "item_a", "item_b"]]
        cells.append(_Cell(str(name), candidates.reset_index(drop=True)))
    return cells


def _plan_cells(cells: list[_Cell], settings: AdaptiveSettings) -> list[tuple[_Cell, tuple[Any, ...]]]:
    """Each open cell's next round; a cell whose plan says stop is closed."""
    rounds = []
    for cell in cells:
        if cell.plan is not None and cell.plan.stop:
            continue
        cell.plan = plan_round(cell.candidates, cell.judgments(), settings)
        if not cell.plan.stop:
            rounds.append((cell, cell.plan.pair_ids))
    return rounds


def judge_in_rounds(
    requests: Sequence[ChatRequest],
    pairs: pd.DataFrame,
    settings: AdaptiveSettings,
    send: Send,
    verdicts: Verdicts,
    log: Any = None,
) -> AdaptiveOutcome:
    """Judge ``requests`` in rounds (module docstring) until every cell's plan stops.

    ``pairs`` is the study's design of the requests (:data:`PAIR_COLUMNS`, checked by
    :func:`check_pairs`); ``send`` judges a round's requests (all runs) through the cache;
    ``verdicts`` reads each completion's verdict.
    """
    by_key = {request.key: request for request in requests}
    cells = _cells(pairs)
    cell_of = {name: i for i, name in enumerate(c.name for c in cells)}
    place = pairs.set_index("key")[["cell", "pair_id"]]
    completions: list[CachedCompletion] = []
    while True:
        planned = _plan_cells(cells, settings)
        if not planned:
            break
        wanted = pd.concat([pairs[(pairs["cell"] == c.name) & pairs["pair_id"].isin(ids)] for c, ids in planned])
        judged = send([by_key[key] for key in wanted["key"]])
        found = place.loc[[c.key for c in judged]].assign(label=list(verdicts(judged)))
        for name, rows in found.groupby("cell", sort=False):
            cell = cells[cell_of[str(name)]]
            assert cell.plan is not None
            cell.judged.append(rows[["pair_id", "label"]].assign(round=cell.plan.round).reset_index(drop=True))
        completions.extend(judged)
        if log is not None:
            sent = sum(not c.from_cache for c in judged)
            log.info(f"adaptive round {planned[0][0].plan.round}: {len(judged)} completions, {sent} sent")  # type: ignore[union-attr]
    return AdaptiveOutcome(completions, [_cell_outcome(cell) for cell in cells])


def _cell_outcome(cell: _Cell) -> CellOutcome:
    plan = cell.plan
    assert plan is not None
    return CellOutcome(
        cell=cell.name,
        rounds=plan.round,
        reason=plan.reason,
        judged_pairs=plan.judged_pairs,
        candidate_pairs=plan.candidate_pairs,
        stability=plan.stability,
        interval_width=plan.interval_width,
        predicted_agreement=plan.predicted_agreement,
    )
