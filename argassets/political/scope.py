"""Study B's registry scope: how many KB arguments a judge scores."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from argassets.platform.study import StudyScope

STUDY_NAME = "political"


class PoliticalScope(StudyScope):
    """The part of Study B a judge answers: the first ``max_arguments`` arguments (validation items first)."""

    study: ClassVar[str] = STUDY_NAME

    max_arguments: int | None = Field(default=None, ge=1)
