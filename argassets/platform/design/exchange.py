"""Files to the annotators and back: a Prolific-ready CSV, a Label Studio project, and the import
of the returned results with every problem named by file, row and participant.

Out
    ``prolific_bundles.csv``: which task each participant sees at which position (``bundle`` =
    one Prolific submission: request as many places as there are bundles), and
    ``prolific_tasks.csv``: every task once, with the question, its answers and the text(s) (the
    texts are not repeated per bundle). Expected answers of attention and gold tasks are in
    neither.
    ``label_studio_tasks.json``: the tasks in Label Studio's import format (a JSON list of
    ``{"data": {...}}``; every task once: set the project's overlap to ``judgments_per_task``) and
    ``label_studio_config.xml``, the labelling interface (two texts or one, one choice).

Back
    A results CSV (one row per judgment: ``task_id``, ``participant_id``, ``label`` and any
    demographic columns) or a Label Studio JSON export. :func:`import_results` checks them against
    the design. Problems and what is done about them by default: an unknown task or a label the
    question does not offer (error), a participant judging a task twice (later rows dropped), a
    participant over the quota (rows beyond it dropped), a failed attention task (all the
    participant's rows dropped), a revoked consent (``CONSENT_REVOKED`` in a demographic field; all
    the participant's rows dropped), and study tasks left with fewer judgments than designed
    (reported). ``ImportPolicy`` changes each action to ``error``, ``drop`` or ``keep``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import quoteattr

import pandas as pd

from argassets.platform.design.tasks import (
    ATTENTION,
    ITEM,
    TASK_COLUMNS,
    Question,
    StudyDesign,
    assign_bundles,
    attention_tasks,
)

__all__ = [
    "CONSENT_REVOKED",
    "ImportPolicy",
    "ImportedResults",
    "import_into_folder",
    "import_results",
    "label_studio_config",
    "export_study",
    "label_studio_tasks",
    "prolific_tasks",
    "read_design",
    "write_design",
    "write_exports",
]

#: The mark a participant's demographic fields carry when the consent was withdrawn (Prolific).
CONSENT_REVOKED = "CONSENT_REVOKED"

Action = Literal["error", "drop", "keep"]
PROBLEM_COLUMNS = ["source", "row", "participant_id", "task_id", "problem", "detail", "action"]
RESULT_COLUMNS = ["task_id", "participant_id", "label"]
#: What ``design_tasks.csv`` keeps of every task (the texts are in the participant files).
DESIGN_COLUMNS = ["task_id", "kind", "question", "item_1", "item_2", "expected_label"]


def prolific_tasks(design: StudyDesign) -> pd.DataFrame:
    """Every task once, as a participant sees it: the question, its answers and the text(s)."""
    tasks = design.tasks.copy()
    tasks["prompt"] = tasks["question"].map({q.name: q.prompt for q in design.questions})
    tasks["answers"] = tasks["question"].map(
        {q.name: json.dumps(dict(q.labels), ensure_ascii=False) for q in design.questions}
    )
    # The kind and the expected answer would tell a participant which tasks are checks.
    return tasks[["task_id", "question", "prompt", "text_1", "text_2", "answers"]]


def label_studio_tasks(design: StudyDesign) -> list[dict]:
    """Every task once, in Label Studio's import format (``[{"data": {...}}, ...]``)."""
    prompts = {q.name: q.prompt for q in design.questions}
    out = []
    for row in design.tasks.itertuples(index=False):
        data = {"task_id": row.task_id, "question": row.question, "prompt": prompts[row.question], "text_1": row.text_1}
        if design.kind == "pairwise":
            data["text_2"] = row.text_2
        out.append({"data": data})
    return out


def label_studio_config(design: StudyDesign) -> str:
    """The labelling interface: the prompt, the text(s) and one single choice per question.

    Every question's answers are offered in one ``Choices`` block (Label Studio shows one config
    per project; make one project per question when their answers differ).
    """
    texts = ['  <Text name="text_1" value="$text_1"/>']
    if design.kind == "pairwise":
        texts.append('  <Text name="text_2" value="$text_2"/>')
    answers = dict.fromkeys(text for q in design.questions for text in q.labels.values())
    choices = "\n".join(f"    <Choice value={quoteattr(text)}/>" for text in answers)
    return "\n".join(
        [
            "<View>",
            '  <Header value="$prompt"/>',
            *texts,
            '  <Choices name="label" toName="text_1" choice="single" required="true">',
            choices,
            "  </Choices>",
            "</View>",
        ]
    )


def write_exports(design: StudyDesign, bundles: pd.DataFrame, folder: str | Path) -> dict[str, Path]:
    """Write the Prolific CSVs and the Label Studio files into ``folder``; returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "prolific_bundles": folder / "prolific_bundles.csv",
        "prolific_tasks": folder / "prolific_tasks.csv",
        "label_studio_tasks": folder / "label_studio_tasks.json",
        "label_studio_config": folder / "label_studio_config.xml",
    }
    contents = {
        "prolific_bundles": bundles[["bundle", "position", "task_id"]].to_csv(index=False),
        "prolific_tasks": prolific_tasks(design).to_csv(index=False),
        "label_studio_tasks": json.dumps(label_studio_tasks(design), ensure_ascii=False, indent=1),
        "label_studio_config": label_studio_config(design) + "\n",
    }
    for key, path in paths.items():
        _replace(path, contents[key])
    return paths


def _replace(path: Path, text: str) -> None:
    """Write ``text`` beside ``path``, then rename: a reader never sees half a file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def write_design(design: StudyDesign, folder: str | Path) -> dict[str, Path]:
    """The design as the import needs it later (researcher-only: it holds the expected answers):
    ``design.json`` (kind, questions, judgments per task, bundle size) and ``design_tasks.csv``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    header = {
        "kind": design.kind,
        "judgments_per_task": design.judgments_per_task,
        "bundle_size": design.bundle_size,
        "questions": [{"name": q.name, "prompt": q.prompt, "labels": dict(q.labels)} for q in design.questions],
    }
    paths = {"design": folder / "design.json", "tasks": folder / "design_tasks.csv"}
    _replace(paths["design"], json.dumps(header, ensure_ascii=False, indent=1))
    # The texts are in the participant files; the import needs the rest.
    _replace(paths["tasks"], design.tasks[DESIGN_COLUMNS].to_csv(index=False))
    return paths


def read_design(folder: str | Path) -> StudyDesign:
    """The design :func:`write_design` wrote into ``folder``."""
    folder = Path(folder)
    for name in ("design.json", "design_tasks.csv"):
        if not (folder / name).exists():
            raise FileNotFoundError(f"{folder / name}: not found (write_design writes it)")
    header = json.loads((folder / "design.json").read_text(encoding="utf-8"))
    tasks = pd.read_csv(folder / "design_tasks.csv", dtype=str, keep_default_na=False)
    tasks = tasks.replace({"": None}).assign(text_1=None, text_2=None)[TASK_COLUMNS]
    questions = tuple(Question(q["name"], q["prompt"], q["labels"]) for q in header["questions"])
    return StudyDesign(header["kind"], questions, tasks, int(header["judgments_per_task"]), int(header["bundle_size"]))


def export_study(
    design: StudyDesign, attention_rate: float, gold_rate: float, seed: int, folder: str | Path
) -> tuple[StudyDesign, pd.DataFrame, dict[str, Path]]:
    """Add the attention tasks (``ceil(attention_rate * bundle_size)`` per question), deal the
    bundles, and write the participant files and the design into ``folder``.

    Returns the design with its attention tasks, the bundles and the paths written.
    """
    per_bundle = math.ceil(attention_rate * design.bundle_size) if attention_rate > 0 else 0
    if per_bundle:
        extra = [attention_tasks(q, per_bundle, design.kind == "pairwise") for q in design.questions]
        design = design.with_tasks(pd.concat(extra, ignore_index=True))
    bundles = assign_bundles(design, attention_rate, gold_rate, seed)
    paths = {**write_exports(design, bundles, folder), **write_design(design, folder)}
    return design, bundles, paths


@dataclass(frozen=True)
class ImportPolicy:
    """What to do about each kind of problem (``error``, ``drop`` or ``keep``), and the limits."""

    unknown_task: Action = "error"
    bad_label: Action = "error"
    duplicate: Action = "drop"
    over_quota: Action = "drop"
    failed_attention: Action = "drop"
    consent_revoked: Action = "drop"
    max_attention_failures: int = 0
    quota: int | None = None  # default: the design's bundle with its attention and gold tasks


@dataclass(frozen=True)
class ImportedResults:
    """The judgments kept (file order; ``kind``, ``question``, ``item_1``, ``item_2`` joined from
    the design; ``source``/``row`` say where each came from) and every problem found."""

    judgments: pd.DataFrame
    problems: pd.DataFrame

    def study_judgments(self) -> pd.DataFrame:
        """The judgments of the study's own tasks (attention and gold left out)."""
        return self.judgments[self.judgments["kind"] == ITEM].reset_index(drop=True)


def _read_csv_results(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in RESULT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    empty = frame.index[(frame["participant_id"].str.strip() == "") | (frame["task_id"].str.strip() == "")]
    if len(empty):
        raise ValueError(f"{path}: data row {empty[0]} (line {empty[0] + 2}): empty task_id or participant_id")
    return frame.assign(source=path.name, row=[f"data row {i} (line {i + 2})" for i in range(len(frame))])


def _annotator(completed_by: object) -> str:
    if isinstance(completed_by, dict):
        return str(completed_by.get("email") or completed_by.get("id"))
    return str(completed_by)


def _read_label_studio_results(path: Path, design: StudyDesign) -> pd.DataFrame:
    """One row per annotation of a Label Studio JSON export; the chosen text mapped to its code."""
    try:
        exported = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    codes = {q.name: {text: code for code, text in q.labels.items()} for q in design.questions}
    rows = []
    for t, task in enumerate(exported):
        data = task.get("data", {})
        for a, annotation in enumerate(task.get("annotations", [])):
            where = f"task {t}, annotation {a}"
            if annotation.get("was_cancelled"):
                continue
            choices = [r["value"]["choices"] for r in annotation.get("result", []) if r.get("type") == "choices"]
            if len(choices) != 1 or len(choices[0]) != 1:
                raise ValueError(f"{path}: {where}: expected exactly one choice, got {choices}")
            text = choices[0][0]
            label = codes.get(data.get("question"), {}).get(text, text)
            participant = _annotator(annotation.get("completed_by"))
            rows.append(
                {"task_id": data.get("task_id", ""), "participant_id": participant, "label": label, "row": where}
            )
    return pd.DataFrame(rows, columns=[*RESULT_COLUMNS, "row"]).assign(source=path.name)


def _problem(rows: pd.DataFrame, problem: str, detail: pd.Series | str, action: Action) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "source": rows["source"].to_numpy(),
            "row": rows["row"].to_numpy(),
            "participant_id": rows["participant_id"].to_numpy(),
            "task_id": rows["task_id"].to_numpy(),
            "problem": problem,
            "detail": detail if isinstance(detail, str) else detail.to_numpy(),
            "action": action,
        },
        columns=PROBLEM_COLUMNS,
    )


def _raise_first(problems: pd.DataFrame) -> None:
    first = problems.iloc[0]
    more = f" ({len(problems)} such problems in all)" if len(problems) > 1 else ""
    raise ValueError(
        f"{first['source']}: {first['row']}, participant {first['participant_id']!r}, task {first['task_id']!r}: "
        f"{first['problem']}: {first['detail']}{more}"
    )


def _apply(
    rows: pd.DataFrame, flagged: pd.Series, problem: str, detail: pd.Series | str, action: Action, found: list
) -> pd.DataFrame:
    """Record the flagged rows as problems and act on them; returns the rows kept."""
    if not flagged.any():
        return rows
    hit = rows[flagged]
    detail = detail if isinstance(detail, str) else detail[flagged]
    problems = _problem(hit, problem, detail, action)
    if action == "error":
        _raise_first(problems)
    found.append(problems)
    return rows[~flagged] if action == "drop" else rows


def _participant_checks(rows: pd.DataFrame, design: StudyDesign, policy: ImportPolicy, found: list) -> pd.DataFrame:
    """Revoked consent and failed attention tasks: every row of such a participant."""
    demographic = [
        c
        for c in rows.columns
        if c not in {*RESULT_COLUMNS, "source", "row", "kind", "question", "item_1", "item_2", "expected_label"}
    ]
    revoked_rows = (
        rows[demographic].eq(CONSENT_REVOKED).any(axis=1) if demographic else pd.Series(False, index=rows.index)
    )
    revoked = rows["participant_id"].isin(set(rows.loc[revoked_rows, "participant_id"]))
    rows = _apply(
        rows, revoked, "consent_revoked", f"{CONSENT_REVOKED} in a demographic field", policy.consent_revoked, found
    )
    attention = rows["kind"] == ATTENTION
    failed = attention & (rows["label"] != rows["expected_label"])
    failures = rows[failed].groupby("participant_id").size()
    over = set(failures[failures > policy.max_attention_failures].index)
    detail = rows["participant_id"].map(lambda p: f"{int(failures.get(p, 0))} failed attention task(s)")
    return _apply(rows, rows["participant_id"].isin(over), "failed_attention", detail, policy.failed_attention, found)


def _missing_judgments(rows: pd.DataFrame, design: StudyDesign) -> pd.DataFrame:
    study = design.tasks[design.tasks["kind"] == ITEM]
    counts = rows[rows["kind"] == ITEM].groupby("task_id").size()
    have = study["task_id"].map(counts).fillna(0).astype(int)
    short = study[have < design.judgments_per_task]
    return pd.DataFrame(
        {
            "source": "",
            "row": "",
            "participant_id": "",
            "task_id": short["task_id"].to_numpy(),
            "problem": "missing_judgments",
            "detail": [
                f"{int(n)} of {design.judgments_per_task} judgments" for n in have[have < design.judgments_per_task]
            ],
            "action": "report",
        },
        columns=PROBLEM_COLUMNS,
    )


def import_results(
    design: StudyDesign, paths: Sequence[str | Path], policy: ImportPolicy = ImportPolicy()
) -> ImportedResults:
    """Read returned results (``.csv`` or a Label Studio ``.json`` export), check them against the
    design and apply ``policy`` (module docstring); files are taken in the order given.

    Raises
    ------
    ValueError
        A problem whose action is ``error``, named by file, row, participant and task; a missing
        column; an unreadable file.
    """
    if policy.unknown_task == "keep":
        raise ValueError("unknown tasks cannot be kept (the design says nothing about them): use 'error' or 'drop'")
    frames = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(f"{path}: not found")
        frames.append(_read_label_studio_results(path, design) if path.suffix == ".json" else _read_csv_results(path))
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*RESULT_COLUMNS, "source", "row"])
    found: list[pd.DataFrame] = []
    known = rows["task_id"].isin(set(design.tasks["task_id"]))
    rows = _apply(rows, ~known, "unknown_task", "not a task of the design", policy.unknown_task, found)
    rows = rows.join(
        design.tasks.set_index("task_id")[["kind", "question", "item_1", "item_2", "expected_label"]], on="task_id"
    )
    allowed = {q.name: set(q.labels) for q in design.questions}
    ok = pd.Series(
        [label in allowed[q] for label, q in zip(rows["label"], rows["question"], strict=True)],
        index=rows.index,
        dtype=bool,
    )
    detail = rows["label"].map(lambda v: f"label {v!r} is not an answer of the question")
    rows = _apply(rows, ~ok, "bad_label", detail, policy.bad_label, found)
    rows = _participant_checks(rows, design, policy, found)
    twice = rows.duplicated(["participant_id", "task_id"], keep="first")
    rows = _apply(rows, twice, "duplicate", "the participant judged this task before", policy.duplicate, found)
    quota = policy.quota if policy.quota is not None else design.quota
    rank = rows.groupby("participant_id").cumcount()
    rows = _apply(rows, rank >= quota, "over_quota", f"more than {quota} judgments", policy.over_quota, found)
    found.append(_missing_judgments(rows, design))
    problems = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=PROBLEM_COLUMNS)
    order = ["task_id", "kind", "question", "item_1", "item_2", "participant_id", "label", "source", "row"]
    extra = [c for c in rows.columns if c not in order and c != "expected_label"]
    return ImportedResults(judgments=rows[order + extra].reset_index(drop=True), problems=problems)


def import_into_folder(
    design_folder: str | Path,
    paths: Sequence[str | Path],
    out_folder: str | Path,
    policy: ImportPolicy = ImportPolicy(),
) -> dict[str, Path]:
    """Import returned results against the design written in ``design_folder`` and write
    ``judgments.csv`` and ``problems.csv`` into ``out_folder`` (the logic of a CLI command)."""
    imported = import_results(read_design(design_folder), paths, policy)
    out = Path(out_folder)
    out.mkdir(parents=True, exist_ok=True)
    written = {"judgments": out / "judgments.csv", "problems": out / "problems.csv"}
    _replace(written["judgments"], imported.judgments.to_csv(index=False))
    _replace(written["problems"], imported.problems.to_csv(index=False))
    return written
