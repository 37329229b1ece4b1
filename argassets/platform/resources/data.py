"""Where the published corpora and study files are read from."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from argassets.platform.paths import resolve_data_dir


class PublishedDataResource(dg.ConfigurableResource):
    """The published data folder (``$ARGASSETS_DATA_DIR``, default ``../shared/data``).

    Layout follows the public releases: ``webis-argquality20/{full,raw}/``, ``qt30/**/nodeset*.json``,
    ``political/{predictions,human}/``.
    """

    data_dir: str | None = None

    def root(self) -> Path | None:
        """The configured folder, or ``None`` when nothing is configured or found."""
        return resolve_data_dir(self.data_dir)

    def require(self, relative: str) -> Path:
        """A path below the data folder; a clear error when the folder or the path is missing."""
        root = self.root()
        if root is None:
            raise FileNotFoundError(
                f"no published data folder configured: set ARGASSETS_DATA_DIR to the folder that holds '{relative}'"
            )
        path = root / relative
        if not path.exists():
            raise FileNotFoundError(f"{path}: not found (data folder {root})")
        return path
