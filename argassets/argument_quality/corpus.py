"""Webis-ArgQuality-20 read from its release folder: arguments and expert comparisons, validated.

Webis-ArgQuality-20: locating, downloading, validating and tidying the published files.

The corpus (Gienapp et al., ACL 2020; Zenodo record 3780049, CC BY 4.0) comes as a processed table
of argument texts with z-normalised quality scores and one raw file of expert pairwise comparisons
per quality dimension. This module turns them into two tidy tables:

- :func:`load_arguments`: one row per (topic, discussion, argument);
- :func:`load_comparisons`: one row per comparison and dimension, with the comparison's topic
  resolved as the one topic both arguments share (the raw files carry no topic) and a stable id
  ``<dimension>-<row>`` (0-based data row of the raw file, 5 digits).

Every problem with the input (missing file or column, malformed value, duplicate key, unknown
argument, a comparison across topics) raises :class:`CorpusError` naming the file and the row, and
nothing is returned half-built.
"""

from __future__ import annotations

import os
import runpy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from argassets.argument_quality.release_facts import (
    WebisCounts,
    check_webis_counts,
    check_webis_pairs,
    comparison_digest,
    webis_counts_for,
)
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.release_manifest import ReleaseIncomplete

#: Folder of the corpus inside a published-data folder.
CORPUS_FOLDER = "webis-argquality20"

ARGUMENTS_FILE = "webis-argquality20-arguments.csv"

DIMENSIONS: tuple[str, ...] = ("logic", "rhetoric", "dialectic")

#: Raw comparison file per dimension.
RAW_FILES: dict[str, str] = {
    "logic": "webis-argquality20-raw-logical.csv",
    "rhetoric": "webis-argquality20-raw-rhetorical.csv",
    "dialectic": "webis-argquality20-raw-dialectical.csv",
}

DIMENSION_ADVERBS: dict[str, str] = {
    "logic": "logically",
    "rhetoric": "rhetorically",
    "dialectic": "dialectically",
}

#: Published score column per table column.
SCORE_COLUMNS: dict[str, str] = {
    "published_logic": "Logical Quality",
    "published_rhetoric": "Rhetorical Quality",
    "published_dialectic": "Dialectical Quality",
    "published_combined": "Combined Quality",
}

LABELS: tuple[str, ...] = ("A", "B", "Tie")

_ARGUMENT_COLUMNS = (
    "Topic ID",
    "Argument ID",
    "Discussion ID",
    "Premise",
    "Relevance",
    "Is Argument?",
    "Rhetorical Quality",
    "Logical Quality",
    "Dialectical Quality",
    "Text Length",
    "Stance",
    "Combined Quality",
)

_COMPARISON_COLUMNS = (
    "Discussion ID A",
    "Argument ID A",
    "Discussion ID B",
    "Argument ID B",
    "Comparison",
)


class CorpusError(ValueError):
    """Input that cannot be used; the message names the file and, where it applies, the row."""


@dataclass(frozen=True)
class WebisFiles:
    """Where the corpus files are."""

    arguments: Path
    comparisons: Mapping[str, Path]

    def all(self) -> list[Path]:
        return [self.arguments, *(self.comparisons[d] for d in DIMENSIONS)]


def _row(path: Path, index: int) -> str:
    """``file, row i (line n)``: ``i`` is the 0-based data row, ``n`` the 1-based line in the file."""
    return f"{path}: row {index} (line {index + 2})"


def ensure_sample_corpus() -> Path:
    """The embedded sample folder, its CSV files written by ``make_sample.py`` on first use.

    Only the generator is tracked: the files carry the published release's names (the loader reads
    that layout), and files of those names in the repository would pass for copies of the corpus.
    """
    corpus = SAMPLE_DATA_DIR / CORPUS_FOLDER
    if not ((corpus / "full" / ARGUMENTS_FILE).is_file() and (corpus / "MANIFEST.json").is_file()):
        runpy.run_path(str(SAMPLE_DATA_DIR / "make_sample.py"), run_name="__main__")
    return SAMPLE_DATA_DIR


def locate_corpus(folder: str | os.PathLike[str]) -> WebisFiles:
    """The corpus files below ``folder`` in the published layout.

    ``folder`` may be a published-data folder (holding ``webis-argquality20/``) or the corpus folder
    itself (holding ``full/`` and ``raw/``).

    Raises
    ------
    CorpusError
        When a file is missing; the message names the path.
    """
    root = Path(folder)
    if (root / CORPUS_FOLDER).is_dir():
        root = root / CORPUS_FOLDER
    files = WebisFiles(
        arguments=root / "full" / ARGUMENTS_FILE,
        comparisons={dim: root / "raw" / name for dim, name in RAW_FILES.items()},
    )
    for path in files.all():
        if not path.is_file():
            raise CorpusError(f"{path}: file not found (corpus folder {root})")
    return files


def find_corpus_files(*roots: str | os.PathLike[str]) -> WebisFiles:
    """The corpus files anywhere below ``roots`` (unpacked release files of unknown layout).

    Raises
    ------
    CorpusError
        When a file is missing or found twice.
    """
    folders = [Path(root) for root in roots]
    where = ", ".join(str(f) for f in folders)
    wanted = {"arguments": ARGUMENTS_FILE, **RAW_FILES}
    found: dict[str, Path] = {}
    for role, name in wanted.items():
        hits = sorted(p for root in folders for p in root.rglob(name) if p.is_file() and "__MACOSX" not in p.parts)
        if not hits:
            raise CorpusError(f"{where}: the release holds no file named '{name}'")
        if len(hits) > 1:
            raise CorpusError(f"{where}: the release holds '{name}' twice: {hits[0]} and {hits[1]}")
        found[role] = hits[0]
    return WebisFiles(arguments=found["arguments"], comparisons={d: found[d] for d in DIMENSIONS})


def _read_csv(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    if not path.is_file():
        raise CorpusError(f"{path}: file not found")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: not a readable CSV file: {exc}") from None
    except pd.errors.EmptyDataError:
        raise CorpusError(f"{path}: the file is empty") from None
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise CorpusError(
            f"{path}: missing column(s) {', '.join(repr(c) for c in missing)} "
            f"(found: {', '.join(repr(c) for c in frame.columns)})"
        )
    return frame


def _int_column(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    values = pd.to_numeric(frame[column].str.strip(), errors="coerce")
    bad = values.isna() | (values != values.round())
    if bad.any():
        index = int(np.flatnonzero(bad.to_numpy())[0])
        raise CorpusError(
            f"{_row(path, index)}: column '{column}' must be an integer, got {frame[column].iat[index]!r}"
        )
    return values.astype("int64").to_numpy()


def _float_column(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    values = pd.to_numeric(frame[column].str.strip(), errors="coerce")
    bad = values.isna()
    if bad.any():
        index = int(np.flatnonzero(bad.to_numpy())[0])
        raise CorpusError(f"{_row(path, index)}: column '{column}' must be a number, got {frame[column].iat[index]!r}")
    return values.astype("float64").to_numpy()


_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def _bool_column(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    lowered = frame[column].str.strip().str.lower()
    bad = ~lowered.isin(_TRUE | _FALSE)
    if bad.any():
        index = int(np.flatnonzero(bad.to_numpy())[0])
        raise CorpusError(
            f"{_row(path, index)}: column '{column}' must be True or False, got {frame[column].iat[index]!r}"
        )
    return lowered.isin(_TRUE).to_numpy()


def text_length(text: str) -> int:
    """The release's ``Text Length`` of a text: its words, separated by single spaces (all 1,610 texts)."""
    return len(text.split(" "))


def _check_text_lengths(table: pd.DataFrame, path: Path) -> None:
    """Every text has the length its row records, so a replaced or cut text cannot pass."""
    counted = table["text"].map(text_length).to_numpy()
    wrong = counted != table["text_length"].to_numpy()
    if wrong.any():
        index = int(np.flatnonzero(wrong)[0])
        raise CorpusError(
            f"{_row(path, index)}: column 'Text Length' is {int(table['text_length'].iat[index]):,} but the "
            f"text ('Premise', {len(table['text'].iat[index]):,} characters) has {int(counted[index]):,} words "
            f"({int(wrong.sum())} row(s) differ)"
        )


def load_arguments(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The processed argument table as the tidy ``webis_arguments`` table.

    Parameters
    ----------
    path
        ``webis-argquality20-arguments.csv``.

    Returns
    -------
    pandas.DataFrame
        Columns ``topic_id, discussion_id, argument_id, text, is_argument, relevance, stance,
        text_length, published_logic, published_rhetoric, published_dialectic,
        published_combined``, sorted by key; scores as published (-4.0 for non-argumentative texts,
        -3.0 for the placeholder).

    Raises
    ------
    CorpusError
        Missing file or column, a malformed value, an empty text, a text whose word count is not
        its ``Text Length``, or a duplicate (topic, discussion, argument) key; the message names
        the file and row.
    """
    path = Path(path)
    raw = _read_csv(path, _ARGUMENT_COLUMNS)
    table = pd.DataFrame(
        {
            "topic_id": _int_column(raw, "Topic ID", path),
            "discussion_id": _int_column(raw, "Discussion ID", path),
            "argument_id": _int_column(raw, "Argument ID", path),
            "text": raw["Premise"].astype(str).to_numpy(),
            "is_argument": _bool_column(raw, "Is Argument?", path),
            "relevance": _float_column(raw, "Relevance", path),
            "stance": _bool_column(raw, "Stance", path),
            "text_length": _int_column(raw, "Text Length", path),
            **{column: _float_column(raw, source, path) for column, source in SCORE_COLUMNS.items()},
        }
    )
    empty = table["text"].str.strip() == ""
    if empty.any():
        index = int(np.flatnonzero(empty.to_numpy())[0])
        raise CorpusError(f"{_row(path, index)}: column 'Premise' is empty")
    _check_text_lengths(table, path)
    key = ["topic_id", "discussion_id", "argument_id"]
    duplicated = table.duplicated(key, keep=False).to_numpy()
    if duplicated.any():
        rows = np.flatnonzero(duplicated)
        first = table.iloc[rows[0]]
        same = [
            int(r)
            for r in rows
            if tuple(table.iloc[r][key]) == (first.topic_id, first.discussion_id, first.argument_id)
        ]
        raise CorpusError(
            f"{_row(path, same[1])}: duplicate argument (Topic ID {first.topic_id}, Discussion ID "
            f"{first.discussion_id}, Argument ID {first.argument_id}), first seen in row {same[0]}"
        )
    return table.sort_values(key, kind="stable").reset_index(drop=True)


def _check_no_duplicate_pairs(path: Path, da: np.ndarray, aa: np.ndarray, db: np.ndarray, ab: np.ndarray) -> None:
    """Each pair of arguments is compared once per dimension in the release, in either order."""
    first_row: dict[frozenset[tuple[int, int]], int] = {}
    for index in range(len(da)):
        pair = frozenset({(int(da[index]), int(aa[index])), (int(db[index]), int(ab[index]))})
        if pair in first_row:
            raise CorpusError(
                f"{_row(path, index)}: duplicate pair (Discussion ID {da[index]}, Argument ID {aa[index]}) vs "
                f"(Discussion ID {db[index]}, Argument ID {ab[index]}), first compared in row {first_row[pair]}"
            )
        first_row[pair] = index


def _comparison_topics(
    path: Path, arguments: pd.DataFrame, side_a: tuple[np.ndarray, np.ndarray], side_b: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The one topic both arguments of each comparison belong to (sides as discussion and argument ids)."""
    topics: dict[tuple[int, int], set[int]] = {}
    for t, d, a in zip(
        arguments["topic_id"].to_numpy(),
        arguments["discussion_id"].to_numpy(),
        arguments["argument_id"].to_numpy(),
        strict=True,
    ):
        topics.setdefault((int(d), int(a)), set()).add(int(t))
    (da, aa), (db, ab) = side_a, side_b
    topic_ids = np.empty(len(da), dtype="int64")
    for index in range(len(da)):
        key_a = (int(da[index]), int(aa[index]))
        key_b = (int(db[index]), int(ab[index]))
        for side, key in (("A", key_a), ("B", key_b)):
            if key not in topics:
                raise CorpusError(
                    f"{_row(path, index)}: unknown argument {side} (Discussion ID {key[0]}, "
                    f"Argument ID {key[1]}): not in the argument table"
                )
        shared = topics[key_a] & topics[key_b]
        if not shared:
            raise CorpusError(
                f"{_row(path, index)}: comparison across topics: argument A (Discussion ID {key_a[0]}, "
                f"Argument ID {key_a[1]}) is in topic(s) {sorted(topics[key_a])}, argument B "
                f"(Discussion ID {key_b[0]}, Argument ID {key_b[1]}) in topic(s) {sorted(topics[key_b])}"
            )
        if len(shared) > 1:
            raise CorpusError(f"{_row(path, index)}: ambiguous topic: both arguments occur in topics {sorted(shared)}")
        topic_ids[index] = next(iter(shared))
    return topic_ids


def _comparison_labels(raw: pd.DataFrame, path: Path) -> pd.Series:
    """The stripped ``Comparison`` column; a label outside {A, B, Tie} is an error naming its row."""
    labels = raw["Comparison"].str.strip()
    bad = ~labels.isin(LABELS)
    if bad.any():
        index = int(np.flatnonzero(bad.to_numpy())[0])
        raise CorpusError(
            f"{_row(path, index)}: column 'Comparison' must be A, B or Tie, got {raw['Comparison'].iat[index]!r}"
        )
    return labels


def load_comparisons(path: str | os.PathLike[str], dimension: str, arguments: pd.DataFrame) -> pd.DataFrame:
    """One raw expert comparison file as rows of the ``webis_expert_comparisons`` table.

    The topic of a comparison is the one topic that both arguments belong to; arguments are keyed
    by (topic, discussion, argument) because four (discussion, argument) keys occur in two topics.

    Parameters
    ----------
    path
        The raw file of one dimension (``webis-argquality20-raw-<dimension>.csv``).
    dimension
        ``logic``, ``rhetoric`` or ``dialectic``.
    arguments
        The ``webis_arguments`` table (see :func:`load_arguments`).

    Returns
    -------
    pandas.DataFrame
        Columns ``comparison_id, dimension, topic_id, discussion_id_a, argument_id_a,
        discussion_id_b, argument_id_b, label, source_row`` in file order.

    Raises
    ------
    CorpusError
        Missing file or column, a label outside {A, B, Tie}, a pair compared twice, an argument not
        in the argument table,
        two arguments without a common topic (a comparison across topics) or with more than one;
        the message names the file and row.
    """
    path = Path(path)
    if dimension not in DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension!r}; expected one of {DIMENSIONS}")
    raw = _read_csv(path, _COMPARISON_COLUMNS)
    da = _int_column(raw, "Discussion ID A", path)
    aa = _int_column(raw, "Argument ID A", path)
    db = _int_column(raw, "Discussion ID B", path)
    ab = _int_column(raw, "Argument ID B", path)
    labels = _comparison_labels(raw, path)
    _check_no_duplicate_pairs(path, da, aa, db, ab)
    topic_ids = _comparison_topics(path, arguments, (da, aa), (db, ab))
    rows = np.arange(len(raw), dtype="int64")
    return pd.DataFrame(
        {
            "comparison_id": [f"{dimension}-{i:05d}" for i in rows],
            "dimension": dimension,
            "topic_id": topic_ids,
            "discussion_id_a": da,
            "argument_id_a": aa,
            "discussion_id_b": db,
            "argument_id_b": ab,
            "label": labels.to_numpy(),
            "source_row": rows,
        }
    )


def _pairs_digest(comparisons: pd.DataFrame) -> str:
    columns = ["discussion_id_a", "argument_id_a", "discussion_id_b", "argument_id_b", "label"]
    return comparison_digest(comparisons[columns].itertuples(index=False, name=None))


def load_corpus(files: WebisFiles, expected: WebisCounts | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both tables, validated together: ``(webis_arguments, webis_expert_comparisons)``.

    The row counts must be what the corpus promises (``expected``, default
    :func:`~argassets.argument_quality.release_facts.webis_counts_for` the corpus folder: the release's
    1,610 texts and 13,952 comparisons per dimension unless the folder states its own), so that a
    file truncated at a line boundary fails, naming the file, instead of shrinking the study; and
    each dimension's pairs and labels must be the release's (its digest), where it gives one.
    """
    try:
        if expected is None:
            expected = webis_counts_for(files.arguments.parent.parent)
    except ReleaseIncomplete as exc:
        raise CorpusError(str(exc)) from None
    arguments = load_arguments(files.arguments)
    try:
        # The texts first: a truncated texts file would otherwise show up as unknown ids elsewhere.
        check_webis_counts(expected, files.arguments, len(arguments), {}, {})
        per_dimension = [load_comparisons(files.comparisons[dim], dim, arguments) for dim in DIMENSIONS]
        check_webis_counts(
            expected,
            files.arguments,
            None,
            {d: files.comparisons[d] for d in DIMENSIONS},
            {d: len(frame) for d, frame in zip(DIMENSIONS, per_dimension, strict=True)},
        )
        check_webis_pairs(
            expected,
            {d: files.comparisons[d] for d in DIMENSIONS},
            {d: _pairs_digest(frame) for d, frame in zip(DIMENSIONS, per_dimension, strict=True)},
        )
    except ReleaseIncomplete as exc:
        raise CorpusError(str(exc)) from None
    comparisons = pd.concat(per_dimension, ignore_index=True)
    return arguments, comparisons
