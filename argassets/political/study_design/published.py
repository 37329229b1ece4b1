"""The political paper's two human studies through the design path: as designs, their result
files in the import format, and imported results back as the tables the validation reads.

Re-importing the published studies (:func:`published_pointwise_design` and
:func:`published_results`, then :func:`~argassets.platform.design.exchange.import_results`, then
:func:`pointwise_study_from_import` / :func:`pairwise_study_from_import`) gives the same
``PointwiseStudy`` and ``PairwiseStudy`` as :func:`~argassets.political.human_studies.read_pointwise_study`
and :func:`~argassets.political.human_studies.read_pairwise_study`, when the revoked consents are
kept: the published right-framed file holds 42 votes of 7 participants marked ``CONSENT_REVOKED``,
which the paper's figures (and the readers) count; the import's default drops them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from argassets.platform.design.exchange import ImportedResults
from argassets.platform.design.tasks import StudyDesign, study_tasks, task_id
from argassets.political.human_studies import PairwiseStudy, PointwiseStudy
from argassets.political.study_design.questions import PAIRWISE_QUESTIONS, POLITICAL, argument_text

__all__ = [
    "pairwise_study_from_import",
    "pointwise_study_from_import",
    "published_pairwise_design",
    "published_pointwise_design",
    "published_results",
]

_DEMOGRAPHICS = ["age", "political_affiliation_uk", "sex"]
_LABELS = ["a1_label", "a2_label", "a3_label"]


def _largest_bundle(*paths: Path) -> int:
    """The most judgments one participant gave in any one of the files (the paper's bundle)."""
    return max(int(pd.read_csv(p, usecols=["participant_id"])["participant_id"].value_counts().max()) for p in paths)


def published_pointwise_design(study: PointwiseStudy, human_dir: str | Path) -> StudyDesign:
    """The pointwise study as a design: its 1,000 items, 3 judgments each, the paper's bundle size."""
    texts = {
        m: argument_text(p, loc)
        for m, p, loc in zip(study.items["meta_id"], study.items["proposition"], study.items["locution"], strict=True)
    }
    bundle = _largest_bundle(Path(human_dir) / "pointwise_results_long.csv")
    return StudyDesign("pointwise", (POLITICAL,), study_tasks([POLITICAL], texts), len(_LABELS), bundle)


def published_pairwise_design(study: PairwiseStudy, human_dir: str | Path, votes_per_framing: int = 3) -> StudyDesign:
    """The pairwise study as a design: its 934 pairs in both framings, 3 judgments per framing."""
    items = study.items
    texts = {
        m: argument_text(p, loc)
        for m, p, loc in zip(items["meta_id"], items["proposition"], items["locution"], strict=True)
    }
    pairs = study.pairs.rename(columns={"id1": "item_1", "id2": "item_2"})
    human = Path(human_dir)
    bundle = _largest_bundle(human / "pairwise_left_framed.csv", human / "pairwise_right_framed.csv")
    tasks = study_tasks(PAIRWISE_QUESTIONS, texts, pairs)
    return StudyDesign("pairwise", PAIRWISE_QUESTIONS, tasks, votes_per_framing, bundle)


def published_results(human_dir: str | Path, folder: str | Path) -> dict[str, list[Path]]:
    """The published result files rewritten in the import format (``task_id``, ``participant_id``,
    ``label`` and the demographic columns), row for row; returns the files of each study, the
    pairwise ones in the readers' order (left-framed, then right-framed)."""
    human, out = Path(human_dir), Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    long = pd.read_csv(human / "pointwise_results_long.csv", dtype={"participant_id": str})
    pointwise = pd.DataFrame({"task_id": [task_id(POLITICAL.name, m) for m in long["meta_id"]]})
    pointwise = pd.concat([pointwise, long[["participant_id", "label", *_DEMOGRAPHICS]]], axis=1)
    paths = {"pointwise": [out / "pointwise_results.csv"], "pairwise": []}
    pointwise.to_csv(paths["pointwise"][0], index=False)
    for question in PAIRWISE_QUESTIONS:
        votes = pd.read_csv(human / f"pairwise_{question.name}_framed.csv", dtype={"participant_id": str})
        rows = pd.DataFrame(
            {
                "task_id": [
                    task_id(question.name, a, b) for a, b in zip(votes["meta_id1"], votes["meta_id2"], strict=True)
                ]
            }
        )
        rows = pd.concat([rows, votes[["participant_id", "label", *_DEMOGRAPHICS]]], axis=1)
        path = out / f"pairwise_{question.name}_results.csv"
        rows.to_csv(path, index=False)
        paths["pairwise"].append(path)
    return paths


def pointwise_study_from_import(
    imported: ImportedResults, items: pd.DataFrame, published: pd.DataFrame
) -> PointwiseStudy:
    """Imported pointwise labels as a ``PointwiseStudy``: three labels per item in the order they
    were returned, their majority, and ``items``' ``meta_id``, ``proposition``, ``locution``,
    ``n_type`` (the sampling bucket), in ``items``' order.

    Raises ``ValueError`` naming the first item without exactly three labels (the validation's
    partitions and alpha read ``a1_label``..``a3_label``).
    """
    labels = imported.study_judgments()
    per_item = labels.groupby("item_1", sort=False)["label"].agg(list)
    rows = []
    for meta_id in items["meta_id"]:
        got = per_item.get(meta_id, [])
        if len(got) != len(_LABELS):
            raise ValueError(
                f"item {meta_id!r}: {len(got)} labels after the import, the validation needs {len(_LABELS)}"
            )
        rows.append([int(v) for v in got])
    matrix = np.array(rows, dtype=np.int64).reshape(-1, len(_LABELS))
    out = items[["meta_id", "proposition", "locution"]].reset_index(drop=True).copy()
    for k, column in enumerate(_LABELS):
        out[column] = matrix[:, k]
    out["judgements_maj"] = (matrix.sum(axis=1) >= 2).astype(np.int64)
    out["n_type"] = items["n_type"].to_numpy()
    return PointwiseStudy(items=out, published=published.reset_index(drop=True))


def pairwise_study_from_import(
    imported: ImportedResults, items: pd.DataFrame, pairs: pd.DataFrame, published: pd.DataFrame
) -> PairwiseStudy:
    """Imported pairwise votes as a ``PairwiseStudy``: ``framing`` = the question, the pair as
    shown, the label as an integer, in the order they were returned."""
    votes = imported.study_judgments()
    frame = pd.DataFrame(
        {
            "framing": votes["question"].to_numpy(),
            "meta_id1": votes["item_1"].to_numpy(),
            "meta_id2": votes["item_2"].to_numpy(),
            "label": votes["label"].astype(np.int64).to_numpy(),
        }
    )
    return PairwiseStudy(
        items=items.reset_index(drop=True),
        pairs=pairs[["id1", "id2", "cat1", "cat2"]].reset_index(drop=True),
        votes=frame,
        published=published.reset_index(drop=True),
    )
