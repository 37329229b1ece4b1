"""Diffing model-registry states, so a sensor can tell what a registry edit asks for (docs/operations.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from argassets.platform.registry.entries import ModelRegistry
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.study import Studies

__all__ = [
    "COSMETIC_FIELDS",
    "CursorError",
    "PlannedRun",
    "RegistryDiff",
    "SensorCursor",
    "RegistryState",
    "SkippedRun",
    "WorkPlan",
    "diff_states",
    "entry_fingerprint",
    "merge_pending",
    "plan_registry_work",
]

#: Version of the cursor's JSON layout.
CURSOR_VERSION = 1
#: Fields that change no judgment (a description, a paper name, where and how fast its jobs run, its
#: price); editing only these is no change of the entry, and no partition is judged again for it.
COSMETIC_FIELDS: frozenset[str] = frozenset({"description", "published_as", "slurm", "throughput", "price"})


#: Fields added after entries were first fingerprinted, with their default: left out while at it,
#: so that the upgrade changes no fingerprint (no entry looks edited, nothing is judged again).
_ADDED_FIELD_DEFAULTS: dict[str, Any] = {"server_sampling_defaults": False, "mode": "sample", "adaptive": None}
#: The engine-specific fields of the flat entry that fingerprints were first taken of, at their
#: defaults: an entry now holds only its own engine's fields, and the others are filled in with these
#: so that no fingerprint changed when the engines got their own entry classes.
_FLAT_ENTRY_ENGINE_DEFAULTS: dict[str, Any] = {
    "gpus": 0,
    "gpu_memory_utilization": 0.9,
    "max_model_len": None,
    "device": "gpu",
    "kv_cache_gib": None,
    "enforce_eager": False,
    "dtype": "auto",
    "base_url_env": None,
    "api_key_env": None,
    "max_concurrency": 8,
    "path": None,
    "format": None,
    "gguf_path": None,
    "gguf_package": None,
    "n_ctx": 2048,
}


class CursorError(ValueError):
    """A stored sensor cursor that cannot be read back."""


def _canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _fingerprinted_scope(entry: ModelEntry, studies: Studies) -> dict[str, Any]:
    """The entry's scope as one table of every study's scope fields (unset ones ``None``).

    The shape the registry had before scopes were per study, so that the upgrade changed no
    fingerprint (no entry looked edited, no run was requested again). Should two studies ever
    declare the same field, the per-study tables are used instead.
    """
    added = {field for study in studies for field in study.scope_model.fields_added_later}
    per_study: dict[str, Any] = {
        name: {k: v for k, v in scope.model_dump(mode="json").items() if v is not None or k not in added}
        for name, scope in entry.scope.items()
    }
    fields = [field for study in studies for field in study.scope_model.model_fields]
    if len(fields) != len(set(fields)):
        return per_study
    flat: dict[str, Any] = dict.fromkeys(field for field in fields if field not in added)
    for values in per_study.values():
        flat.update({key: value for key, value in values.items() if value is not None})
    return flat


def entry_fingerprint(entry: ModelEntry, studies: Studies) -> str:
    """A short stable hash (16 hex characters) of everything in ``entry`` that affects its work.

    ``studies`` are those the entry's registry was validated against (their scope fields shape it).

    Fields listed in :data:`COSMETIC_FIELDS` are left out; defaults are included, so spelling a
    default out in the file is not a change.
    """
    content = {**_FLAT_ENTRY_ENGINE_DEFAULTS, **entry.model_dump(mode="json", exclude=set(COSMETIC_FIELDS))}
    for name, default in _ADDED_FIELD_DEFAULTS.items():
        if content.get(name) == default:
            del content[name]
    content["scope"] = _fingerprinted_scope(entry, studies)
    return hashlib.sha256(_canonical_json(content).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class RegistryState:
    """The last valid registry seen: entry name to fingerprint (file order), plus retired entries.

    Parameters
    ----------
    entries
        ``name -> fingerprint`` of every entry of the registry, in file order.
    retired
        ``name -> fingerprint`` of entries removed from the registry since, as they were last seen.
    """

    entries: Mapping[str, str]
    retired: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, registry: ModelRegistry, previous: RegistryState | None = None) -> RegistryState:
        """The state of ``registry``; entries of ``previous`` no longer present become retired."""
        entries = {entry.name: entry_fingerprint(entry, registry.studies) for entry in registry.models}
        retired: dict[str, str] = dict(previous.retired) if previous else {}
        if previous is not None:
            for name, fingerprint in previous.entries.items():
                if name not in entries:
                    retired[name] = fingerprint
        for name in entries:
            retired.pop(name, None)
        return cls(entries=entries, retired=retired)

    def to_cursor(self) -> str:
        """The state as compact JSON, for a sensor cursor."""
        return _canonical_json(
            {"version": CURSOR_VERSION, "entries": list(self.entries.items()), "retired": dict(self.retired)}
        )

    @classmethod
    def from_cursor(cls, cursor: str | None) -> RegistryState | None:
        """Read a cursor written by :meth:`to_cursor`; ``None`` for an empty cursor.

        Raises
        ------
        CursorError
            When the cursor is not JSON of the expected layout and version.
        """
        if not cursor:
            return None
        try:
            data = json.loads(cursor)
        except json.JSONDecodeError as exc:
            raise CursorError(f"registry sensor cursor is not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != CURSOR_VERSION:
            raise CursorError(f"registry sensor cursor has an unknown layout (expected version {CURSOR_VERSION})")
        entries = data.get("entries")
        retired = data.get("retired", {})
        if not isinstance(entries, list) or not isinstance(retired, dict):
            raise CursorError("registry sensor cursor: 'entries' must be a list and 'retired' an object")
        try:
            pairs = [(str(name), str(fingerprint)) for name, fingerprint in entries]
        except (TypeError, ValueError):
            raise CursorError("registry sensor cursor: 'entries' must hold [name, fingerprint] pairs") from None
        return cls(entries=dict(pairs), retired={str(k): str(v) for k, v in retired.items()})


@dataclass(frozen=True)
class RegistryDiff:
    """What changed between two registry states; every list is in registry (or cursor) order."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: tuple[str, ...]
    #: Added entries that were seen before, removed, and come back with the same content.
    readded_unchanged: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for logs, e.g. ``added: a, b; changed: c; removed: none``."""

        def names(items: Iterable[str]) -> str:
            items = list(items)
            return ", ".join(items) if items else "none"

        return (
            f"added: {names(self.added)}; changed: {names(self.changed)}; "
            f"removed: {names(self.removed)}; unchanged: {len(self.unchanged)}"
        )


def diff_states(previous: RegistryState | None, current: RegistryState) -> RegistryDiff:
    """Compare the remembered state with the current one.

    With no previous state (a sensor's first tick) every entry counts as added.
    """
    before = dict(previous.entries) if previous else {}
    retired = dict(previous.retired) if previous else {}
    added, changed, unchanged, readded = [], [], [], []
    for name, fingerprint in current.entries.items():
        if name not in before:
            added.append(name)
            if retired.get(name) == fingerprint:
                readded.append(name)
        elif before[name] != fingerprint:
            changed.append(name)
        else:
            unchanged.append(name)
    removed = [name for name in before if name not in current.entries]
    return RegistryDiff(
        added=tuple(added),
        changed=tuple(changed),
        removed=tuple(removed),
        unchanged=tuple(unchanged),
        readded_unchanged=tuple(readded),
    )


@dataclass(frozen=True)
class PlannedRun:
    """One run to request: a study's work for one registry entry (= one partition)."""

    partition_key: str
    study: str
    reason: str  # "added" or "changed"


@dataclass(frozen=True)
class SkippedRun:
    """A study of an entry that is not run, and why."""

    partition_key: str
    study: str
    reason: str


@dataclass(frozen=True)
class WorkPlan:
    """Everything one registry sensor tick asks for."""

    partitions_to_add: tuple[str, ...]
    runs: tuple[PlannedRun, ...]
    skipped: tuple[SkippedRun, ...]
    removed: tuple[str, ...]
    diff: RegistryDiff


@dataclass(frozen=True)
class _RunContext:
    run_backends: Collection[str]
    materialized: Mapping[str, Collection[str]]
    studies_available: Collection[str]
    first_tick: bool
    refused: Mapping[str, str]


def _why_not_run(entry: ModelEntry, study: str, reason: str, diff: RegistryDiff, context: _RunContext) -> str | None:
    """Why the run of ``entry`` in ``study`` is skipped, or ``None`` when it is requested."""
    if study not in context.studies_available:
        return f"the code location has no asset for study '{study}'"
    if entry.backend not in context.run_backends:
        return (
            f"backend '{entry.backend}' is not run automatically here "
            "(see ARGASSETS_RUN_BACKENDS; llama_cpp also needs llama-cpp-python installed); "
            "run the partition from the UI or the CLI"
        )
    if entry.name in context.refused:
        return context.refused[entry.name]
    already = entry.name in set(context.materialized.get(study, ()))
    if reason == "added" and already and (context.first_tick or entry.name in diff.readded_unchanged):
        return "already materialised with this configuration"
    return None


def plan_registry_work(
    registry: ModelRegistry,
    diff: RegistryDiff,
    existing_partitions: Collection[str],
    run_backends: Collection[str],
    materialized: Mapping[str, Collection[str]],
    studies_available: Collection[str],
    first_tick: bool,
    refused: Mapping[str, str] | None = None,
) -> WorkPlan:
    """Decide the partitions to add and the study runs to request for one registry diff.

    Every entry missing from ``existing_partitions`` is added (a deleted partition comes back).
    Added and changed entries are run in each of their studies, unless: the code location lacks the
    study (``studies_available``), the backend is not in ``run_backends``, the pre-flight
    ``refused`` it (its words), or, on the ``first_tick`` or an unchanged re-add, the study asset is
    already ``materialized`` for it; each of those is a :class:`SkippedRun` with its reason.
    Removed entries are reported only; nothing is deleted.
    """
    existing = set(existing_partitions)
    partitions_to_add = tuple(name for name in registry.names if name not in existing)
    runs: list[PlannedRun] = []
    skipped: list[SkippedRun] = []
    work = [(name, "added") for name in diff.added] + [(name, "changed") for name in diff.changed]
    for name, reason in work:
        entry = registry.get(name)
        for study in entry.studies:
            why_not = _why_not_run(
                entry,
                study,
                reason,
                diff,
                _RunContext(run_backends, materialized, studies_available, first_tick, refused or {}),
            )
            if why_not is None:
                runs.append(PlannedRun(name, study, reason))
            else:
                skipped.append(SkippedRun(name, study, why_not))
    return WorkPlan(
        partitions_to_add=partitions_to_add,
        runs=tuple(runs),
        skipped=tuple(skipped),
        removed=diff.removed,
        diff=diff,
    )


@dataclass(frozen=True)
class SensorCursor:
    """The registry sensor's memory: the last valid state and the runs still waiting.

    ``pending`` holds planned study runs not requested yet because an unpartitioned input of the
    study (e.g. the prompts table) does not exist yet; they are requested once it does.
    """

    state: RegistryState | None
    pending: tuple[PlannedRun, ...] = ()

    def to_json(self) -> str:
        state = json.loads(self.state.to_cursor()) if self.state else None
        return _canonical_json(
            {
                "version": CURSOR_VERSION,
                "state": state,
                "pending": [[run.partition_key, run.study, run.reason] for run in self.pending],
            }
        )

    @classmethod
    def from_json(cls, cursor: str | None) -> SensorCursor:
        """Read a cursor written by :meth:`to_json` (an empty cursor is a first tick).

        Raises
        ------
        CursorError
            When the cursor cannot be read.
        """
        if not cursor:
            return cls(state=None)
        try:
            data = json.loads(cursor)
        except json.JSONDecodeError as exc:
            raise CursorError(f"registry sensor cursor is not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != CURSOR_VERSION or "pending" not in data:
            raise CursorError(f"registry sensor cursor has an unknown layout (expected version {CURSOR_VERSION})")
        state = RegistryState.from_cursor(_canonical_json(data["state"])) if data["state"] else None
        try:
            pending = tuple(PlannedRun(str(p), s, str(r)) for p, s, r in data["pending"])
        except (TypeError, ValueError):
            raise CursorError("registry sensor cursor: 'pending' must hold [partition, study, reason]") from None
        return cls(state=state, pending=pending)


def merge_pending(
    pending: Iterable[PlannedRun], new: Iterable[PlannedRun], registry: ModelRegistry
) -> tuple[PlannedRun, ...]:
    """Pending runs followed by new ones, one per (partition, study), dropping removed entries.

    A run of an entry that left the registry, or that no longer takes part in the study, is
    dropped; a later reason ("changed") replaces an earlier one.
    """
    names = set(registry.names)
    merged: dict[tuple[str, str], PlannedRun] = {}
    for run in [*pending, *new]:
        if run.partition_key not in names:
            continue
        if not registry.get(run.partition_key).takes_part_in(run.study):
            continue
        merged[(run.partition_key, run.study)] = run
    return tuple(merged.values())
