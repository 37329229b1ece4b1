"""Export a design for Prolific and Label Studio, read results back, and name every bad input."""

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from argassets.platform.design.exchange import (
    CONSENT_REVOKED,
    ImportPolicy,
    export_study,
    import_into_folder,
    import_results,
    read_design,
)
from argassets.platform.design.pairs import random_pairs
from argassets.platform.design.tasks import ATTENTION, ITEM, Question, StudyDesign, study_tasks

QUESTION = Question("better", "Which is better?", {"1": "The first", "2": "The second", "0": "Equal"})
TRUTH = {f"i{k}": k for k in range(8)}  # a larger number is better


def _design(tmp_path):
    pairs = random_pairs(list(TRUTH), 12, seed=0)
    texts = {item: f"text of {item}" for item in TRUTH}
    design = StudyDesign(
        "pairwise", (QUESTION,), study_tasks([QUESTION], texts, pairs), judgments_per_task=3, bundle_size=4
    )
    return export_study(design, attention_rate=0.25, gold_rate=0.0, seed=1, folder=tmp_path / "out")


def _answers(design, bundles, wrong_attention: set[str] = frozenset()) -> pd.DataFrame:
    """Every participant (one per bundle) answers by the truth, and attention tasks as asked."""
    tasks = design.tasks.set_index("task_id")
    rows = []
    for bundle, group in bundles.groupby("bundle"):
        who = f"p{bundle}"
        for task in group.sort_values("position")["task_id"]:
            row = tasks.loc[task]
            if row["kind"] == ATTENTION:
                label = "0" if who in wrong_attention and row["expected_label"] != "0" else row["expected_label"]
                label = "1" if who in wrong_attention and row["expected_label"] == "0" else label
            else:
                label = "1" if TRUTH[row["item_1"]] > TRUTH[row["item_2"]] else "2"
            rows.append({"task_id": task, "participant_id": who, "label": label, "age": "30", "sex": "Female"})
    return pd.DataFrame(rows)


def test_the_export_deals_every_task_to_distinct_participants_and_hides_the_answers(tmp_path) -> None:
    design, bundles, paths = _design(tmp_path)
    shown = pd.read_csv(paths["prolific_tasks"])
    assert "expected_label" not in shown.columns and "kind" not in shown.columns
    assert set(shown["task_id"]) == set(design.tasks["task_id"]) and shown["task_id"].is_unique
    prolific = pd.read_csv(paths["prolific_bundles"])
    kinds = design.tasks.set_index("task_id")["kind"]
    study = prolific[prolific["task_id"].map(kinds) == ITEM]
    assert study["task_id"].value_counts().eq(3).all() and study["task_id"].nunique() == 12
    assert not prolific.duplicated(["bundle", "task_id"]).any()
    per_bundle = prolific.groupby("bundle")["task_id"].apply(lambda t: (t.map(kinds) == ATTENTION).sum())
    assert (per_bundle == 1).all()
    tasks = json.loads(paths["label_studio_tasks"].read_text())
    assert {t["data"]["task_id"] for t in tasks} == set(design.tasks["task_id"])
    assert set(tasks[0]["data"]) == {"task_id", "question", "prompt", "text_1", "text_2"}
    config = ET.fromstring(paths["label_studio_config"].read_text())
    assert [c.get("value") for c in config.iter("Choice")] == list(QUESTION.labels.values())
    again = read_design(tmp_path / "out")
    kept = ["task_id", "kind", "question", "item_1", "item_2", "expected_label"]
    pd.testing.assert_frame_equal(again.tasks[kept].fillna("").astype(str), design.tasks[kept].fillna("").astype(str))


def test_clean_results_come_back_whole(tmp_path) -> None:
    design, bundles, _ = _design(tmp_path)
    path = tmp_path / "results.csv"
    _answers(design, bundles).to_csv(path, index=False)
    imported = import_results(read_design(tmp_path / "out"), [path])
    assert imported.problems.empty
    study = imported.study_judgments()
    assert len(study) == 36 and set(study.columns) >= {"age", "sex", "question", "item_1", "item_2"}
    assert (study["label"] == "1").eq(study["item_1"].map(TRUTH) > study["item_2"].map(TRUTH)).all()
    written = import_into_folder(tmp_path / "out", [path], tmp_path / "imported")
    assert len(pd.read_csv(written["judgments"])) == len(imported.judgments)
    assert pd.read_csv(written["problems"]).empty


def test_each_problem_is_named_by_file_row_and_participant(tmp_path) -> None:
    design, bundles, _ = _design(tmp_path)
    rows = _answers(design, bundles, wrong_attention={"p1"})
    rows.loc[rows["participant_id"] == "p2", "sex"] = CONSENT_REVOKED
    extra = [rows[rows["participant_id"] == "p3"].iloc[0].to_dict()]  # p3 judges a task twice
    other = rows[
        (rows["participant_id"] == "p0") & ~rows["task_id"].isin(rows.loc[rows["participant_id"] == "p4", "task_id"])
    ]
    extra.append({**other.iloc[0].to_dict(), "participant_id": "p4"})  # p4 one over the quota of 5
    rows = pd.concat([rows, pd.DataFrame(extra)], ignore_index=True)
    rows.loc[len(rows)] = {
        "task_id": "better:i0|nine",
        "participant_id": "p99",
        "label": "1",
        "age": "1",
        "sex": "Male",
    }
    path = tmp_path / "returned.csv"
    rows.to_csv(path, index=False)
    last = len(rows) - 1
    with pytest.raises(
        ValueError,
        match=rf"returned.csv: data row {last} \(line {last + 2}\), participant 'p99', task 'better:i0\|nine': unknown_task",
    ):
        import_results(design, [path])
    imported = import_results(design, [path], ImportPolicy(unknown_task="drop"))
    problems = imported.problems
    named = problems[problems["problem"] != "missing_judgments"]
    assert set(zip(named["problem"], named["participant_id"], strict=True)) == {
        ("unknown_task", "p99"),
        ("failed_attention", "p1"),
        ("consent_revoked", "p2"),
        ("duplicate", "p3"),
        ("over_quota", "p4"),
    }
    assert (named["source"] == "returned.csv").all() and named["row"].str.startswith("data row").all()
    assert not imported.judgments["participant_id"].isin(["p1", "p2", "p99"]).any()
    assert (imported.judgments["participant_id"] == "p4").sum() == 5
    assert not imported.judgments.duplicated(["participant_id", "task_id"]).any()
    missing = problems[problems["problem"] == "missing_judgments"]
    assert len(missing) > 0 and missing["detail"].str.endswith("of 3 judgments").all()
    kept = import_results(design, [path], ImportPolicy(unknown_task="drop", consent_revoked="keep"))
    assert (kept.judgments["participant_id"] == "p2").sum() > 0
    with pytest.raises(ValueError, match="participant 'p3'.*duplicate"):
        import_results(design, [path], ImportPolicy(unknown_task="drop", duplicate="error"))


def test_a_label_studio_export_is_read_with_its_answers_mapped_to_codes(tmp_path) -> None:
    design, _, _ = _design(tmp_path)
    first, second = design.tasks[design.tasks["kind"] == ITEM]["task_id"].iloc[:2]

    def task(task_id: str, choice: str, who: int) -> dict:
        result = [{"from_name": "label", "to_name": "text_1", "type": "choices", "value": {"choices": [choice]}}]
        return {
            "data": {"task_id": task_id, "question": "better"},
            "annotations": [{"completed_by": who, "result": result}],
        }

    export = tmp_path / "ls_export.json"
    export.write_text(json.dumps([task(first, "The second", 7), task(second, "Equal", 8)]))
    imported = import_results(design, [export])
    assert imported.judgments[["participant_id", "label"]].values.tolist() == [["7", "2"], ["8", "0"]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([task(first, "Maybe", 9)]))
    with pytest.raises(ValueError, match=r"bad.json: task 0, annotation 0, participant '9'.*'Maybe'"):
        import_results(design, [bad])
