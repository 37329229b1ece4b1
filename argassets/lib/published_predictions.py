"""The published political-position data: per-model prediction files and the human study files.

Two sources, both from "Validating Political Position Predictions of Arguments" (MIT):

- ``political/predictions/<model>.tsv``: one row per argument of the paper's knowledge base,
  columns ``nodeID``, ``array_of_pol_pos`` (the valid scores), ``mean``, ``var``, ``std``,
  ``NA_count``, ``prob_of_NA``. The header separates its names with a tab *and* spaces
  (``nodeID \\t array_of_pol_pos \\t ...``); so do the rows. :func:`read_published_tsv` reads it.
- ``political/human/``: the pointwise study (``pointwise_sample_1000.csv`` with the texts,
  ``pointwise_results_merged.csv`` with three labels per item and every published model's and
  ensemble's probability of NA) and the pairwise study (``pairwise_sample_100.csv`` with the texts
  and every published model's and ensemble's 5-repetition score arrays, ``pairwise_pairs_934.csv``,
  ``pairwise_{left,right}_framed.csv`` with three human labels per pair and framing).

How published ``nodeID`` values relate to this platform's knowledge base
------------------------------------------------------------------------
``nodeID`` is a 0-based row index into the paper's own KB export (23,300 rows in every file;
``uuid`` in ``pairwise_sample_100.csv`` is an index into a 23,228-row variant: it trails
``prediction_index`` by 0-72). ``prediction_index`` in ``pairwise_sample_100.csv`` equals
``nodeID`` (verified: all 100 rows of all six files reproduce the sample's arrays and NA counts).
The order of the paper's KB cannot be rebuilt from QT30: on the 100 sample items whose text we
know, the index rises with the nodeset number for indices up to about 14,300 and then starts a
second pass over the same nodesets in an unrelated order, and even within one nodeset it does not
follow node order (see ``docs/political.md``). So published rows are **not** mapped to KB
arguments by position. They keep their own key, ``paper:<nodeID>`` (:func:`published_argument_id`),
and are joined to the study items through ``prediction_index``; the platform's own predictions are
joined to the study items through the argument text (:func:`match_study_items`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "PUBLISHED_ID_PREFIX",
    "PUBLISHED_TSV_COLUMNS",
    "PUBLISHED_TSV_STUDY_PREFIX",
    "PairwiseStudy",
    "PointwiseStudy",
    "match_study_items",
    "normalise_text",
    "published_argument_id",
    "published_tsv_to_predictions",
    "read_pairwise_study",
    "read_pointwise_study",
    "read_published_tsv",
]

PUBLISHED_TSV_COLUMNS = ("nodeID", "array_of_pol_pos", "mean", "var", "std", "NA_count", "prob_of_NA")
#: Key of a published prediction row: the paper's KB index, never confused with our argument ids.
PUBLISHED_ID_PREFIX = "paper:"
#: The six published TSV files and the column prefix of the same model in the study files.
PUBLISHED_TSV_STUDY_PREFIX: dict[str, str] = {
    "claude_35_haiku": "claude_3_5_haiku_2024102",
    "deepseek_r1": "deepseek_r1",
    "gpt4o": "gpt_4o_2024_08_06",
    "llama32_3b": "llama3_2_3b",
    "llama33_70b": "llama_3_3_70b_instruct",
    "mistral_7b": "mistral_7b",
}

_ARRAY_SUFFIX = "_political_position_array"
_NA_COUNT_SUFFIX = "_political_position_na_count"
_PROB_NA_SUFFIX = "_political_position_probability_of_na"


def published_argument_id(node_id: int) -> str:
    """The key of a published prediction row (``paper:<nodeID>``)."""
    return f"{PUBLISHED_ID_PREFIX}{int(node_id)}"


def _parse_int_list(text: str, where: str) -> list[int]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: not a JSON list of integers: {str(text)[:60]!r}") from None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"{where}: not a JSON list of integers: {str(text)[:60]!r}")
    return value


def read_published_tsv(path: str | Path) -> pd.DataFrame:
    """Read one published per-model prediction file.

    Parameters
    ----------
    path
        A ``political/predictions/*.tsv`` file (fields separated by a tab with optional spaces
        around it, in the header too).

    Returns
    -------
    pandas.DataFrame
        ``node_id`` (int), ``scores`` (list of int, as published, out-of-range values included),
        ``mean``, ``var``, ``std`` (float, NaN when no score), ``na_count`` (int), ``prob_na``
        (float), sorted by ``node_id``.

    Raises
    ------
    ValueError
        A missing column, a malformed row, a repeated ``nodeID``; the message names the file and
        the line.
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise ValueError(f"{path}: empty file")
    header = [name.strip() for name in lines[0].split("\t")]
    if tuple(header) != PUBLISHED_TSV_COLUMNS:
        raise ValueError(f"{path}: line 1: expected columns {list(PUBLISHED_TSV_COLUMNS)}, found {header}")
    rows = []
    seen: set[int] = set()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) != len(PUBLISHED_TSV_COLUMNS):
            raise ValueError(f"{where}: expected {len(PUBLISHED_TSV_COLUMNS)} fields, found {len(fields)}")
        try:
            node_id = int(fields[0])
            mean, var, std = (float(fields[i]) for i in (2, 3, 4))
            na_count = int(fields[5])
            prob_na = float(fields[6])
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if node_id in seen:
            raise ValueError(f"{where}: nodeID {node_id} occurs twice")
        seen.add(node_id)
        scores = _parse_int_list(fields[1], where)
        if na_count < 0:
            raise ValueError(f"{where}: negative NA_count {na_count}")
        rows.append((node_id, scores, mean, var, std, na_count, prob_na))
    frame = pd.DataFrame(rows, columns=["node_id", "scores", "mean", "var", "std", "na_count", "prob_na"])
    return frame.sort_values("node_id").reset_index(drop=True)


def published_tsv_to_predictions(
    published: pd.DataFrame, judge_model: str, n_repetitions: int = 5
) -> pd.DataFrame:
    """Expand published per-argument rows into one prediction row per repetition.

    The published files keep only the valid scores and the NA count, not the raw answers or their
    order, so each argument becomes: its published scores in array order, then its NA answers, then
    invalid rows up to ``n_repetitions`` when scores + NAs fall short. A published value outside
    0-100 (``mistral_7b.tsv`` has ``-1``) is kept as an **invalid** row whose ``raw_output`` is the
    value, so it is counted and never treated as a score. ``raw_output`` is the published value as
    text (``"45"``, ``"NA"``), or empty for a missing repetition.

    Parameters
    ----------
    published
        :func:`read_published_tsv` output.
    judge_model
        The registry name (partition key).
    n_repetitions
        Repetitions per argument of the protocol.

    Returns
    -------
    pandas.DataFrame
        ``judge_model``, ``argument_id`` (``paper:<nodeID>``), ``published_index``, ``repetition``,
        ``raw_output``, ``score``, ``is_na``, ``is_valid``.

    Raises
    ------
    ValueError
        When an argument has more scores and NAs than ``n_repetitions`` (names the ``nodeID``).
    """
    node_ids: list[int] = []
    repetitions: list[int] = []
    raws: list[str] = []
    scores: list[float] = []
    is_na: list[bool] = []
    is_valid: list[bool] = []
    for node_id, values, na_count in zip(published["node_id"], published["scores"], published["na_count"], strict=True):
        total = len(values) + int(na_count)
        if total > n_repetitions:
            raise ValueError(
                f"published predictions of '{judge_model}': nodeID {node_id} has {len(values)} scores and "
                f"{na_count} NA answers, more than {n_repetitions} repetitions"
            )
        answers: list[tuple[str, float, bool, bool]] = []
        for value in values:
            if 0 <= value <= 100:
                answers.append((str(value), float(value), False, True))
            else:
                answers.append((str(value), np.nan, False, False))
        answers.extend(("NA", np.nan, True, True) for _ in range(int(na_count)))
        answers.extend(("", np.nan, False, False) for _ in range(n_repetitions - total))
        for repetition, (raw, score, na, valid) in enumerate(answers):
            node_ids.append(int(node_id))
            repetitions.append(repetition)
            raws.append(raw)
            scores.append(score)
            is_na.append(na)
            is_valid.append(valid)
    return pd.DataFrame(
        {
            "judge_model": judge_model,
            "argument_id": [published_argument_id(n) for n in node_ids],
            "published_index": pd.array(node_ids, dtype="Int64"),
            "repetition": np.asarray(repetitions, dtype="int64"),
            "raw_output": raws,
            "score": np.asarray(scores, dtype=float),
            "is_na": np.asarray(is_na, dtype=bool),
            "is_valid": np.asarray(is_valid, dtype=bool),
        }
    )


# ----------------------------------------------------------------------------------------------
# Study files


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
    items = sample[item_columns].copy()
    bin_index = []
    for meta_id, label in zip(items["meta_id"], items["bin"], strict=True):
        match = _BIN_LABEL.match(str(label))
        if not match or int(match.group(2)) - int(match.group(1)) != 10:
            raise ValueError(f"{sample_path}: item {meta_id!r}: bin {label!r} is not a decile like '10-20'")
        bin_index.append(int(match.group(1)) // 10)
    items.insert(2, "bin_index", bin_index)
    known = set(items["meta_id"])
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
    pair_set = set(zip(pairs["id1"], pairs["id2"], strict=True))
    frames = []
    for framing in ("left", "right"):
        path = human_dir / f"pairwise_{framing}_framed.csv"
        votes = _read_csv(path, ["meta_id1", "meta_id2", "label"])
        bad = votes[~votes["label"].isin([0, 1, 2])]
        if len(bad):
            row = bad.index[0]
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
        frames.append(votes[["meta_id1", "meta_id2", "label"]].assign(framing=framing))
    votes = pd.concat(frames, ignore_index=True)[["framing", "meta_id1", "meta_id2", "label"]]
    rows = []
    for prefix in _prefixes(sample.columns, _ARRAY_SUFFIX):
        na_column = prefix + _NA_COUNT_SUFFIX
        if na_column not in sample.columns:
            raise ValueError(f"{sample_path}: {prefix}{_ARRAY_SUFFIX} has no {na_column}")
        for meta_id, text, na in zip(sample["meta_id"], sample[prefix + _ARRAY_SUFFIX], sample[na_column], strict=True):
            rows.append((prefix, meta_id, _parse_int_list(text, f"{sample_path}: item {meta_id!r}, {prefix}"), int(na)))
    published = pd.DataFrame(rows, columns=["prefix", "meta_id", "scores", "na_count"])
    return PairwiseStudy(items=items.reset_index(drop=True), pairs=pairs[["id1", "id2", "cat1", "cat2"]], votes=votes, published=published)


# ----------------------------------------------------------------------------------------------
# Study items -> KB arguments, by text

_QUOTES = str.maketrans({c: "'" for c in "\"\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u2032\u2033`\u00b4"})
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"})


def normalise_text(text: object) -> str:
    """The text key used to match study items to KB arguments.

    NFKC (which also turns ``…`` into ``...``), one kind of quote and of dash, whitespace
    collapsed, case folded. Punctuation and words are otherwise kept: it matches the same text
    typed differently, never a different text.
    """
    if not isinstance(text, str):
        return ""
    value = unicodedata.normalize("NFKC", text).translate(_QUOTES).translate(_DASHES)
    return " ".join(value.split()).casefold()


def _strip_speaker(locution: str, speaker: str | None) -> str:
    """Drop a leading ``Speaker :`` that a study file left on its locution."""
    if speaker and isinstance(locution, str):
        match = re.match(rf"^\s*{re.escape(speaker.strip())}\s*:\s*", locution)
        if match:
            return locution[match.end() :]
    return locution


MATCH_COLUMNS = ["study", "meta_id", "argument_id", "match", "n_candidates", "published_index"]


def match_study_items(
    arguments: pd.DataFrame,
    pointwise_items: pd.DataFrame | None = None,
    pairwise_items: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Join the study items to knowledge-base arguments through their text.

    The studies use their own ids (``meta_id``), so an item is matched by its locution and
    proposition, tried in this order (``match`` column):

    1. ``exact``: the same locution and proposition strings;
    2. ``normalised``: equal after :func:`normalise_text`, with a leading ``Speaker :`` removed
       from the study's locution (pairwise items name their speaker);
    3. ``proposition``: the normalised proposition alone, when exactly one KB argument has it;
    4. ``locution``: the normalised locution alone, when exactly one KB argument has it;
    5. ``unmatched``: ``argument_id`` is null and the item is listed as such.

    When several KB arguments carry the same text (QT30 repeats some nodesets), the first by
    ``argument_id`` is taken and ``n_candidates`` says how many there were: they hold the same
    prompt, so the platform's predictions for them agree up to sampling.

    Parameters
    ----------
    arguments
        ``political_kb_arguments`` (``argument_id``, ``locution``, ``proposition``).
    pointwise_items, pairwise_items
        :class:`PointwiseStudy` and :class:`PairwiseStudy` ``items``.

    Returns
    -------
    pandas.DataFrame
        ``study``, ``meta_id``, ``argument_id``, ``match``, ``n_candidates``, ``published_index``
        (pairwise ``prediction_index``, else null), pairwise items first.
    """
    kb = arguments[["argument_id", "locution", "proposition"]].copy()
    kb["argument_id"] = kb["argument_id"].astype(str)
    kb = kb.sort_values("argument_id", kind="stable")
    exact: dict[tuple[str, str], list[str]] = {}
    normal: dict[tuple[str, str], list[str]] = {}
    by_prop: dict[str, list[str]] = {}
    by_loc: dict[str, list[str]] = {}
    for argument_id, locution, proposition in zip(kb["argument_id"], kb["locution"], kb["proposition"], strict=True):
        exact.setdefault((locution, proposition), []).append(argument_id)
        nl, np_ = normalise_text(locution), normalise_text(proposition)
        normal.setdefault((nl, np_), []).append(argument_id)
        by_prop.setdefault(np_, []).append(argument_id)
        by_loc.setdefault(nl, []).append(argument_id)

    def one(locution: str, proposition: str, speaker: str | None) -> tuple[str | None, str, int]:
        found = exact.get((locution, proposition))
        if found:
            return found[0], "exact", len(found)
        nl = normalise_text(_strip_speaker(locution, speaker))
        np_ = normalise_text(proposition)
        found = normal.get((nl, np_))
        if found:
            return found[0], "normalised", len(found)
        found = by_prop.get(np_)
        if np_ and found and len(set(found)) == 1:
            return found[0], "proposition", 1
        found = by_loc.get(nl)
        if nl and found and len(set(found)) == 1:
            return found[0], "locution", 1
        return None, "unmatched", 0

    rows = []
    if pairwise_items is not None:
        for meta_id, locution, proposition, speaker, index in zip(
            pairwise_items["meta_id"],
            pairwise_items["locution"],
            pairwise_items["proposition"],
            pairwise_items["speaker"],
            pairwise_items["prediction_index"],
            strict=True,
        ):
            argument_id, how, n = one(locution, proposition, speaker)
            rows.append(("pairwise", meta_id, argument_id, how, n, int(index)))
    if pointwise_items is not None:
        for meta_id, locution, proposition in zip(
            pointwise_items["meta_id"], pointwise_items["locution"], pointwise_items["proposition"], strict=True
        ):
            argument_id, how, n = one(locution, proposition, None)
            rows.append(("pointwise", meta_id, argument_id, how, n, None))
    out = pd.DataFrame(rows, columns=MATCH_COLUMNS)
    out["n_candidates"] = out["n_candidates"].astype("int64")
    out["published_index"] = pd.array(out["published_index"].tolist(), dtype="Int64")
    return out
