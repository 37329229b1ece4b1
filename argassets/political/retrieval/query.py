"""The retrieval query: the political filter, the three methods, validation, and their results.

Methods (the authors' release, directions fixed):

- ``vector``: the ``k`` arguments nearest the utterance (optionally of one illocutionary force);
- ``typical``: for every relation type, direction and illocutionary force of the neighbour, the
  ``k`` (similar argument, neighbour) pairs whose similar argument is nearest the utterance;
- ``chosen``: the same for the relation types and neighbour forces the user picks.

Directions: ``incoming`` is ``neighbour -[relation]-> argument``, ``outgoing`` is
``argument -[relation]-> neighbour``; ``both`` ranks each direction on its own (``k`` each).
The political filter (and ``force``) applies to the similar argument. Ties in similarity are
broken by argument id, then neighbour id, so that every store returns the same order.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Literal

from argassets.political.neo4j_graph import RELATIONSHIP_TYPES

Method = Literal["vector", "typical", "chosen"]
Direction = Literal["incoming", "outgoing", "both"]
METHODS: tuple[str, ...] = ("vector", "typical", "chosen")
DIRECTIONS: tuple[str, ...] = ("incoming", "outgoing", "both")
MAX_K = 1000


class RetrievalError(ValueError):
    """A query or filter that cannot run (the message names the bad value)."""


@dataclass(frozen=True)
class PoliticalFilter:
    """Arguments whose position under ``system`` (a model, an ensemble E1-E3, any partition) lies in
    ``[min_position, max_position]``, with standard deviation at most ``max_std`` and probability of
    NA at most ``max_prob_na``; ``None`` leaves a bound out."""

    system: str
    min_position: float | None = None
    max_position: float | None = None
    max_std: float | None = None
    max_prob_na: float | None = None

    def validate(self) -> PoliticalFilter:
        if not isinstance(self.system, str) or not self.system.strip():
            raise RetrievalError("filter: the system (model or ensemble) is empty")
        for name in ("min_position", "max_position", "max_std", "max_prob_na"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int | float) or not math.isfinite(value)):
                raise RetrievalError(f"filter: {name} must be a finite number, got {value!r}")
        for name in ("min_position", "max_position"):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= 100:
                raise RetrievalError(f"filter: {name} must lie in 0..100, got {value}")
        if self.min_position is not None and self.max_position is not None and self.min_position > self.max_position:
            raise RetrievalError(f"filter: position range {self.min_position}-{self.max_position} is empty")
        if self.max_std is not None and self.max_std < 0:
            raise RetrievalError(f"filter: max_std must be >= 0, got {self.max_std}")
        if self.max_prob_na is not None and not 0 <= self.max_prob_na <= 1:
            raise RetrievalError(f"filter: max_prob_na must lie in 0..1, got {self.max_prob_na}")
        return self


def parse_position_range(text: str) -> tuple[float, float]:
    """``"60-90"`` -> ``(60.0, 90.0)``, with a clear error otherwise."""
    parts = text.split("-")
    try:
        if len(parts) != 2:
            raise ValueError
        low, high = float(parts[0]), float(parts[1])
    except ValueError:
        raise RetrievalError(f"position range {text!r} is not MIN-MAX (e.g. 60-90)") from None
    return low, high


@dataclass(frozen=True)
class RetrievalQuery:
    """One retrieval: the utterance, the method and its options, and an optional political filter."""

    utterance: str
    method: Method = "vector"
    k: int = 5
    force: str | None = None
    relations: tuple[str, ...] = RELATIONSHIP_TYPES
    neighbour_forces: tuple[str, ...] | None = None
    direction: Direction = "both"
    filter: PoliticalFilter | None = None

    def validate(self) -> RetrievalQuery:
        if not isinstance(self.utterance, str) or not self.utterance.strip():
            raise RetrievalError("the utterance is empty")
        if self.method not in METHODS:
            raise RetrievalError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= MAX_K:
            raise RetrievalError(f"k must be an integer in 1..{MAX_K}, got {self.k!r}")
        if self.direction not in DIRECTIONS:
            raise RetrievalError(f"unknown direction {self.direction!r}; choose one of {', '.join(DIRECTIONS)}")
        unknown = [r for r in self.relations if r not in RELATIONSHIP_TYPES]
        if unknown or not self.relations:
            raise RetrievalError(f"relations must be among {', '.join(RELATIONSHIP_TYPES)}, got {list(self.relations)}")
        if self.method == "typical" and (tuple(self.relations) != RELATIONSHIP_TYPES or self.neighbour_forces):
            raise RetrievalError("the typical method covers every relation and neighbour force; use method 'chosen'")
        if self.method == "chosen" and not self.neighbour_forces:
            raise RetrievalError("the chosen method needs the neighbour forces to retrieve (e.g. Asserting)")
        if self.filter is not None:
            self.filter.validate()
        return self

    @property
    def directions(self) -> tuple[str, ...]:
        return ("incoming", "outgoing") if self.direction == "both" else (self.direction,)


@dataclass(frozen=True)
class RetrievalResult:
    """One retrieved example: the similar argument and, for the graph methods, its neighbour."""

    argument_id: str
    locution: str
    proposition: str
    force: str
    similarity: float
    position: float | None
    neighbour_id: str = ""
    neighbour_locution: str = ""
    neighbour_proposition: str = ""
    neighbour_force: str = ""
    relation: str = ""
    direction: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def example_line(self, what: str = "both") -> str:
        """``'neighbour' -[RELATION]-> 'similar'`` (arrow as in the graph), or the argument alone."""
        similar = _text(self.locution, self.proposition, what)
        if not self.relation:
            return f"'{similar}'"
        neighbour = _text(self.neighbour_locution, self.neighbour_proposition, what)
        if self.direction == "incoming":
            return f"'{neighbour}' -[{self.relation}]-> '{similar}'"
        return f"'{similar}' -[{self.relation}]-> '{neighbour}'"


def canonical_name(given: str, known: list[str], what: str) -> str:
    """``given`` spelt as in ``known`` (case does not matter); :class:`RetrievalError` naming the
    known values when none matches (a wrong case used to return no results, silently)."""
    by_fold = {name.casefold(): name for name in known}
    found = by_fold.get(given.strip().casefold())
    if found is None:
        raise RetrievalError(f"{what} {given!r} is not in the knowledge base (known: {', '.join(known) or 'none'})")
    return found


def canonical_query(query: RetrievalQuery, forces: list[str], systems: list[str]) -> RetrievalQuery:
    """``query`` with its forces and filter system spelt as the store spells them."""
    force = None if query.force is None else canonical_name(query.force, forces, "force")
    neighbours = query.neighbour_forces
    if neighbours is not None:
        neighbours = tuple(canonical_name(name, forces, "neighbour force") for name in neighbours)
    political = query.filter
    if political is not None:
        political = replace(political, system=canonical_name(political.system, systems, "system"))
    return replace(query, force=force, neighbour_forces=neighbours, filter=political)


def _text(locution: str, proposition: str, what: str) -> str:
    if what == "locution":
        return locution
    if what == "proposition":
        return proposition
    return f"{locution} (proposition: {proposition})"
