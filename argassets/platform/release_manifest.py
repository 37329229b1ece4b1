"""What the published releases promise, and checks that the files at hand keep that promise.

A file truncated at a line boundary still parses; a missing nodeset file leaves a smaller corpus
that still builds. Both would silently change every result downstream. The checks here compare the
inputs with what their releases promise, and fail naming the file, before anything is written:

- **Webis-ArgQuality-20**: 1,610 texts, 13,952 expert comparisons per dimension, and per dimension
  a digest of its pairs and labels in file order (:data:`WEBIS_RELEASE`), so that a file with one
  row deleted and another duplicated, or a label changed, fails although its count is right. A
  corpus folder may state its own counts in a ``MANIFEST.json`` beside its files (the invented
  sample of ``data/sample`` does; it has no digest); otherwise the release's apply.
- **Political predictions** (``political/predictions/*.tsv``, the paper's format): one row per
  ``nodeID`` 0..23,299, none missing (:data:`PUBLISHED_NODE_IDS`); the ensembles hold 23,228 rows
  of that range (:data:`PUBLISHED_ENSEMBLE_ROWS`).
- **QT30**: every nodeset file of the release, with its size and SHA-256, listed once in
  ``data/manifests/qt30-nodesets.tsv`` (generated from the release with :func:`write_file_manifest`;
  names, sizes and checksums only, no data).

Plain functions; no Dagster.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "MANIFEST_DIR",
    "PUBLISHED_ENSEMBLE_ROWS",
    "PUBLISHED_NODE_IDS",
    "QT30_MANIFEST",
    "ReleaseIncomplete",
    "WEBIS_RELEASE",
    "WebisCounts",
    "check_file_manifest",
    "check_node_ids",
    "check_webis_counts",
    "check_webis_pairs",
    "comparison_digest",
    "read_file_manifest",
    "webis_counts_for",
    "write_file_manifest",
]

MANIFEST_DIR = Path(__file__).resolve().parents[2] / "data" / "manifests"
#: The QT30 nodeset files of the release (relative path, bytes, SHA-256), one per line.
QT30_MANIFEST = MANIFEST_DIR / "qt30-nodesets.tsv"
#: The name of a corpus folder's own statement of its counts (see :func:`webis_counts_for`).
WEBIS_FOLDER_MANIFEST = "MANIFEST.json"
#: ``nodeID`` values of every published per-model prediction file: the paper's KB, 23,300 rows.
PUBLISHED_NODE_IDS = range(23_300)
#: Rows of each published ensemble file (E2, E3): 72 of the 23,300 nodeIDs are absent.
PUBLISHED_ENSEMBLE_ROWS = 23_228


class ReleaseIncomplete(ValueError):
    """Input files that do not hold what their release promises; the message names the file."""


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


def check_node_ids(node_ids: Iterable[int], path: str | os.PathLike[str], expected: range = PUBLISHED_NODE_IDS) -> None:
    """Fail, naming the file and the first missing or foreign ids, unless ``node_ids`` is exactly ``expected``."""
    have = set(int(i) for i in node_ids)
    want = set(expected)
    missing = sorted(want - have)
    extra = sorted(have - want)
    if not missing and not extra:
        return
    parts = [
        f"{path}: {len(have):,} rows, the release holds nodeID {expected.start}..{expected.stop - 1:,} "
        f"({len(want):,} rows) without gaps"
    ]
    if missing:
        parts.append(f"{len(missing):,} missing (first: {', '.join(map(str, missing[:5]))})")
    if extra:
        parts.append(f"{len(extra):,} outside that range (first: {', '.join(map(str, extra[:5]))})")
    raise ReleaseIncomplete("; ".join(parts))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_file_manifest(root: str | os.PathLike[str], pattern: str, target: str | os.PathLike[str]) -> int:
    """Write ``relative path \\t bytes \\t sha256`` of every file matching ``pattern`` below ``root``.

    Run once on a release to produce a committed manifest; returns the number of files listed.
    """
    root = Path(root)
    files = sorted(p for p in root.rglob(pattern) if p.is_file())
    lines = ["# path\tbytes\tsha256"]
    lines += [f"{p.relative_to(root).as_posix()}\t{p.stat().st_size}\t{_sha256(p)}" for p in files]
    Path(target).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(files)


def read_file_manifest(path: str | os.PathLike[str] = QT30_MANIFEST) -> dict[str, tuple[int, str]]:
    """``{relative path: (bytes, sha256)}`` from a manifest written by :func:`write_file_manifest`."""
    entries: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise ValueError(f"{path}: line {number}: expected path, bytes and sha256")
        entries[fields[0]] = (int(fields[1]), fields[2])
    return entries


def check_file_manifest(
    root: str | os.PathLike[str], manifest: str | os.PathLike[str] = QT30_MANIFEST, pattern: str = "nodeset*.json"
) -> int:
    """Fail, naming the files, unless every file of ``manifest`` is below ``root`` with its size and checksum.

    Files matching ``pattern`` that the manifest does not list are errors too (a corpus that is not
    the release). Returns the number of files checked.
    """
    root = Path(root)
    entries = read_file_manifest(manifest)
    present = {p.relative_to(root).as_posix(): p for p in root.rglob(pattern) if p.is_file()}
    problems = []
    for relative, (size, sha) in entries.items():
        path = present.get(relative)
        if path is None:
            problems.append(f"{root / relative}: missing")
            continue
        actual = path.stat().st_size
        if actual != size:
            problems.append(f"{path}: {actual:,} bytes, the release's file has {size:,} (truncated or changed)")
        elif _sha256(path) != sha:
            problems.append(f"{path}: SHA-256 differs from the release's file (changed)")
    for relative in sorted(set(present) - set(entries)):
        problems.append(f"{present[relative]}: not a file of the release")
    if problems:
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        raise ReleaseIncomplete(
            f"{root}: does not match the release manifest {manifest} ({len(entries):,} files):\n" + "\n".join(shown)
        )
    return len(entries)
