"""The public Webis-ArgQuality-20 release, downloaded, checksum-pinned and cached."""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argassets.argument_quality.corpus import CorpusError


def sha256_of_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """SHA-256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _unpack(archive: Path, target: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as bundle:
                for member in bundle.namelist():
                    resolved = (tmp / member).resolve()
                    if not str(resolved).startswith(str(tmp.resolve())):
                        raise CorpusError(f"{archive}: unsafe path in archive: {member!r}")
                bundle.extractall(tmp)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as bundle:
                bundle.extractall(tmp, filter="data")
        else:
            # A single CSV file: keep it under its own name.
            shutil.copy2(archive, tmp / archive.name)
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@dataclass(frozen=True)
class FetchedRelease:
    """A downloaded (or cached) release file and where it was unpacked."""

    url: str
    archive: Path
    folder: Path
    sha256: str
    downloaded: bool
    pinned: bool


def _cached_release(
    url: str, archive: Path, pin_file: Path, folder: Path, expected: str | None
) -> FetchedRelease | None:
    """The cached copy when its checksum matches (unpacked, pinned); else ``None``, the copy removed."""
    if not archive.is_file():
        return None
    actual = sha256_of_file(archive)
    pinned = pin_file.read_text().strip() if pin_file.is_file() else None
    want = expected or pinned
    if want is None or actual == want:
        if not folder.is_dir():
            _unpack(archive, folder)
        if pinned is None:
            pin_file.write_text(actual + "\n")
        return FetchedRelease(url, archive, folder, actual, False, expected is not None)
    archive.unlink()  # stale or corrupted: download again
    if folder.exists():
        shutil.rmtree(folder)
    return None


def _download(url: str, archive: Path, pin_file: Path, expected: str | None, http: Any, owns_client: bool) -> str:
    """Stream ``url`` to a temporary file and move it to ``archive`` once its SHA-256 matched; pin it."""
    import httpx

    fd, tmp_name = tempfile.mkstemp(prefix=".download-", dir=archive.parent)
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as handle:
            try:
                with http.stream("GET", url) as response:
                    if response.status_code != 200:
                        raise CorpusError(f"{url}: download failed with HTTP {response.status_code}")
                    for block in response.iter_bytes():
                        digest.update(block)
                        handle.write(block)
            except httpx.HTTPError as exc:
                raise CorpusError(f"{url}: download failed: {exc}") from None
        actual = digest.hexdigest()
        if expected is not None and actual != expected:
            raise CorpusError(f"{url}: SHA-256 mismatch: expected {expected}, got {actual}; the download was discarded")
        tmp.replace(archive)
        pin_file.write_text(actual + "\n")
    finally:
        if tmp.exists():
            tmp.unlink()
        if owns_client:
            http.close()
    return actual


def fetch_release(
    url: str,
    cache_dir: str | os.PathLike[str],
    expected_sha256: str | None = None,
    timeout_s: float = 300.0,
    client: object | None = None,
) -> FetchedRelease:
    """Download one release file once, check its SHA-256, unpack it, and reuse it afterwards.

    The file is streamed to a temporary name and moved into ``cache_dir`` only after its checksum
    matched, so an interrupted or corrupted download never becomes the cached copy. When no
    checksum is given, the first download is accepted and its SHA-256 is pinned in a
    ``<file>.sha256`` file beside it: later runs verify the cached copy against that pin (pass the
    reported value as ``expected_sha256`` to pin it in configuration instead).

    Parameters
    ----------
    url
        The file's address (e.g. a file of Zenodo record 3780049).
    cache_dir
        Folder for the archive, its pin and its unpacked contents.
    expected_sha256
        The SHA-256 (hex) the file must have, or ``None`` to pin on first download.
    timeout_s
        HTTP timeout.
    client
        An ``httpx.Client`` to use (tests); default a new one following redirects.

    Raises
    ------
    CorpusError
        On an HTTP error, or a checksum that does not match (the bad file is removed).
    """
    import httpx

    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    name = Path(url.split("?", 1)[0].rstrip("/")).name or "release"
    url_tag = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
    archive = cache / f"{url_tag}-{name}"
    pin_file = archive.with_name(archive.name + ".sha256")
    folder = archive.with_name(archive.name + ".d")
    expected = expected_sha256.strip().lower() if expected_sha256 else None

    cached = _cached_release(url, archive, pin_file, folder, expected)
    if cached is not None:
        return cached
    owns_client = client is None
    http = client or httpx.Client(follow_redirects=True, timeout=timeout_s)
    actual = _download(url, archive, pin_file, expected, http, owns_client)
    _unpack(archive, folder)
    return FetchedRelease(url, archive, folder, actual, True, expected is not None)
