"""Study A's vocabulary (dimensions, prompting strategies) and its registry scope."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from argassets.argument_quality.release_facts import WEBIS_TOPIC_IDS
from argassets.platform.study import StudyScope

STUDY_NAME = "argument_quality"

Dimension = Literal["logic", "rhetoric", "dialectic"]
Strategy = Literal["zero", "few", "cot"]
DIMENSIONS: tuple[Dimension, ...] = ("logic", "rhetoric", "dialectic")
STRATEGIES: tuple[Strategy, ...] = ("zero", "few", "cot")


class ArgumentQualityScope(StudyScope):
    """The part of Study A a judge answers: some topics, dimensions, strategies, the first comparisons.

    A list names at least one value, each a topic of the release or a known dimension or strategy:
    a scope that selects nothing is an error, not an empty partition.
    """

    study: ClassVar[str] = STUDY_NAME
    fields_added_later: ClassVar[tuple[str, ...]] = ("prompt_variant", "perturbation")

    topics: list[int] | None = Field(default=None, min_length=1)
    dimensions: list[Dimension] | None = Field(default=None, min_length=1)
    strategies: list[Strategy] | None = Field(default=None, min_length=1)
    max_comparisons: int | None = Field(default=None, ge=1)
    #: A prompt variant of data/prompt_variants.toml (the protocol's text when absent) and a
    #: perturbation (argassets/argument_quality/prompt_axis.py): how the pairs are presented.
    prompt_variant: str | None = None
    perturbation: str | None = None

    @field_validator("topics")
    @classmethod
    def _topics_of_the_release(cls, value: list[int] | None) -> list[int] | None:
        unknown = [t for t in value or () if t not in WEBIS_TOPIC_IDS]
        if unknown:
            raise ValueError(
                f"topic {unknown[0]} is not a topic of Webis-ArgQuality-20 "
                f"({WEBIS_TOPIC_IDS.start}..{WEBIS_TOPIC_IDS.stop - 1})"
            )
        return value

    @field_validator("prompt_variant")
    @classmethod
    def _known_variant(cls, value: str | None) -> str | None:
        from argassets.argument_quality.prompt_axis import presentation  # the axis reads the scope's vocabulary

        if value is not None:
            presentation(value, None)
        return value

    @field_validator("perturbation")
    @classmethod
    def _known_perturbation(cls, value: str | None) -> str | None:
        from argassets.argument_quality.prompt_axis import check_perturbation

        return None if value is None else check_perturbation(value)
