"""The studies of this code location, in order: the one list everything shared is derived from.

Study A and Study B, then any study named by ``$ARGASSETS_EXTRA_STUDIES``: comma-separated module
paths, each module holding a ``STUDY`` (a :class:`~argassets.platform.study.StudyDefinition`). A
study in its own package is one more line in :data:`BUILT_IN`; a study defined elsewhere (a test's
toy study, another package) joins through the variable, without an edit here
(docs/architecture.md, "Adding a study"). Everything above the platform reads the studies here and
passes them down; the platform keeps no list.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.registry import entries
from argassets.platform.study import Studies, StudyDefinition
from argassets.political.study import STUDY as POLITICAL

EXTRA_STUDIES_ENV_VAR = "ARGASSETS_EXTRA_STUDIES"
#: The studies of this code location's own packages, in order.
BUILT_IN: tuple[StudyDefinition, ...] = (ARGUMENT_QUALITY, POLITICAL)


def extra_studies(environ: Mapping[str, str] | None = None) -> list[StudyDefinition]:
    """The studies of the modules ``$ARGASSETS_EXTRA_STUDIES`` names, in its order."""
    value = (os.environ if environ is None else environ).get(EXTRA_STUDIES_ENV_VAR, "")
    found = []
    for name in [part.strip() for part in value.split(",") if part.strip()]:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ValueError(f"{EXTRA_STUDIES_ENV_VAR}: cannot import study module '{name}': {exc}") from None
        study = getattr(module, "STUDY", None)
        if not isinstance(study, StudyDefinition):
            raise ValueError(f"{EXTRA_STUDIES_ENV_VAR}: module '{name}' has no STUDY (a StudyDefinition)")
        found.append(study)
    return found


def code_location_studies(environ: Mapping[str, str] | None = None) -> Studies:
    """The code location's studies: :data:`BUILT_IN`, then those of ``$ARGASSETS_EXTRA_STUDIES``."""
    return Studies((*BUILT_IN, *extra_studies(environ)))


def load_registry(path: Any = None) -> entries.ModelRegistry:
    """The model registry (see :func:`argassets.platform.registry.entries.registry_path`), validated
    against the code location's studies."""
    return entries.load_registry(path, studies=code_location_studies())


def parse_registry(data: dict[str, Any], source: str = "<registry>") -> entries.ModelRegistry:
    """A parsed registry document validated against the code location's studies."""
    return entries.parse_registry(data, source, studies=code_location_studies())
