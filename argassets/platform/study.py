"""A study as one declared object, and the studies of a code location as one explicit value.

In the spirit of inspect_ai's ``Task``: each study package declares one :class:`StudyDefinition`;
the platform builds its judging asset, its Dagster definitions and its estimates from it. The code
location's studies are a :class:`Studies` value that the composition layer (``argassets/studies.py``)
builds and passes down; the platform keeps no list of its own (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import pandas as pd
from pydantic import BaseModel, ConfigDict

from argassets.platform.judging.interface import CachedCompletion, ChatRequest, SamplingParams

if TYPE_CHECKING:
    from argassets.platform.registry.entries import ModelEntry
    from argassets.platform.reporting.exports.studies import StudyExport

S = TypeVar("S", bound="StudyScope")
#: The tables a study's judging reads, by asset name (``StudyDefinition.inputs``).
Inputs = Mapping[str, pd.DataFrame]


class StudyScope(BaseModel):
    """A study's restriction of a judge to part of the study (pilot runs, slow judges).

    Each study subclasses it with its own fields (``None`` = not restricted) and validators; the
    registry validates an entry's ``scope`` with the model of each study it names.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: The study this scope belongs to (a :class:`StudyDefinition` name).
    study: ClassVar[str] = ""
    #: Fields added after registry fingerprints were first taken: fingerprinted only when set, so
    #: that adding them made no entry look edited (``registry/diff.py``).
    fields_added_later: ClassVar[tuple[str, ...]] = ()

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
class RequestSet:
    """What a study asks one judge: its requests and what its table and metadata need back."""

    requests: list[ChatRequest]
    #: Whatever ``build_table`` needs besides the completions (e.g. one row of item ids per request).
    items: Any = None
    #: What was selected, for the run's log (e.g. "40 prompts in scope (full), orders ab").
    summary: str = ""
    #: Metadata known before judging (counts in scope, runs), added to the partition's metadata.
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgedElsewhere:
    """Entries whose judgments were made elsewhere and are read as the study's table, not judged here.

    ``table(entry, scope, inputs, data_root)`` returns the partition's table (with every provenance
    column, stating what the source does not carry), its metadata, and lines for the run's warning log.
    """

    applies: Callable[[ModelEntry], bool]
    table: Callable[[ModelEntry, Any, Inputs, Path | None], tuple[pd.DataFrame, Mapping[str, Any], Sequence[str]]]


@dataclass(frozen=True, eq=False)
class StudyDefinition:
    """One study: everything the platform needs to run it, declared in one place.

    The platform builds the judging asset ``root_asset`` from it (docs/architecture.md, "How a
    study is run"): the entry's scope and sampling, ``build_requests`` over the ``inputs``, the
    judges through the judgment cache ``n_runs`` times, ``build_table`` (one row per completion,
    labelled by the completion's position), the provenance columns and the non-answer failure.
    """

    #: The study's name in the registry (``studies = [...]``), the CLI and run tags.
    name: str
    #: A line for people: "Study A: argument quality on Webis-ArgQuality-20".
    title: str
    #: The study's model-partitioned asset that calls the judges (built by the platform).
    root_asset: str
    #: Its one-line description (what the UI shows for it).
    root_description: str
    #: The upstream assets the judging reads, by name (the asset's inputs).
    inputs: tuple[str, ...]
    #: Runs per request (the protocol's repetitions).
    n_runs: int
    scope_model: type[StudyScope]
    #: The protocol's sampling; a registry entry's ``sampling`` overrides it field by field.
    default_sampling: SamplingParams
    #: ``(entry, scope, inputs) -> RequestSet``: what the judge is asked.
    build_requests: Callable[[ModelEntry, Any, Inputs], RequestSet]
    #: ``(request_set, completions, judge_model) -> rows``: the study's columns, one row per completion,
    #: each row's index label the position of its completion (rows may be reordered).
    build_table: Callable[[RequestSet, Sequence[CachedCompletion], str], pd.DataFrame]
    import_keys: ImportKeys
    #: The other asset and check modules of the study (the root asset is not in them), imported when
    #: called: commands that only read the declaration (``--study`` choices, the registry) skip them.
    asset_modules: Callable[[], Sequence[ModuleType]] = tuple
    check_modules: Callable[[], Sequence[ModuleType]] = tuple
    #: ``(table, request_set) -> metadata``: what the study adds to a judged partition's metadata.
    judging_metadata: Callable[[pd.DataFrame, RequestSet], Mapping[str, Any]] | None = None
    #: ``(request_set, inputs) -> pairs``: the pairwise design of the requests, for entries judged in
    #: rounds (``adaptive``): one row per request with ``key``, ``cell`` (judged and stopped on its
    #: own, e.g. a dimension and strategy), ``pair_id`` (unique in its cell; all its requests and runs
    #: are judged together), ``group`` (BT is fitted per group), ``item_a``, ``item_b``.
    #: ``None``: the study cannot be judged adaptively.
    adaptive_pairs: Callable[[RequestSet, Inputs], pd.DataFrame] | None = None
    #: The column of ``build_table``'s rows holding the verdict oriented to the pair (A, B, Tie or null).
    verdict_column: str = "label"
    #: Entries whose judgments come from elsewhere (published files), read instead of judged.
    judged_elsewhere: JudgedElsewhere | None = None
    #: Whether the study runs only on the published data folder (no embedded sample).
    needs_published_data: bool = False
    #: Resources only this study's assets use, keyed by resource name.
    resources: Callable[[], Mapping[str, Any]] = dict
    #: ``(subcommands, studies)``: adds the study's own ``argassets`` commands (``sub.add_parser``);
    #: ``studies`` are the code location's (what a command validates the registry against).
    commands: Callable[[Any, Studies], None] | None = None
    #: What ``argassets export`` writes of the study (its ``exports.py``); ``None``: nothing to export.
    export: StudyExport | None = None

    def __post_init__(self) -> None:
        if self.scope_model.study != self.name:
            raise ValueError(
                f"study '{self.name}': its scope model {self.scope_model.__name__} belongs to "
                f"'{self.scope_model.study}' (set {self.scope_model.__name__}.study = '{self.name}')"
            )
        if self.n_runs < 1:
            raise ValueError(f"study '{self.name}': n_runs must be at least 1, not {self.n_runs}")


class Studies(tuple[StudyDefinition, ...]):
    """The studies of a code location, in order, with unique names; what shared code is derived from."""

    def __new__(cls, members: Iterable[StudyDefinition] = ()) -> Studies:
        studies = super().__new__(cls, tuple(members))
        seen: set[str] = set()
        for study in studies:
            if study.name in seen:
                raise ValueError(f"two studies are named '{study.name}'")
            seen.add(study.name)
        return studies

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(study.name for study in self)

    def get(self, name: str) -> StudyDefinition:
        """The study called ``name``; a :class:`KeyError` lists the known ones."""
        for study in self:
            if study.name == name:
                return study
        raise KeyError(f"unknown study '{name}' (known: {', '.join(self.names)})")
