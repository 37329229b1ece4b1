"""What Study B's published releases hold: QT30's nodeset files, and the paper's prediction files.

- **QT30**: every nodeset file of the release, with its size and SHA-256, listed once in
  ``data/manifests/qt30-nodesets.tsv`` (:data:`QT30_MANIFEST`; checked with
  :func:`argassets.platform.release_manifest.check_file_manifest`).
- **Political predictions** (``political/predictions/*.tsv``, the paper's format): one row per
  ``nodeID`` 0..23,299, none missing (:data:`PUBLISHED_NODE_IDS`); the ensembles hold 23,228 rows
  of that range (:data:`PUBLISHED_ENSEMBLE_ROWS`).
"""

from __future__ import annotations

from argassets.platform.release_manifest import MANIFEST_DIR

#: The QT30 nodeset files of the release (relative path, bytes, SHA-256), one per line.
QT30_MANIFEST = MANIFEST_DIR / "qt30-nodesets.tsv"
#: The files of the QT30 release that the manifest lists.
QT30_NODESET_PATTERN = "nodeset*.json"
#: ``nodeID`` values of every published per-model prediction file: the paper's KB, 23,300 rows.
PUBLISHED_NODE_IDS = range(23_300)
#: Rows of each published ensemble file (E2, E3): 72 of the 23,300 nodeIDs are absent.
PUBLISHED_ENSEMBLE_ROWS = 23_228
