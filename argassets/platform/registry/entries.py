"""The model registry: which judges exist, how they run, and which studies they take part in.

A TOML file with one ``[[models]]`` table per judge, each validated by its engine's entry class;
unknown fields are errors naming the file, entry and field (docs/judgments.md, "The registry").
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

# The built-in engines register themselves when their package is imported.
import argassets.platform.judging.engines  # noqa: F401
from argassets.platform.registry.model_entry import EngineEntry, ModelEntry, SlurmSettings, validate_partition_key

#: Path of the registry shipped with the project.
DEFAULT_REGISTRY_PATH = Path(__file__).resolve().parents[3] / "data" / "models.toml"
REGISTRY_ENV_VAR = "ARGASSETS_MODELS"
#: The only top-level keys of a registry file; anything else (a typo such as ``[[model]]``) is an error.
TOP_LEVEL_KEYS: frozenset[str] = frozenset({"models", "slurm"})


class RegistryError(ValueError):
    """A registry file that cannot be used; the message names the file, entry and field."""


class ModelRegistry(BaseModel):
    """All judges, in file order, with unique names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    models: list[EngineEntry]
    #: Defaults of every entry's Slurm jobs (the registry's top-level ``[slurm]`` table).
    slurm: SlurmSettings = SlurmSettings()

    @model_validator(mode="after")
    def _unique_names(self) -> ModelRegistry:
        seen: set[str] = set()
        for entry in self.models:
            if entry.name in seen:
                raise ValueError(f"model name '{entry.name}' is used twice")
            seen.add(entry.name)
        return self

    @property
    def names(self) -> list[str]:
        return [entry.name for entry in self.models]

    def get(self, name: str) -> ModelEntry:
        validate_partition_key(name, "judge_models partition key")
        for entry in self.models:
            if entry.name == name:
                return entry
        raise KeyError(f"no model named '{name}' in the registry (known: {', '.join(self.names)})")

    def for_study(self, study: str) -> list[ModelEntry]:
        return [entry for entry in self.models if entry.takes_part_in(study)]

    def slurm_for(self, entry: ModelEntry) -> SlurmSettings:
        """The Slurm settings of ``entry``'s jobs: its own ``slurm`` table over the registry's."""
        return entry.slurm.merged_over(self.slurm)


def registry_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The registry file to use: an explicit path, else ``$ARGASSETS_MODELS``, else the shipped one."""
    if path:
        return Path(path)
    from_env = os.environ.get(REGISTRY_ENV_VAR)
    return Path(from_env) if from_env else DEFAULT_REGISTRY_PATH


def _describe_error(source: str, raw_models: list[Any], error: Mapping[str, Any]) -> str:
    location = list(error.get("loc", ()))
    where = source
    if len(location) >= 2 and location[0] == "models" and isinstance(location[1], int):
        index = location[1]
        name = raw_models[index].get("name") if isinstance(raw_models[index], dict) else None
        where += f": entry #{index + 1}" + (f" ('{name}')" if name else "")
        location = location[2:]
    field = ".".join(str(part) for part in location)
    message = error.get("msg", "invalid")
    return f"{where}: field '{field}': {message}" if field else f"{where}: {message}"


def parse_registry(data: dict[str, Any], source: str = "<registry>") -> ModelRegistry:
    """Validate an already-parsed TOML document; errors name the source, entry and field."""
    raw_models = data.get("models")
    unknown = sorted(key for key in data if key not in TOP_LEVEL_KEYS)
    problems = []
    if not isinstance(raw_models, list) or not raw_models:
        problems.append("no [[models]] entries")
    if unknown:
        problems.append(
            "unknown top-level key"
            + ("s " if len(unknown) > 1 else " ")
            + ", ".join(f"'{k}'" for k in unknown)
            + " (the registry holds only [[models]] tables and one [slurm] table)"
        )
    if problems:
        raise RegistryError(f"{source}: " + "; ".join(problems))
    assert isinstance(raw_models, list)
    try:
        return ModelRegistry.model_validate(
            {"models": raw_models, **({"slurm": data["slurm"]} if "slurm" in data else {})}
        )
    except ValidationError as exc:
        lines = [_describe_error(source, raw_models, error) for error in exc.errors()]
        raise RegistryError("invalid model registry:\n" + "\n".join(lines)) from None


def load_registry(path: str | os.PathLike[str] | None = None) -> ModelRegistry:
    """Read and validate the registry file (see :func:`registry_path`)."""
    resolved = registry_path(path)
    try:
        text = resolved.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RegistryError(f"{resolved}: model registry file not found") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{resolved}: not valid TOML: {exc}") from None
    return parse_registry(data, str(resolved))
