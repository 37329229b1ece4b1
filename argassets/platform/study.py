"""A study as one declared object, and the list of studies the shared code is derived from.

In the spirit of inspect_ai's ``Task``: each study package declares one :class:`StudyDefinition`
(its name, root judging asset, asset and check modules, scope model, default sampling, request and
table builders, import key columns, release facts, resources). The registry's study names, the
automation roots, the catalog, the CLI, the tidy importer and the resources are derived from
:func:`studies`; no shared module names a study.

The studies of the code location are listed by :data:`STUDY_CATALOG` (``argassets/studies.py``,
``STUDIES``), read on first use; another study, e.g. one defined in a test, is added with
:func:`register_study`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from argassets.platform.judging.interface import SamplingParams

#: The module whose ``STUDIES`` lists the code location's own studies (outside the platform).
STUDY_CATALOG = "argassets.studies"

S = TypeVar("S", bound="StudyScope")


class StudyScope(BaseModel):
    """A study's restriction of a judge to part of the study (pilot runs, slow judges).

    Each study subclasses it with its own fields (``None`` = not restricted) and validators; the
    registry validates an entry's ``scope`` with the model of each study it names.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: The study this scope belongs to (a :class:`StudyDefinition` name).
    study: ClassVar[str] = ""

    def describe(self) -> str:
        """A short label of the restrictions, in field order ("full" when nothing is restricted)."""
        parts = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                continue
            text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
            parts.append(f"{name}={text}")
        return "; ".join(parts) if parts else "full"

    @classmethod
    def of(cls: type[S], entry: Any) -> S:
        """The scope of ``entry`` (a registry ``ModelEntry``) in this study; unrestricted when it sets none."""
        scope = entry.scope.get(cls.study)
        if scope is None:
            return cls()
        if not isinstance(scope, cls):
            raise TypeError(
                f"model '{entry.name}': scope of {cls.study} is a {type(scope).__name__}, not {cls.__name__}"
            )
        return scope


@dataclass(frozen=True)
class ImportKeys:
    """The columns that identify a judgment of a study in a tidy import file (with ``run``).

    ``columns[0]`` names the study's item (its presence tells a file's study); ``allowed`` restricts
    values of some columns; ``defaults`` fills columns a file may leave out.
    """

    columns: tuple[str, ...]
    allowed: Mapping[str, frozenset[str]] = field(default_factory=dict)
    defaults: Mapping[str, str] = field(default_factory=dict)

    @property
    def item_column(self) -> str:
        return self.columns[0]


@dataclass(frozen=True)
class StudyDefinition:
    """One study: everything the shared code needs to know about it, declared in one place."""

    #: The study's name in the registry (``studies = [...]``), the CLI and run tags.
    name: str
    #: A line for people: "Study A: argument quality on Webis-ArgQuality-20".
    title: str
    #: The ``judge_models``-partitioned asset that calls the judges.
    root_asset: str
    asset_modules: Sequence[ModuleType]
    check_modules: Sequence[ModuleType]
    scope_model: type[StudyScope]
    #: The protocol's sampling; a registry entry's ``sampling`` overrides it field by field.
    default_sampling: SamplingParams
    #: The study's chat requests from its prompt table(s).
    build_requests: Callable[..., Any]
    #: The study's judgments table from the completions.
    build_table: Callable[..., Any]
    import_keys: ImportKeys
    #: What the study's published releases hold (counts, id ranges), by name.
    release_facts: Mapping[str, Any] = field(default_factory=dict)
    #: Whether the study runs only on the published data folder (no embedded sample).
    needs_published_data: bool = False
    #: Resources only this study's assets use, keyed by resource name.
    resources: Callable[[], Mapping[str, Any]] = dict
    #: For estimates before a run: ``(entry, load) -> (requests, runs, sampling)`` of the root asset,
    #: ``load(asset_key)`` giving an upstream table; ``None`` when the study offers no estimate.
    workload: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if self.scope_model.study != self.name:
            raise ValueError(
                f"study '{self.name}': its scope model {self.scope_model.__name__} belongs to "
                f"'{self.scope_model.study}' (set {self.scope_model.__name__}.study = '{self.name}')"
            )


_registered: dict[str, StudyDefinition] = {}
_catalog_read: list[bool] = []


def register_study(study: StudyDefinition) -> StudyDefinition:
    """Add ``study`` to the list of studies (again is fine; another study of the same name is an error)."""
    known = _registered.get(study.name)
    if known is not None and known is not study:
        raise ValueError(f"a study named '{study.name}' is already registered")
    _registered[study.name] = study
    return study


def unregister_study(name: str) -> None:
    """Remove a study added with :func:`register_study` (tests that define their own)."""
    _registered.pop(name, None)


def _read_catalog() -> None:
    if _catalog_read:
        return
    catalog = importlib.import_module(STUDY_CATALOG)
    for study in catalog.STUDIES:
        register_study(study)
    _catalog_read.append(True)


def studies() -> tuple[StudyDefinition, ...]:
    """Every study: the catalog's, then those registered, in registration order."""
    _read_catalog()
    return tuple(_registered.values())


def study_names() -> tuple[str, ...]:
    return tuple(study.name for study in studies())


def get_study(name: str) -> StudyDefinition:
    """The study called ``name``; a :class:`KeyError` lists the known ones."""
    for study in studies():
        if study.name == name:
            return study
    raise KeyError(f"unknown study '{name}' (known: {', '.join(study_names())})")
