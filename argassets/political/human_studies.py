"""The published human studies: pointwise and pairwise study files."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from argassets.political.published import parse_int_list

_ARRAY_SUFFIX = "_political_position_array"

_NA_COUNT_SUFFIX = "_political_position_na_count"

_PROB_NA_SUFFIX = "_political_position_probability_of_na"


def _prefixes(columns: Iterable[str], suffix: str) -> list[str]:
    return sorted(column[: -len(suffix)] for column in columns if column.endswith(suffix))


def _read_csv(path: Path, required: Sequence[str]) -> pd.DataFrame:
    if not path.exists():
        raise FileNotFoundError(f"{path}: not found")
    frame = pd.read_csv(path)
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")
    return frame


@dataclass(frozen=True)
class PointwiseStudy:
    """The pointwise study: items with human labels, and the published probabilities of NA.

    ``items``: ``meta_id``, ``proposition``, ``locution``, ``a1_label``..``a3_label``,
    ``judgements_maj``, ``n_type``, in file order. ``published``: ``prefix``, ``meta_id``,
    ``prob_na`` (one row per published model or ensemble and item).
    """

    items: pd.DataFrame
    published: pd.DataFrame

    @property
    def prefixes(self) -> list[str]:
        return sorted(self.published["prefix"].unique())


def read_pointwise_study(human_dir: str | Path) -> PointwiseStudy:
    """Read ``pointwise_sample_1000.csv`` and ``pointwise_results_merged.csv``.

    Raises
    ------
    ValueError
        Missing columns, labels other than 0/1, a majority that disagrees with the three labels,
        an ``n_type`` outside low/mid/high, or items of one file missing from the other (the
        message names the file and the item).
    """
    human_dir = Path(human_dir)
    sample_path = human_dir / "pointwise_sample_1000.csv"
    merged_path = human_dir / "pointwise_results_merged.csv"
    sample = _read_csv(sample_path, ["META_id", "Proposition", "Locution"])
    labels = ["a1_label", "a2_label", "a3_label"]
    merged = _read_csv(merged_path, ["meta_id", *labels, "judgements_maj", "n_type"])
    sample = sample.rename(columns={"META_id": "meta_id", "Proposition": "proposition", "Locution": "locution"})
    for frame, path in ((sample, sample_path), (merged, merged_path)):
        duplicated = frame["meta_id"][frame["meta_id"].duplicated()]
        if len(duplicated):
            raise ValueError(f"{path}: meta_id {duplicated.iloc[0]!r} occurs twice")
    for column in [*labels, "judgements_maj"]:
        bad = merged[~merged[column].isin([0, 1])]
        if len(bad):
            raise ValueError(f"{merged_path}: item {bad['meta_id'].iloc[0]!r}: {column} must be 0 or 1")
    majority = (merged[labels].sum(axis=1) >= 2).astype(int)
    wrong = merged[majority != merged["judgements_maj"]]
    if len(wrong):
        raise ValueError(f"{merged_path}: item {wrong['meta_id'].iloc[0]!r}: judgements_maj disagrees with its labels")
    bad_type = merged[~merged["n_type"].isin(["low", "mid", "high"])]
    if len(bad_type):
        raise ValueError(f"{merged_path}: item {bad_type['meta_id'].iloc[0]!r}: n_type {bad_type['n_type'].iloc[0]!r}")
    only_sample = set(sample["meta_id"]) - set(merged["meta_id"])
    only_merged = set(merged["meta_id"]) - set(sample["meta_id"])
    if only_sample or only_merged:
        item = sorted(only_sample or only_merged)[0]
        raise ValueError(f"{sample_path} and {merged_path} disagree on their items (e.g. {item!r})")
    items = merged[["meta_id", *labels, "judgements_maj", "n_type"]].merge(
        sample[["meta_id", "proposition", "locution"]], on="meta_id", how="left"
    )
    items = items[["meta_id", "proposition", "locution", *labels, "judgements_maj", "n_type"]]
    rows = []
    for prefix in _prefixes(merged.columns, _PROB_NA_SUFFIX):
        values = merged[prefix + _PROB_NA_SUFFIX].astype(float)
        if ((values < 0) | (values > 1)).any():
            raise ValueError(f"{merged_path}: {prefix}{_PROB_NA_SUFFIX} outside [0, 1]")
        rows.append(pd.DataFrame({"prefix": prefix, "meta_id": merged["meta_id"], "prob_na": values}))
    published = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["prefix", "meta_id", "prob_na"])
    return PointwiseStudy(items=items.reset_index(drop=True), published=published)


@dataclass(frozen=True)
class PairwiseStudy:
    """The pairwise study.

    ``items``: ``meta_id``, ``bin`` (the study's E3 decile label, e.g. ``10-20``), ``bin_index``
    (0-9), ``prediction_index`` (= published ``nodeID``), ``uuid``, ``speaker``, ``locution``,
    ``proposition``, ``illocutionary_force``, ``locution_date``, in file order.
    ``pairs``: ``id1``, ``id2``, ``cat1``, ``cat2`` in file order (934 rows).
    ``votes``: ``framing`` (``left``/``right``), ``meta_id1``, ``meta_id2``, ``label`` (0, 1, 2).
    ``published``: ``prefix``, ``meta_id``, ``scores`` (list of int), ``na_count``.
    """

    items: pd.DataFrame
    pairs: pd.DataFrame
    votes: pd.DataFrame
    published: pd.DataFrame

    @property
    def prefixes(self) -> list[str]:
        return sorted(self.published["prefix"].unique())


_BIN_LABEL = re.compile(r"^(\d+)-(\d+)$")


def _pairwise_items(sample: pd.DataFrame, item_columns: list[str], sample_path: Path) -> pd.DataFrame:
    """The 100 items, with the decile of each as ``bin_index``."""
    items = sample[item_columns].copy()
    bin_index = []
    for meta_id, label in zip(items["meta_id"], items["bin"], strict=True):
        match = _BIN_LABEL.match(str(label))
        if not match or int(match.group(2)) - int(match.group(1)) != 10:
            raise ValueError(f"{sample_path}: item {meta_id!r}: bin {label!r} is not a decile like '10-20'")
        bin_index.append(int(match.group(1)) // 10)
    items.insert(2, "bin_index", bin_index)
    return items


def _check_pairs(pairs: pd.DataFrame, known: set[str], pairs_path: Path, sample_path: Path) -> None:
    """Every pair names two different known items, and no unordered pair occurs twice."""
    for column in ("id1", "id2"):
        unknown = pairs[~pairs[column].isin(known)]
        if len(unknown):
            raise ValueError(f"{pairs_path}: {column} {unknown[column].iloc[0]!r} is not an item of {sample_path.name}")
    self_pairs = pairs[pairs["id1"] == pairs["id2"]]
    if len(self_pairs):
        raise ValueError(f"{pairs_path}: pair of {self_pairs['id1'].iloc[0]!r} with itself")
    unordered = [tuple(sorted(p)) for p in zip(pairs["id1"], pairs["id2"], strict=True)]
    if len(set(unordered)) != len(unordered):
        seen: set[tuple[str, str]] = set()
        for pair in unordered:
            if pair in seen:
                raise ValueError(f"{pairs_path}: pair {pair} occurs twice")
            seen.add(pair)


def _framing_votes(
    human_dir: Path, framing: str, pair_set: set[tuple[str, str]], votes_per_framing: int, pairs_path: Path
) -> pd.DataFrame:
    """The votes of one framing (``left`` or ``right``), each pair with exactly ``votes_per_framing``."""
    path = human_dir / f"pairwise_{framing}_framed.csv"
    votes = _read_csv(path, ["meta_id1", "meta_id2", "label"])
    bad = votes[~votes["label"].isin([0, 1, 2])]
    if len(bad):
        row = int(bad.index[0]) + 1  # data rows count from 1 (the first row after the header), as Study A's do
        raise ValueError(f"{path}: data row {row}: label {bad['label'].iloc[0]} is not 0, 1 or 2")
    keys = list(zip(votes["meta_id1"], votes["meta_id2"], strict=True))
    outside = [k for k in keys if k not in pair_set]
    if outside:
        raise ValueError(f"{path}: votes for pair {outside[0]} which is not one of {pairs_path.name} (in that order)")
    counts = pd.Series(keys).value_counts()
    missing = [p for p in pair_set if counts.get(p, 0) != votes_per_framing]
    if missing:
        raise ValueError(
            f"{path}: pair {sorted(missing)[0]} has {counts.get(sorted(missing)[0], 0)} votes, "
            f"expected {votes_per_framing}"
        )
    return votes[["meta_id1", "meta_id2", "label"]].assign(framing=framing)


def _published_scores(sample: pd.DataFrame, sample_path: Path) -> pd.DataFrame:
    """The published score arrays of every item, per model prefix."""
    rows = []
    for prefix in _prefixes(sample.columns, _ARRAY_SUFFIX):
        na_column = prefix + _NA_COUNT_SUFFIX
        if na_column not in sample.columns:
            raise ValueError(f"{sample_path}: {prefix}{_ARRAY_SUFFIX} has no {na_column}")
        for meta_id, text, na in zip(sample["meta_id"], sample[prefix + _ARRAY_SUFFIX], sample[na_column], strict=True):
            rows.append((prefix, meta_id, parse_int_list(text, f"{sample_path}: item {meta_id!r}, {prefix}"), int(na)))
    return pd.DataFrame(rows, columns=["prefix", "meta_id", "scores", "na_count"])


def read_pairwise_study(human_dir: str | Path, votes_per_framing: int = 3) -> PairwiseStudy:
    """Read the pairwise study files and check them against each other.

    Raises
    ------
    ValueError
        Missing columns; a pair or a vote naming an item outside the 100; a repeated pair; a label
        outside {0, 1, 2}; a pair without exactly ``votes_per_framing`` votes in a framing; votes
        for pairs outside the 934; a malformed score array (the message names file and item).
    """
    human_dir = Path(human_dir)
    sample_path = human_dir / "pairwise_sample_100.csv"
    pairs_path = human_dir / "pairwise_pairs_934.csv"
    item_columns = [
        "meta_id",
        "bin",
        "prediction_index",
        "uuid",
        "speaker",
        "locution",
        "proposition",
        "illocutionary_force",
        "locution_date",
    ]
    sample = _read_csv(sample_path, item_columns)
    pairs = _read_csv(pairs_path, ["id1", "id2", "cat1", "cat2"])
    duplicated = sample["meta_id"][sample["meta_id"].duplicated()]
    if len(duplicated):
        raise ValueError(f"{sample_path}: meta_id {duplicated.iloc[0]!r} occurs twice")
    items = _pairwise_items(sample, item_columns, sample_path)
    _check_pairs(pairs, set(items["meta_id"]), pairs_path, sample_path)
    pair_set = set(zip(pairs["id1"], pairs["id2"], strict=True))
    frames = [
        _framing_votes(human_dir, framing, pair_set, votes_per_framing, pairs_path) for framing in ("left", "right")
    ]
    votes = pd.concat(frames, ignore_index=True)[["framing", "meta_id1", "meta_id2", "label"]]
    published = _published_scores(sample, sample_path)
    return PairwiseStudy(
        items=items.reset_index(drop=True),
        pairs=pairs[["id1", "id2", "cat1", "cat2"]],
        votes=votes,
        published=published,
    )


#: The tasks of the human studies, each with its file(s) and allowed labels.
ANNOTATION_TASKS: dict[str, tuple[int, ...]] = {
    "pointwise": (0, 1),
    "pairwise-right": (0, 1, 2),
    "pairwise-left": (0, 1, 2),
}

#: The stated political affiliations of the participants, and the mark of a revoked consent.
AFFILIATIONS = ("Left", "Centre", "Right")
CONSENT_REVOKED = "CONSENT_REVOKED"

ANNOTATION_COLUMNS = ["task", "item", "item1", "item2", "participant_id", "label", "affiliation", "source", "row"]


def _shown(value: object) -> str:
    """A cell as the file has it (a NumPy number without its type name)."""
    return repr(value) if isinstance(value, str) else str(getattr(value, "item", lambda: value)())


def _participant_rows(path: Path, frame: pd.DataFrame, task: str, item: pd.Series) -> pd.DataFrame:
    """One row per label: the participant, the label and the stated affiliation, checked."""
    allowed = ANNOTATION_TASKS[task]
    rows = frame.reset_index(drop=True)
    participant = rows["participant_id"]
    for row in range(len(rows)):
        who = participant.iat[row]
        if not isinstance(who, str) or not who.strip():
            raise ValueError(f"{path}: data row {row} (line {row + 2}): empty participant_id")
        label = rows["label"].iat[row]
        if label not in allowed:
            raise ValueError(
                f"{path}: data row {row} (line {row + 2}), participant {who!r}: label {_shown(label)} is not one of {allowed}"
            )
        stated = rows["political_affiliation_uk"].iat[row]
        if stated not in (*AFFILIATIONS, CONSENT_REVOKED):
            raise ValueError(
                f"{path}: data row {row} (line {row + 2}), participant {who!r}: political_affiliation_uk "
                f"{stated!r} is not one of {(*AFFILIATIONS, CONSENT_REVOKED)}"
            )
    out = pd.DataFrame(
        {
            "task": task,
            "item": item.to_numpy(),
            "participant_id": participant.to_numpy(),
            "label": rows["label"].astype("int64").to_numpy(),
            "affiliation": rows["political_affiliation_uk"].to_numpy(),
            "source": path.name,
            "row": np.arange(len(rows), dtype="int64"),
        }
    )
    _check_participants(out, path)
    return out


def _check_participants(rows: pd.DataFrame, path: Path) -> None:
    """A participant labels an item once and states one affiliation."""
    twice = rows[rows.duplicated(["item", "participant_id"])]
    if len(twice):
        first = twice.iloc[0]
        raise ValueError(
            f"{path}: data row {first['row']} (line {first['row'] + 2}): participant {first['participant_id']!r} "
            f"labels item {first['item']!r} a second time"
        )
    stated = rows.groupby("participant_id")["affiliation"].nunique()
    if (stated > 1).any():
        who = stated[stated > 1].index[0]
        row = rows[rows["participant_id"] == who]["row"].iloc[-1]
        raise ValueError(f"{path}: data row {row} (line {row + 2}): participant {who!r} states two affiliations")


def _merged_annotators(merged: pd.DataFrame) -> pd.DataFrame:
    """The merged file's three annotators per item as rows: ``item``, ``participant_id``, ``label``, ``slot``, ``row``."""
    slots = [
        pd.DataFrame(
            {
                "item": merged["meta_id"].to_numpy(),
                "participant_id": merged[f"a{slot}_id"].to_numpy(),
                "label": merged[f"a{slot}_label"].to_numpy(),
                "slot": slot,
                "row": np.arange(len(merged)),
            }
        )
        for slot in (1, 2, 3)
    ]
    return pd.concat(slots, ignore_index=True)


def _pointwise_annotations(human_dir: Path) -> pd.DataFrame:
    """The pointwise labels of ``pointwise_results_long.csv``, checked against the merged file's
    three annotators of each item (an id there without its row here is an unknown participant)."""
    long_path = human_dir / "pointwise_results_long.csv"
    merged_path = human_dir / "pointwise_results_merged.csv"
    long = _read_csv(long_path, ["meta_id", "label", "participant_id", "political_affiliation_uk"])
    merged = _read_csv(merged_path, ["meta_id", "a1_id", "a2_id", "a3_id", "a1_label", "a2_label", "a3_label"])
    rows = _participant_rows(long_path, long, "pointwise", long["meta_id"].reset_index(drop=True))
    slots = _merged_annotators(merged)
    joined = slots.merge(rows, on=["item", "participant_id"], how="outer", suffixes=("_merged", ""), indicator=True)
    unknown = joined[joined["_merge"] == "left_only"].sort_values("row_merged")
    if len(unknown):
        first = unknown.iloc[0]
        raise ValueError(
            f"{merged_path}: data row {int(first['row_merged'])} (line {int(first['row_merged']) + 2}), item "
            f"{first['item']!r}: a{int(first['slot'])}_id {first['participant_id']!r} is an unknown participant "
            f"(no row of {long_path.name} has this item and participant)"
        )
    extra = joined[joined["_merge"] == "right_only"].sort_values("row")
    if len(extra):
        first = extra.iloc[0]
        raise ValueError(
            f"{long_path}: data row {int(first['row'])} (line {int(first['row']) + 2}), participant "
            f"{first['participant_id']!r}: not one of item {first['item']!r}'s annotators in {merged_path.name}"
        )
    differ = joined[joined["label_merged"] != joined["label"]].sort_values("row")
    if len(differ):
        first = differ.iloc[0]
        raise ValueError(
            f"{long_path}: data row {int(first['row'])} (line {int(first['row']) + 2}), participant "
            f"{first['participant_id']!r}: label {int(first['label'])} differs from a{int(first['slot'])}_label "
            f"{first['label_merged']!r} of item {first['item']!r} in {merged_path.name}"
        )
    return rows.assign(item1=rows["item"], item2=None)


def read_annotations(human_dir: str | Path) -> pd.DataFrame:
    """Every human label with its participant and stated affiliation, for the three tasks.

    Returns :data:`ANNOTATION_COLUMNS`: ``task`` (``pointwise``, ``pairwise-right``,
    ``pairwise-left``), ``item`` (the ``meta_id``, or ``id1|id2`` for a pair in file orientation),
    ``item1``/``item2`` (the pair's arguments; ``item2`` empty for pointwise), ``participant_id``,
    ``label``, ``affiliation`` (``Left``, ``Centre``, ``Right`` or ``CONSENT_REVOKED``), ``source``
    (file name) and ``row`` (0-based data row of that file), so later errors can name both.

    Raises
    ------
    ValueError
        An empty participant id, a label outside the task's values, an affiliation outside the four
        values, a participant labelling an item twice or stating two affiliations, a pointwise
        annotator of the merged file without a row in the long file (an unknown participant) or
        the reverse, and every error of :func:`read_pairwise_study` (pairs outside the 934).
        Each message names the file, the data row and the participant.
    """
    human_dir = Path(human_dir)
    frames = [_pointwise_annotations(human_dir)]
    for framing in ("right", "left"):
        path = human_dir / f"pairwise_{framing}_framed.csv"
        votes = _read_csv(path, ["meta_id1", "meta_id2", "label", "participant_id", "political_affiliation_uk"])
        items = (votes["meta_id1"] + "|" + votes["meta_id2"]).reset_index(drop=True)
        rows = _participant_rows(path, votes, f"pairwise-{framing}", items)
        frames.append(rows.assign(item1=votes["meta_id1"].to_numpy(), item2=votes["meta_id2"].to_numpy()))
    read_pairwise_study(human_dir)  # then the pairs and their vote counts
    return pd.concat(frames, ignore_index=True)[ANNOTATION_COLUMNS]
