"""Judge resources: one interface, a backend per registry entry, and the judgment cache."""

from __future__ import annotations

from typing import Any

from resources.corpora import WebisSourceResource


def judge_resources() -> dict[str, Any]:
    """Resources that the corpus, prompt and judgment assets need, keyed by resource name."""
    return {"webis_source": WebisSourceResource()}
