"""What the Webis-ArgQuality-20 release holds, and the check that a corpus folder keeps that promise.

A corpus folder may state its own counts in a ``MANIFEST.json`` beside its files (the invented
sample of ``data/sample`` does); otherwise the release's apply. Plain functions; no Dagster.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from argassets.platform.release_manifest import ReleaseIncomplete

__all__ = [
    "WEBIS_RELEASE",
    "WEBIS_TOPIC_IDS",
    "WebisCounts",
    "check_webis_counts",
    "check_webis_pairs",
    "comparison_digest",
    "webis_counts_for",
]

#: The name of a corpus folder's own statement of its counts (see :func:`webis_counts_for`).
WEBIS_FOLDER_MANIFEST = "MANIFEST.json"
#: The release's topics (``Topic ID`` 1..20); a registry scope may name only these.
WEBIS_TOPIC_IDS = range(1, 21)


@dataclass(frozen=True)
class WebisCounts:
    """Rows a Webis-ArgQuality-20 corpus holds: texts, and expert comparisons per dimension."""

    source: str
    texts: int
    comparisons_per_dimension: int
    #: Per dimension, :func:`comparison_digest` of its file; empty: not checked.
    pairs_sha256: Mapping[str, str] = field(default_factory=dict)


#: What the public release holds (Gienapp et al. 2020; Zenodo record 3780049); the digests were
#: computed once from its raw comparison files.
WEBIS_RELEASE = WebisCounts(
    "Webis-ArgQuality-20 release (Zenodo 3780049)",
    1_610,
    13_952,
    {
        "logic": "4a3a76252c621de6d2fd1115d508dc147881989025fae65c1ae84144c46c8d8c",
        "rhetoric": "3b44d0ba77dcb095e802e74ad0abf9499602bbdeb10f6062845e005dc126193f",
        "dialectic": "b4b3cfbd84d8ca455fe5bddb014d768a98c03e6ebdc3ecb8e53161e10e94f4d9",
    },
)


def comparison_digest(rows: Iterable[tuple[int, int, int, int, str]]) -> str:
    """SHA-256 of a comparison file's rows in file order, each ``dA,aA,dB,aB,label`` and a newline
    (discussion and argument ids of A and B as integers, the label stripped)."""
    digest = hashlib.sha256()
    for da, aa, db, ab, label in rows:
        digest.update(f"{int(da)},{int(aa)},{int(db)},{int(ab)},{label}\n".encode())
    return digest.hexdigest()


def check_webis_pairs(expected: WebisCounts, comparison_files: Mapping[str, Path], digests: Mapping[str, str]) -> None:
    """Fail, naming the file, when a dimension's pairs or labels are not the release's (:func:`comparison_digest`)."""
    problems = [
        f"{path}: its pairs and labels are not those of the {expected.source} (SHA-256 {digests.get(dimension)}, "
        f"expected {expected.pairs_sha256[dimension]}): a row changed, deleted, added or duplicated?"
        for dimension, path in comparison_files.items()
        if dimension in expected.pairs_sha256 and digests.get(dimension) != expected.pairs_sha256[dimension]
    ]
    if problems:
        raise ReleaseIncomplete("corpus differs from its release:\n" + "\n".join(problems))


def webis_counts_for(corpus_folder: str | os.PathLike[str]) -> WebisCounts:
    """The counts a corpus folder must hold: its own ``MANIFEST.json`` if it has one, else the release's.

    ``corpus_folder`` is the folder holding ``full/`` and ``raw/``. The manifest is a JSON object
    ``{"source": ..., "texts": N, "comparisons_per_dimension": M}``.
    """
    path = Path(corpus_folder) / WEBIS_FOLDER_MANIFEST
    if not path.is_file():
        return WEBIS_RELEASE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return WebisCounts(str(data["source"]), int(data["texts"]), int(data["comparisons_per_dimension"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise ReleaseIncomplete(f"{path}: not a valid corpus manifest: {exc}") from None


def check_webis_counts(
    expected: WebisCounts,
    arguments_file: Path,
    texts: int | None,
    comparison_files: Mapping[str, Path],
    comparisons: Mapping[str, int],
) -> None:
    """Fail, naming the file, when a table holds fewer or more rows than ``expected`` promises.

    ``texts=None`` skips the texts (checked on their own, before the comparisons are read).
    """
    problems = []
    if texts is not None and texts != expected.texts:
        problems.append(f"{arguments_file}: {texts:,} texts, the {expected.source} holds {expected.texts:,}")
    for dimension, path in comparison_files.items():
        found = comparisons.get(dimension, 0)
        if found != expected.comparisons_per_dimension:
            problems.append(
                f"{path}: {found:,} comparisons, the {expected.source} holds "
                f"{expected.comparisons_per_dimension:,} per dimension"
            )
    if problems:
        raise ReleaseIncomplete("incomplete corpus (truncated or wrong file?):\n" + "\n".join(problems))
