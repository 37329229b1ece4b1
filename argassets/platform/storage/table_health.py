"""Damaged table files found by name, so that one bad file never hides the other tables.

A Parquet file can be cut short (a full disk, a copy interrupted) or have bytes changed in place
(a bad sector, a tool writing into it). DuckDB refuses a truncated file, but reads most files with
changed data bytes without a word and returns wrong values. So every file the platform writes
carries the SHA-256 of its bytes in an extended attribute (``user.argassets.sha256``), set on the
temporary file before the rename that publishes it: the digest moves with the file, atomically,
and a reader compares it with the bytes it finds. A file without the attribute (written before,
copied without extended attributes, or on a file system without them) is checked by its footer
only. Plain functions; no Dagster, no DuckDB.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

__all__ = ["DIGEST_ATTRIBUTE", "Damage", "find_damage", "record_digest", "table_files"]

#: The extended attribute holding a file's SHA-256 (hex), set by the writer before publishing it.
DIGEST_ATTRIBUTE = "user.argassets.sha256"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Damage:
    """A table file that cannot be trusted: which table, which file, and why."""

    table: str
    file: Path
    reason: str

    def describe(self) -> str:
        where = self.file.parent.name if self.file.parent.name != self.table else ""
        partition = f" (partition {where})" if where else ""
        return f"table '{self.table}'{partition}: {self.reason} [{self.file}]"


def _digest_of(handle: int) -> str:
    digest = hashlib.sha256()
    os.lseek(handle, 0, os.SEEK_SET)
    while chunk := os.read(handle, _CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def record_digest(path: str | os.PathLike[str]) -> bool:
    """Store the SHA-256 of ``path``'s bytes on it; ``False`` where the file system keeps no attributes."""
    handle = os.open(path, os.O_RDONLY)
    try:
        os.setxattr(handle, DIGEST_ATTRIBUTE, _digest_of(handle).encode())
    except OSError:
        return False
    finally:
        os.close(handle)
    return True


def _file_damage(path: Path) -> str | None:
    """Why ``path`` cannot be trusted, or ``None``: its recorded digest first, else its footer."""
    try:
        handle = os.open(path, os.O_RDONLY)
    except OSError as exc:
        return f"cannot be opened ({exc.strerror})"
    try:
        try:
            recorded = os.getxattr(handle, DIGEST_ATTRIBUTE).decode()
        except OSError:
            recorded = None
        if recorded is not None:
            found = _digest_of(handle)
            return None if found == recorded else "its bytes changed since it was written (SHA-256 differs)"
        # Same open file as the digest would have been: a concurrent replacement is not seen half.
        with os.fdopen(os.dup(handle), "rb") as stream:
            pq.ParquetFile(stream).metadata  # noqa: B018 (reading the footer is the check)
    except Exception as exc:  # noqa: BLE001 (any failure to read the footer is damage)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"not a readable Parquet file ({first})"
    finally:
        os.close(handle)
    return None


def table_files(folder: Path, data_file: str) -> list[Path]:
    """The files of one table folder: its ``data_file``, or the ``data_file`` of each partition."""
    whole = folder / data_file
    if whole.exists():
        return [whole]
    return sorted(folder.glob(f"*/{data_file}"))


def find_damage(folder: Path, data_file: str) -> list[Damage]:
    """Every file of the table in ``folder`` that is cut short, changed in place or unreadable."""
    found = []
    for path in table_files(folder, data_file):
        reason = _file_damage(path)
        if reason is not None:
            found.append(Damage(folder.name, path, reason))
    return found
