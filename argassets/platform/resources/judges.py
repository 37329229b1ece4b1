"""Judge resources: one interface, a backend per registry entry, and the judgment cache."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import dagster as dg

from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.interface import Judge
from argassets.platform.operations.machine import local_machine
from argassets.platform.operations.preflight import preflight
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.storage.judgment_cache import open_judgment_cache
from argassets.platform.storage.judgment_cache.interface import JudgmentStore
from argassets.platform.storage.judgment_cache.location import default_cache_location, redact_location
from argassets.platform.study import ImportKeys

STRUCTURED_OUTPUT_ENV_VAR = "ARGASSETS_OPENAI_STRUCTURED_OUTPUT"


class JudgeResource(dg.ConfigurableResource):
    """Builds the judge of a registry entry (``vllm``, ``openai``, ``import``, ``llama_cpp``, baselines).

    Every backend implements :class:`argassets.platform.judging.interface.Judge`; assets never see which one runs.
    Endpoints and keys of ``openai`` entries are read from the environment variables the entry
    names, when :meth:`build` is called (at run time), and never shown.
    """

    #: ``json_schema``, ``guided_choice``, ``json_object``, ``grammar`` or ``none``; default
    #: ``$ARGASSETS_OPENAI_STRUCTURED_OUTPUT``, else ``json_schema``.
    openai_structured_output: str | None = None
    openai_timeout_s: float = 120.0
    openai_max_retries: int = 6
    #: CPU threads of the llama.cpp backend (default: all cores).
    llama_threads: int | None = None

    def build(self, entry: ModelEntry, import_keys: Sequence[ImportKeys] = ()) -> Judge:
        """The judge of ``entry``; ``import_keys`` are its studies' (what its tidy import file may hold)."""
        # A run that reached this machine without the pre-flight (``dagster asset materialize``) and
        # cannot run here fails in one line, before any engine starts.
        refusal = preflight(entry, local_machine())
        if refusal is not None:
            raise dg.Failure(description=refusal.line, allow_retries=False)
        mode = self.openai_structured_output or os.environ.get(STRUCTURED_OUTPUT_ENV_VAR) or "json_schema"
        return build_judge(
            entry,
            import_keys=import_keys,
            openai_structured_output=mode,
            openai_timeout_s=self.openai_timeout_s,
            openai_max_retries=self.openai_max_retries,
            llama_threads=self.llama_threads,
        )


class JudgmentCacheResource(dg.ConfigurableResource):
    """The judgment cache: ``path``, else ``$ARGASSETS_CACHE``, else a SQLite file beside the DuckDB file.

    A ``postgresql://user:password@host/db`` URL selects the PostgreSQL backend (many machines);
    anything else is a SQLite file (one machine). The URL's password is never shown.
    """

    path: str | None = None

    def location(self) -> str:
        """Where the cache is, fit for logs and metadata (a URL's password replaced by ``***``)."""
        return redact_location(str(self.path or default_cache_location()))

    def open(self) -> JudgmentStore:
        return open_judgment_cache(str(self.path or default_cache_location()))


def judge_resources() -> dict[str, Any]:
    """Resources that every study's judgment asset needs, keyed by resource name."""
    return {
        "judge": JudgeResource(),
        "judgment_cache": JudgmentCacheResource(),
    }
