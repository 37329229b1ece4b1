"""Checks that input files keep what their releases promise, for every study (docs/operations.md)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "MANIFEST_DIR",
    "ReleaseIncomplete",
    "check_file_manifest",
    "check_node_ids",
    "read_file_manifest",
    "write_file_manifest",
]

#: Where the committed manifests of the releases' files are.
MANIFEST_DIR = Path(__file__).resolve().parents[2] / "data" / "manifests"


class ReleaseIncomplete(ValueError):
    """Input files that do not hold what their release promises; the message names the file."""


def check_node_ids(node_ids: Iterable[int], path: str | os.PathLike[str], expected: range) -> None:
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


def read_file_manifest(path: str | os.PathLike[str]) -> dict[str, tuple[int, str]]:
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


def check_file_manifest(root: str | os.PathLike[str], manifest: str | os.PathLike[str], pattern: str) -> int:
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
