"""The participants of the human studies: their labels read with their affiliation, the revoked
consents counted and left out of every analysis by affiliation, bad files refused by file, row and
participant, and the affiliation table on a small example with known answers."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from argassets.political.human_studies import CONSENT_REVOKED, read_annotations
from argassets.political.validation.affiliation import affiliation_table, kept_annotations
from argassets.political.validation.human_tasks import AnnotationTask, pairwise_task


@pytest.fixture(scope="module")
def human_dir(shared_data_dir):
    return shared_data_dir / "political" / "human"


@pytest.fixture(scope="module")
def annotations(human_dir):
    return read_annotations(human_dir)


def test_every_label_has_its_participant_and_affiliation(annotations):
    assert annotations.groupby("task").size().to_dict() == {
        "pointwise": 3000,
        "pairwise-right": 2802,
        "pairwise-left": 2802,
    }
    assert annotations.groupby("task")["participant_id"].nunique().to_dict() == {
        "pointwise": 600,
        "pairwise-right": 468,
        "pairwise-left": 468,
    }
    per_participant = annotations.groupby(["task", "participant_id"]).size()
    assert set(per_participant.loc["pointwise"]) == {5} and set(per_participant.loc["pairwise-right"]) == {4, 6}


def test_the_revoked_consents_are_counted_and_left_out_of_the_affiliation_rows(annotations, human_dir):
    revoked = annotations[annotations["affiliation"] == CONSENT_REVOKED]
    assert len(revoked) == 42 and revoked["participant_id"].nunique() == 7
    assert set(revoked["task"]) == {"pairwise-right"} and set(revoked["source"]) == {"pairwise_right_framed.csv"}
    from argassets.political.human_studies import read_pairwise_study

    pairwise = read_pairwise_study(human_dir)
    task = pairwise_task(annotations, list(pairwise.items["meta_id"]), pairwise.pairs, "right")
    kept, labels, participants = kept_annotations(task)
    assert (labels, participants) == (42, 7) and len(kept) == 2802 - 42
    assert CONSENT_REVOKED not in set(kept["affiliation"])
    # the paper's figures keep the labels: the study's votes still hold 3 per pair and framing
    assert len(pairwise.votes) == 2 * 934 * 3


def _copy(human_dir, tmp_path):
    target = tmp_path / "human"
    shutil.copytree(human_dir, target)
    return target


def test_an_unknown_participant_is_named_with_file_and_row(human_dir, tmp_path):
    target = _copy(human_dir, tmp_path)
    merged = pd.read_csv(target / "pointwise_results_merged.csv")
    merged.loc[3, "a2_id"] = "000000000000000000000000"
    merged.to_csv(target / "pointwise_results_merged.csv", index=False)
    with pytest.raises(
        ValueError,
        match=r"pointwise_results_merged.csv: data row 3 \(line 5\), item '\w+': a2_id '0{24}' is an unknown participant",
    ):
        read_annotations(target)


def test_a_label_outside_the_allowed_values_is_named_with_file_row_and_participant(human_dir, tmp_path):
    target = _copy(human_dir, tmp_path)
    votes = pd.read_csv(target / "pairwise_left_framed.csv")
    votes.loc[7, "label"] = 3
    votes.to_csv(target / "pairwise_left_framed.csv", index=False)
    who = votes.loc[7, "participant_id"]
    with pytest.raises(ValueError, match=rf"data row 7 \(line 9\)(, participant '{who}')?: label 3 is not"):
        read_annotations(target)


def test_an_unknown_affiliation_is_named(human_dir, tmp_path):
    target = _copy(human_dir, tmp_path)
    long = pd.read_csv(target / "pointwise_results_long.csv")
    long.loc[10, "political_affiliation_uk"] = "Green"
    long.to_csv(target / "pointwise_results_long.csv", index=False)
    who = long.loc[10, "participant_id"]
    with pytest.raises(
        ValueError,
        match=rf"pointwise_results_long.csv: data row 10 \(line 12\), participant '{who}': political_affiliation_uk 'Green'",
    ):
        read_annotations(target)


def _tiny_task() -> AnnotationTask:
    """Ten pairs of arguments a..e, each labelled by a Left, a Centre and a Right annotator: the Left
    one always says 1, the Right one always 2, the Centre one 1 on the first five pairs."""
    arguments = list("abcde")
    pairs = pd.DataFrame([(a, b) for i, a in enumerate(arguments) for b in arguments[i + 1 :]], columns=["id1", "id2"])
    rows = []
    for k, (first, second) in enumerate(zip(pairs["id1"], pairs["id2"], strict=True)):
        for group, label in (("Left", 1), ("Centre", 1 if k < 5 else 2), ("Right", 2)):
            rows.append(
                {"task": "pairwise-right", "item": f"{first}|{second}", "participant_id": f"{group}{k}", "label": label,
                 "affiliation": group, "source": "tiny.csv", "row": len(rows)}
            )  # fmt: skip
    rows.append({**rows[0], "participant_id": "gone", "affiliation": CONSENT_REVOKED, "label": 0, "row": len(rows)})
    return pairwise_task(pd.DataFrame(rows), arguments, pairs, "right")


def test_agreement_by_group_on_a_tiny_example():
    """A system that ranks every first argument higher (label 1) agrees with all Left labels, half
    the Centre ones and no Right one; the revoked participant's label counts nowhere."""
    task = _tiny_task()
    system = [[90], [70], [50], [30], [10]]  # a > b > c > d > e: every pair's first is more right-wing
    table = affiliation_table(task, {"ranked": ("model", system)}, n_resamples=200).set_index(
        ["system", "measure", "group"]
    )
    assert table.loc[("ranked", "agreement", "Left"), "estimate"] == 1.0
    assert table.loc[("ranked", "agreement", "Centre"), "estimate"] == 0.5
    assert table.loc[("ranked", "agreement", "Right"), "estimate"] == 0.0
    assert table.loc[("ranked", "difference", "Left-Right"), "estimate"] == 1.0
    assert table.loc[("ranked", "agreement", "Left"), "n_rows"] == 10  # the revoked label is not among them
    # the groups against each other: Left and Right never agree, Left and Centre on half the pairs
    assert table.loc[("human:Right", "agreement", "Left"), "estimate"] == 0.0
    assert table.loc[("human:Centre", "agreement", "Left"), "estimate"] == 0.5
    assert np.isnan(table.loc[("human:Right", "difference", "Left-Right"), "p_value"])  # not tested
    assert table.loc[("ranked", "difference", "Left-Right"), "p_value"] < 0.05


def test_an_unknown_adjustment_is_refused():
    with pytest.raises(ValueError, match="adjustment 'bonferroni' is not one of"):
        affiliation_table(_tiny_task(), {}, adjustment="bonferroni")
