"""The model registry: which judges exist, how they run, and which studies they take part in.

The registry is a TOML file with one ``[[models]]`` table per judge. Each entry's ``name`` is the
key of its partition in the ``judge_models`` dynamic partitions. Validation is strict (unknown
fields are errors) so that a typo in a registry edit is reported with the entry and the field
instead of silently changing an experiment.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from argassets.platform.judging.interface import SamplingParams
from argassets.platform.study import StudyScope, get_study, study_names

Backend = Literal["vllm", "vllm_batch", "openai", "import", "llama_cpp", "random", "longer-wins"]

#: Every backend name, from the one ``Backend`` literal.
BACKENDS: tuple[Backend, ...] = get_args(Backend)
BASELINE_BACKENDS: frozenset[Backend] = frozenset({"random", "longer-wins"})
#: Backends that return log-probabilities (the label probabilities, probabilities mode).
LOGPROB_BACKENDS: frozenset[Backend] = frozenset({"vllm", "vllm_batch", "llama_cpp", "openai"})
#: Backends that run a vLLM engine from the entry's engine fields (vllm_batch: through ``vllm run-batch``).
VLLM_BACKENDS: frozenset[Backend] = frozenset({"vllm", "vllm_batch"})

#: Path of the registry shipped with the project.
DEFAULT_REGISTRY_PATH = Path(__file__).resolve().parents[3] / "data" / "models.toml"
REGISTRY_ENV_VAR = "ARGASSETS_MODELS"

_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
#: The only top-level key of a registry file; anything else (a typo such as ``[[model]]``) is an error.
TOP_LEVEL_KEYS: frozenset[str] = frozenset({"models", "slurm"})


class RegistryError(ValueError):
    """A registry file that cannot be used; the message names the file, entry and field."""


class PartitionKeyError(ValueError):
    """A ``judge_models`` partition key that is not a valid model name."""


#: What a model name (hence a partition key) may be: quotes, spaces, slashes and the like never are.
NAME_RULE = "1-64 characters of lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"


def is_valid_partition_key(key: object) -> bool:
    """Whether ``key`` can be a model name and ``judge_models`` partition key."""
    return isinstance(key, str) and bool(_NAME_PATTERN.fullmatch(key))


def validate_partition_key(key: object, where: str = "partition key") -> str:
    """``key`` when it is a valid model name, else :class:`PartitionKeyError` naming it and the rule.

    Partition keys enter from the registry (validated with the entry), the CLI, and the Dagster UI's
    "add partition" dialog, which accepts any text; every entry point checks them with this.
    """
    if not is_valid_partition_key(key):
        raise PartitionKeyError(f"{where} {key!r} is not a valid model name: it must be {NAME_RULE}")
    assert isinstance(key, str)
    return key


def _known_study(name: str) -> str:
    if name not in study_names():
        raise ValueError(f"unknown study '{name}' (known: {', '.join(study_names())})")
    return name


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Sampling(_Strict):
    """Sampling overrides; ``None`` keeps the study's protocol default."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = None
    max_tokens: int | None = Field(default=None, ge=1)


#: Slurm's memory syntax (``--mem``): a number of MiB, or with a K/M/G/T suffix.
_SLURM_MEM = r"^[1-9][0-9]*[KMGT]?$"
#: Slurm's time syntax (``--time``): minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS.
_SLURM_TIME = r"^([0-9]+-)?[0-9]+(:[0-9]{2}){0,2}$"


class SlurmSettings(_Strict):
    """What a Slurm job of a partition asks for; ``None`` leaves the choice to the cluster's defaults.

    The registry's top-level ``[slurm]`` table holds the defaults; an entry's ``slurm`` table
    overrides them field by field (``ModelRegistry.slurm_for``). GPUs come from the entry's ``gpus``.
    """

    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    cpus: int | None = Field(default=None, ge=1, le=1024)
    mem: str | None = Field(default=None, pattern=_SLURM_MEM)
    #: The job's time limit; without one the platform's estimate sets it (``argassets estimate``).
    time: str | None = Field(default=None, pattern=_SLURM_TIME)

    def merged_over(self, defaults: SlurmSettings) -> SlurmSettings:
        """These settings with every unset field taken from ``defaults``."""
        own = self.model_dump(exclude_none=True)
        return SlurmSettings.model_validate({**defaults.model_dump(exclude_none=True), **own})


class Price(_Strict):
    """What an ``openai`` entry's provider charges, in US dollars per million tokens."""

    input_per_mtok: float = Field(ge=0.0)
    output_per_mtok: float = Field(ge=0.0)


class ModelEntry(_Strict):
    """One judge of the registry."""

    name: str
    backend: Backend
    #: Names of the studies (:mod:`argassets.platform.study`) this judge takes part in.
    studies: list[Annotated[str, AfterValidator(_known_study)]] = Field(min_length=1)
    model_id: str | None = None
    family: str | None = None
    size_class: Literal["baseline", "tiny", "small", "medium", "large"] | None = None
    #: Tensor-parallel size for vLLM, and the GPUs a run of this partition asks for.
    gpus: int = Field(default=0, ge=0, le=64)
    gpu_memory_utilization: float = Field(default=0.9, gt=0.0, le=1.0)
    max_model_len: int | None = Field(default=None, ge=256)
    #: ``vllm`` backend: ``gpu`` (CUDA, ``gpus`` >= 1) or ``cpu`` (vLLM's CPU build, ``gpus`` = 0).
    device: Literal["gpu", "cpu"] = "gpu"
    #: ``vllm`` backend: KV cache size in GiB (default: what ``gpu_memory_utilization`` leaves).
    kv_cache_gib: float | None = Field(default=None, gt=0.0)
    #: ``vllm`` backend: skip torch.compile (faster start, slower steps).
    enforce_eager: bool = False
    #: ``vllm`` backend: the dtype vLLM computes in (``auto``: the checkpoint's). ``cpu_native`` (device
    #: ``cpu`` only): bfloat16 where the CPU has native bfloat16 (AVX512-BF16/AMX), else float32, since
    #: emulated bfloat16 products are about 30x slower (argassets.platform.judging.engines.cpu_dtype).
    dtype: Literal["auto", "bfloat16", "float16", "float32", "cpu_native"] = "auto"
    #: Requests per batch (one cache commit each); default depends on the backend.
    batch_size: int | None = Field(default=None, ge=1)
    sampling: Sampling = Sampling()
    reasoning: bool = False
    position_bias: bool = False
    seed: int = 0
    #: Per study, the part of it this judge answers, validated by the study's scope model:
    #: ``scope.<study> = { ... }``. A flat ``scope = { ... }`` is shorthand: each field goes to the
    #: entry's studies whose scope model declares it.
    scope: dict[str, SerializeAsAny[StudyScope]] = Field(default_factory=dict)
    #: ``openai`` backend: names of the environment variables holding the endpoint and key.
    base_url_env: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = Field(default=8, ge=1, le=512)
    #: ``import`` backend: file of judgments made elsewhere, and its format.
    path: str | None = None
    format: Literal["tidy", "published_tsv"] | None = None
    #: ``llama_cpp`` backend: a GGUF file, or a Python package that ships one. ``vllm`` backend: the
    #: GGUF is dequantised once into a safetensors folder (argassets.platform.judging.engines.vllm_model)
    #: and vLLM loads that; ``model_id`` stays the model's name.
    gguf_path: str | None = None
    gguf_package: str | None = None
    n_ctx: int = Field(default=2048, ge=256)
    description: str | None = None
    #: The model's name in a paper's published results (Study A: ``llama-70B-big``, ...); its
    #: configurations are then reported beside the published ones, with deltas and ``reproduced``.
    published_as: str | None = Field(default=None, min_length=1)
    #: Slurm resources of this entry's jobs, over the registry's ``[slurm]`` defaults.
    slurm: SlurmSettings = SlurmSettings()
    #: Completions per second, for estimates before the entry has run (measured runs take precedence).
    throughput: float | None = Field(default=None, gt=0.0)
    #: ``openai`` backend: the provider's price, for cost estimates and the budget.
    price: Price | None = None
    #: ``openai`` backend: the server applies its own sampling defaults (a hosted API that refuses
    #: ``top_k``/``min_p``/``repetition_penalty``): only the OpenAI fields are sent, and the
    #: partition's metadata says that the draws may come from a truncated distribution.
    server_sampling_defaults: bool = False
    #: ``sample``: every run drawn by the engine. ``label_probabilities``: one forward pass per
    #: prompt (one token, its log-probabilities), the runs drawn from the label distribution with
    #: the run seeds (docs/judgments.md, "Probabilities mode").
    mode: Literal["sample", "label_probabilities"] = "sample"

    @field_validator("name")
    @classmethod
    def _name_is_a_partition_key(cls, value: str) -> str:
        if not is_valid_partition_key(value):
            raise ValueError(f"must be {NAME_RULE}")
        return value

    @field_validator("studies")
    @classmethod
    def _studies_unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("lists a study twice")
        return value

    @field_validator("scope", mode="before")
    @classmethod
    def _scope_per_study(cls, value: Any, info: ValidationInfo) -> dict[str, StudyScope]:
        studies = info.data.get("studies")
        if studies is None:  # already reported as invalid
            return {}
        return scopes_by_study(value, studies)

    @model_validator(mode="after")
    def _backend_requirements(self) -> ModelEntry:
        if self.backend in VLLM_BACKENDS | {"openai"} and not self.model_id:
            raise ValueError(f"backend '{self.backend}' needs 'model_id'")
        if self.backend in VLLM_BACKENDS and self.device == "gpu" and self.gpus < 1:
            raise ValueError("backend 'vllm' needs 'gpus' >= 1 (the tensor-parallel size)")
        if self.backend in VLLM_BACKENDS and self.device == "cpu" and self.gpus != 0:
            raise ValueError("backend 'vllm' with device 'cpu' runs on no GPU: set 'gpus' = 0")
        if self.device == "cpu" and self.backend not in VLLM_BACKENDS:
            raise ValueError("'device' only applies to backend 'vllm'")
        if self.dtype == "cpu_native" and not (self.backend in VLLM_BACKENDS and self.device == "cpu"):
            raise ValueError("dtype 'cpu_native' only applies to backend 'vllm' with device 'cpu'")
        if self.price is not None and self.backend != "openai":
            raise ValueError("'price' only applies to backend 'openai'")
        if self.backend == "import" and not self.path:
            raise ValueError("backend 'import' needs 'path'")
        if self.backend == "llama_cpp" and not (self.gguf_path or self.gguf_package):
            raise ValueError("backend 'llama_cpp' needs 'gguf_path' or 'gguf_package'")
        if self.server_sampling_defaults and self.backend != "openai":
            raise ValueError("'server_sampling_defaults' only applies to backend 'openai'")
        if self.mode == "label_probabilities" and self.backend not in LOGPROB_BACKENDS:
            raise ValueError(
                f"mode 'label_probabilities' needs log-probabilities: backend one of {sorted(LOGPROB_BACKENDS)}"
            )
        return self

    @property
    def is_baseline(self) -> bool:
        return self.backend in BASELINE_BACKENDS

    def sampling_for(self, defaults: SamplingParams) -> SamplingParams:
        """A study's protocol sampling, each field overridden by the entry's ``sampling`` when set.

        The seed falls back to the protocol's, and to the entry's ``seed`` when the protocol sets none.
        """
        s = self.sampling
        seed = s.seed if s.seed is not None else defaults.seed if defaults.seed is not None else self.seed
        return replace(
            defaults,
            temperature=float(defaults.temperature if s.temperature is None else s.temperature),
            top_p=float(defaults.top_p if s.top_p is None else s.top_p),
            seed=int(seed),
            max_tokens=int(defaults.max_tokens if s.max_tokens is None else s.max_tokens),
        )

    def scope_text(self, study: str) -> str:
        """The entry's scope in ``study``, described ("full" when it restricts nothing there)."""
        scope = self.scope.get(study)
        return scope.describe() if scope is not None else "full"

    def takes_part_in(self, study: str) -> bool:
        return study in self.studies

    def import_file(self, data_root: Path | None) -> Path:
        """The file of an ``import`` entry: an absolute ``path`` as is, a relative one below the
        published-data folder (``$ARGASSETS_DATA_DIR``, default ``../shared/data``).

        The one rule for relative paths in the registry, whatever the format and the study.
        """
        path = Path(self.path or "")
        if path.is_absolute():
            return path
        if data_root is None:
            raise FileNotFoundError(
                f"model '{self.name}': relative path '{self.path}' resolves against the published-data folder, "
                "but none is configured (set ARGASSETS_DATA_DIR)"
            )
        return data_root / path


class ModelRegistry(_Strict):
    """All judges, in file order, with unique names."""

    models: list[ModelEntry]
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
