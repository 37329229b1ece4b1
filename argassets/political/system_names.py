"""One name per political system: a published model's study-file column mapped to its registry entry.

The human-study files carry the paper's predictions under their own column prefixes
(``published:gpt_4_5_preview_2025_02_27``) while the registry imports the same predictions as an
entry (``published-gpt-4.5``); :func:`published_system_names` maps the one to the other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.registry.model_entry import ModelEntry
from argassets.political.published import PUBLISHED_TSV_STUDY_PREFIX, published_predictions_file

PUBLISHED_PREFIX = "published:"


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def published_stem(entry: ModelEntry) -> str | None:
    """The file stem of the published predictions a political entry imports, or ``None``."""
    published = published_predictions_file(entry)
    return PurePosixPath(published.path).stem if published is not None and "political" in entry.studies else None


def published_system_names(registry: ModelRegistry, prefixes: Iterable[str]) -> dict[str, str]:
    """``published:<prefix>`` -> the registry entry that imports the same model's published predictions.

    The released table of file stems to prefixes decides first; otherwise the prefix (letters and
    digits) must begin the entry's ``model_id`` (whole, or after its ``org/``). A prefix that
    matches several entries keeps its own name.
    """
    entries = [e for e in registry.models if published_stem(e) is not None]
    names: dict[str, str] = {}
    for prefix in prefixes:
        explicit = [e.name for e in entries if PUBLISHED_TSV_STUDY_PREFIX.get(published_stem(e) or "") == prefix]
        wanted = _squash(prefix)
        by_id = [
            e.name
            for e in entries
            if e.model_id and any(_squash(i).startswith(wanted) for i in (e.model_id, e.model_id.split("/")[-1]))
        ]
        match = explicit or by_id
        if len(match) == 1:
            names[f"{PUBLISHED_PREFIX}{prefix}"] = match[0]
    return names
