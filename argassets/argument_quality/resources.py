"""Where the Webis-ArgQuality-20 corpus comes from when it is not in the published-data folder."""

from __future__ import annotations

import os
import re
from pathlib import Path

import dagster as dg

from argassets.argument_quality.release import FetchedRelease, fetch_release
from argassets.platform.paths import PROJECT_ROOT

URL_ENV_VAR = "ARGASSETS_WEBIS_URL"
SHA256_ENV_VAR = "ARGASSETS_WEBIS_SHA256"
CACHE_ENV_VAR = "ARGASSETS_DOWNLOAD_CACHE"
DEFAULT_DOWNLOAD_CACHE = PROJECT_ROOT / "var" / "downloads"


def _split(value: str | None) -> list[str]:
    return [part for part in re.split(r"[\s,]+", value or "") if part]


class WebisSourceResource(dg.ConfigurableResource):
    """The public release of Webis-ArgQuality-20 (Zenodo record 3780049), downloaded and cached.

    ``url`` holds one or more file addresses (whitespace or comma separated; the release's
    processed and raw archives may be separate files), ``sha256`` the expected checksum of each,
    in the same order. Both default to ``$ARGASSETS_WEBIS_URL`` / ``$ARGASSETS_WEBIS_SHA256``, read
    at run time. Without a checksum the first download is accepted and its SHA-256 is pinned in the
    cache (and reported in the asset metadata, to be copied into the configuration).
    """

    url: str | None = None
    sha256: str | None = None
    cache_dir: str | None = None
    timeout_s: float = 300.0

    def urls(self) -> list[str]:
        return _split(self.url if self.url is not None else os.environ.get(URL_ENV_VAR))

    def checksums(self) -> list[str | None]:
        urls = self.urls()
        given = _split(self.sha256 if self.sha256 is not None else os.environ.get(SHA256_ENV_VAR))
        if given and len(given) != len(urls):
            raise ValueError(f"{len(urls)} release URL(s) but {len(given)} SHA-256 value(s): give one checksum per URL")
        return list(given) if given else [None] * len(urls)

    def cache_folder(self) -> Path:
        return Path(self.cache_dir or os.environ.get(CACHE_ENV_VAR) or DEFAULT_DOWNLOAD_CACHE)

    def is_configured(self) -> bool:
        return bool(self.urls())

    def fetch(self) -> list[FetchedRelease]:
        """Download (once) and unpack every configured release file."""
        return [
            fetch_release(url, self.cache_folder(), sha, timeout_s=self.timeout_s)
            for url, sha in zip(self.urls(), self.checksums(), strict=True)
        ]
