"""A study's tasks and the participants' bundles: what each annotator is shown, in which order.

A **task** is one question about one item (pointwise) or one pair (pairwise): its id is
``<question>:<item>`` or ``<question>:<item_1>|<item_2>``, so a returned result names its task
without a lookup table. Besides the study's own tasks (``kind`` = ``item``) a design holds
**attention** tasks (an instructed response: the text asks for one stated answer) and **gold**
tasks (items whose answer is known, e.g. from an earlier study), at a stated rate per bundle.

A **bundle** is what one participant does (one Prolific submission): ``bundle_size`` study tasks
of one question, plus the attention and gold tasks. Every study task is dealt to
``judgments_per_task`` different bundles (copies of a task never share a bundle).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "ATTENTION",
    "GOLD",
    "ITEM",
    "TASK_COLUMNS",
    "Question",
    "StudyDesign",
    "assign_bundles",
    "attention_tasks",
    "study_tasks",
    "task_id",
]

ITEM, ATTENTION, GOLD = "item", "attention", "gold"
TASK_COLUMNS = ["task_id", "kind", "question", "item_1", "item_2", "text_1", "text_2", "expected_label"]
BUNDLE_COLUMNS = ["bundle", "position", "task_id", "question"]

#: Characters an item id may not hold (they separate the parts of a task id).
_RESERVED = (":", "|")


@dataclass(frozen=True)
class Question:
    """A question put to the annotators: its ``name``, the ``prompt`` shown, and the answers
    (label code -> text shown)."""

    name: str
    prompt: str
    labels: Mapping[str, str]

    def __post_init__(self) -> None:
        if not self.name or any(c in self.name for c in _RESERVED):
            raise ValueError(f"question name {self.name!r} must be non-empty without ':' or '|'")
        if len(self.labels) < 2:
            raise ValueError(f"question {self.name!r} needs at least two answers")
        if len(set(self.labels.values())) != len(self.labels):
            raise ValueError(f"question {self.name!r}: two answers show the same text")


def task_id(question: str, item_1: str, item_2: str | None = None) -> str:
    """``<question>:<item_1>`` or ``<question>:<item_1>|<item_2>``."""
    return f"{question}:{item_1}" if item_2 is None else f"{question}:{item_1}|{item_2}"


def _check_ids(ids: pd.Series, what: str) -> None:
    for value in ids:
        text = str(value)
        if not text or any(c in text for c in _RESERVED):
            raise ValueError(f"{what} id {value!r} must be non-empty without ':' or '|'")


def study_tasks(
    questions: Sequence[Question], texts: Mapping[str, str], pairs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The study's own tasks: every question about every item (``pairs`` None) or pair.

    ``texts``: item id -> the text shown; ``pairs``: ``item_1``, ``item_2`` in the orientation
    shown. Returns :data:`TASK_COLUMNS` (``kind`` ``item``, no expected label).
    """
    _check_ids(pd.Series(list(texts), dtype=object), "item")
    if pairs is None:
        first, second = pd.Series(list(texts), dtype=object), pd.Series([None] * len(texts), dtype=object)
    else:
        unknown = [i for i in [*pairs["item_1"], *pairs["item_2"]] if i not in texts]
        if unknown:
            raise ValueError(f"pair item {unknown[0]!r} has no text")
        first, second = pairs["item_1"].astype(object), pairs["item_2"].astype(object)
    frames = []
    for question in questions:
        frames.append(
            pd.DataFrame(
                {
                    "task_id": [task_id(question.name, a, b) for a, b in zip(first, second, strict=True)],
                    "kind": ITEM,
                    "question": question.name,
                    "item_1": first.to_numpy(),
                    "item_2": second.to_numpy(),
                    "text_1": [texts[a] for a in first],
                    "text_2": [None if b is None else texts[b] for b in second],
                    "expected_label": None,
                }
            )
        )
    tasks = pd.concat(frames, ignore_index=True)
    repeated = tasks["task_id"][tasks["task_id"].duplicated()]
    if len(repeated):
        raise ValueError(f"task {repeated.iloc[0]!r} occurs twice (a repeated item or pair)")
    return tasks


def attention_tasks(question: Question, count: int, pairwise: bool) -> pd.DataFrame:
    """``count`` instructed-response tasks: the text asks for one stated answer (cycling through
    the answers), which is the expected label."""
    codes = list(question.labels)
    rows = []
    for n in range(count):
        code = codes[n % len(codes)]
        text = f"This is an attention check. Please answer: {question.labels[code]}"
        rows.append(
            (
                f"{question.name}:attention-{n}",
                ATTENTION,
                question.name,
                f"attention-{n}",
                f"attention-{n}-b" if pairwise else None,
                text,
                text if pairwise else None,
                code,
            )
        )
    return pd.DataFrame(rows, columns=TASK_COLUMNS)


@dataclass(frozen=True)
class StudyDesign:
    """Everything the export and the import need: the questions, every task (study, attention,
    gold), how many judgments each study task gets and how many study tasks a bundle holds."""

    kind: str
    questions: tuple[Question, ...]
    tasks: pd.DataFrame
    judgments_per_task: int
    bundle_size: int

    def __post_init__(self) -> None:
        if self.kind not in ("pointwise", "pairwise"):
            raise ValueError(f"kind must be 'pointwise' or 'pairwise', got {self.kind!r}")
        if self.judgments_per_task < 1 or self.bundle_size < 1:
            raise ValueError("judgments_per_task and bundle_size must be >= 1")
        missing = [c for c in TASK_COLUMNS if c not in self.tasks.columns]
        if missing:
            raise ValueError(f"tasks have no column(s) {missing}")
        names = {q.name for q in self.questions}
        unknown = set(self.tasks["question"]) - names
        if unknown:
            raise ValueError(f"a task asks question {sorted(unknown)[0]!r}, which the design does not define")

    def with_tasks(self, extra: pd.DataFrame) -> StudyDesign:
        """The design with ``extra`` tasks (attention or gold) added; task ids stay unique."""
        tasks = pd.concat([self.tasks, extra[TASK_COLUMNS]], ignore_index=True)
        repeated = tasks["task_id"][tasks["task_id"].duplicated()]
        if len(repeated):
            raise ValueError(f"task {repeated.iloc[0]!r} occurs twice")
        return StudyDesign(self.kind, self.questions, tasks, self.judgments_per_task, self.bundle_size)

    def question(self, name: str) -> Question:
        return next(q for q in self.questions if q.name == name)

    @property
    def quota(self) -> int:
        """The most tasks one participant is given: a bundle with its attention and gold tasks."""
        extra = self.tasks[self.tasks["kind"] != ITEM].groupby("question").size()
        return self.bundle_size + (int(extra.max()) if len(extra) else 0)


def _deal(task_ids: list[str], copies: int, size: int, rng: np.random.Generator) -> list[list[str]]:
    """Deal ``copies`` of every task into bundles of ``size``, no task twice in one bundle."""
    if copies > 1 and size > len(task_ids):
        raise ValueError(f"a bundle of {size} tasks cannot hold {len(task_ids)} tasks without repeating one")
    stream: deque[str] = deque()
    for _ in range(copies):
        stream.extend(task_ids[k] for k in rng.permutation(len(task_ids)))
    bundles: list[list[str]] = []
    while stream:
        bundle: list[str] = []
        members: set[str] = set()
        skipped: list[str] = []
        while len(bundle) < size and stream:
            task = stream.popleft()
            if task in members:
                skipped.append(task)
                continue
            bundle.append(task)
            members.add(task)
        stream.extendleft(reversed(skipped))
        if not bundle:
            raise ValueError("tasks cannot be dealt without repeating one in a bundle")
        bundles.append(bundle)
    return bundles


def assign_bundles(design: StudyDesign, attention_rate: float, gold_rate: float, seed: int) -> pd.DataFrame:
    """Bundles of every question: study tasks dealt ``judgments_per_task`` times, and
    ``ceil(rate * tasks in the bundle)`` attention and gold tasks at seeded random positions.

    Returns :data:`BUNDLE_COLUMNS` (bundles numbered across questions, positions from 0).
    """
    for name, rate in (("attention_rate", attention_rate), ("gold_rate", gold_rate)):
        if not 0 <= rate < 1:
            raise ValueError(f"{name} must be in [0, 1), got {rate!r}")
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, int, str, str]] = []
    bundle_number = 0
    for question in design.questions:
        tasks = design.tasks[design.tasks["question"] == question.name]
        study = tasks.loc[tasks["kind"] == ITEM, "task_id"].tolist()
        pools = {kind: tasks.loc[tasks["kind"] == kind, "task_id"].tolist() for kind in (ATTENTION, GOLD)}
        for bundle in _deal(study, design.judgments_per_task, design.bundle_size, rng):
            extra: list[str] = []
            for kind, rate in ((ATTENTION, attention_rate), (GOLD, gold_rate)):
                wanted = math.ceil(rate * len(bundle)) if rate > 0 else 0
                if wanted > len(pools[kind]):
                    raise ValueError(
                        f"question {question.name!r}: {wanted} {kind} tasks per bundle, {len(pools[kind])} defined"
                    )
                extra += [pools[kind][k] for k in rng.permutation(len(pools[kind]))[:wanted]]
            shown = list(bundle)
            for task in extra:
                shown.insert(int(rng.integers(0, len(shown) + 1)), task)
            rows += [(bundle_number, position, task, question.name) for position, task in enumerate(shown)]
            bundle_number += 1
    return pd.DataFrame(rows, columns=BUNDLE_COLUMNS)
