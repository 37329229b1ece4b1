"""An entry's ``scope``: the part of each study it answers, validated by that study's scope model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from argassets.platform.study import StudyScope, get_study, study_names


def _flat_scope(raw: Mapping[str, Any], studies: list[str]) -> dict[str, dict[str, Any]]:
    """A flat ``scope = { ... }`` split among ``studies``: each field to the studies declaring it."""
    per_study: dict[str, dict[str, Any]] = {}
    for name in studies:
        fields = get_study(name).scope_model.model_fields
        mine = {key: value for key, value in raw.items() if key in fields}
        if mine:
            per_study[name] = mine
    claimed = {key for fields in per_study.values() for key in fields}
    stray = [key for key in raw if key not in claimed]
    if stray:
        declared = {name: sorted(get_study(name).scope_model.model_fields) for name in studies}
        raise ValueError(
            f"'{stray[0]}' is neither a study nor a scope field of this entry's studies (their fields: "
            + "; ".join(f"{name}: {', '.join(fields) or 'none'}" for name, fields in declared.items())
            + ")"
        )
    return per_study


def scopes_by_study(raw: Any, studies: list[str]) -> dict[str, StudyScope]:
    """An entry's ``scope``, validated by the scope model of each study it restricts.

    ``raw`` is ``{study: {field: value}}`` (a table per study) or the flat shorthand
    ``{field: value}``; a study the entry does not take part in, or a field no study declares, is
    an error, and so is a restriction its study rejects (an unknown topic, an empty list).
    """
    if not isinstance(raw, Mapping):
        raise ValueError("must be a table: scope.<study> = { ... }")
    if not raw:
        return {}
    if all(isinstance(value, StudyScope) for value in raw.values()):
        return dict(raw)
    tables = {key: value for key, value in raw.items() if key in study_names()}
    if tables and len(tables) != len(raw):
        raise ValueError("mixes per-study tables with plain fields: write every field under scope.<study>")
    per_study = tables if tables else _flat_scope(raw, studies)
    scopes: dict[str, StudyScope] = {}
    for name, fields in per_study.items():
        if name not in studies:
            raise ValueError(
                f"restricts study '{name}', which this entry takes no part in (studies: {', '.join(studies)})"
            )
        model = get_study(name).scope_model
        try:
            scopes[name] = fields if isinstance(fields, model) else model.model_validate(fields)
        except ValidationError as exc:
            problems = [f"{'.'.join(str(p) for p in e['loc']) or name}: {e['msg']}" for e in exc.errors()]
            raise ValueError(f"scope of {name}: " + "; ".join(problems)) from None
    return scopes
