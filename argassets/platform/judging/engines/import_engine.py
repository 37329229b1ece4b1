"""The ``import`` engine: judgments made elsewhere, read from a file instead of asking a model."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import model_validator

from argassets.platform.judging.interface import Judge, JudgeSettings
from argassets.platform.paths import resolve_data_dir
from argassets.platform.registry.model_entry import JudgmentsFile, ModelEntry, judge_engine
from argassets.platform.study import get_study


@judge_engine("import")
class ImportEntry(ModelEntry):
    """A registry entry whose judgments are read from ``path`` (relative: below the published-data folder)."""

    backend: Literal["import"]
    path: str | None = None
    #: ``tidy`` (the default; :mod:`argassets.platform.judging.engines.importer`) or a study's released
    #: format (``published_tsv``: Study B's per-model files, read by the study itself).
    format: Literal["tidy", "published_tsv"] | None = None

    #: Re-read from its file at every run; the persistent cache would only hold a copy.
    caches_judgments: ClassVar[bool] = False

    @model_validator(mode="after")
    def _needs_a_path(self) -> ImportEntry:
        if not self.path:
            raise ValueError("backend 'import' needs 'path'")
        return self

    @property
    def judgments_file(self) -> JudgmentsFile:
        return JudgmentsFile(path=self.path or "", format=self.format or "tidy", model=self.name)

    def identity_fields(self) -> dict[str, Any]:
        """The file and its format, as the registry names them."""
        return {"path": self.path, "format": self.format}

    def build_judge(self, settings: JudgeSettings) -> Judge:
        from argassets.platform.judging.engines.importer import ImportJudge

        data_dir = resolve_data_dir() if settings.data_dir is None else settings.data_dir
        return ImportJudge(
            self.judgments_file.resolve(data_dir),
            model_name=self.name,
            key_sets=[get_study(name).import_keys for name in self.studies],
        )

    def engine_batch_size(self) -> int:
        return 100_000
