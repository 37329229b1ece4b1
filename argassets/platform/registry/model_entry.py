"""One judge of the registry: the fields every engine shares, and what each engine must say about itself.

Each judge engine subclasses :class:`ModelEntry` in its own module with its typed fields and registers
it with :func:`judge_engine`; the registry validates each entry with its engine's class (docs/judgments.md,
"Engines").
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from argassets.platform.judging.interface import Judge, JudgeSettings, PromptTokenizer, SamplingParams
from argassets.platform.registry.adaptive import AdaptiveJudging
from argassets.platform.registry.needs import MachineNeeds
from argassets.platform.registry.scopes import scopes_by_study
from argassets.platform.study import Studies, StudyScope

if TYPE_CHECKING:
    from argassets.platform.judging.batch_files import BatchFormat
    from argassets.platform.judging.prefill_floor import ReuseModel

_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_ENGINE_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")

#: What a model name (hence a partition key) may be: quotes, spaces, slashes and the like never are.
NAME_RULE = "1-64 characters of lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"


class PartitionKeyError(ValueError):
    """A ``judge_models`` partition key that is not a valid model name."""


class EngineRegistrationError(TypeError):
    """A judge engine that cannot be registered; the message names the engine and what it lacks."""


def is_valid_partition_key(key: object) -> bool:
    """Whether ``key`` can be a model name and ``judge_models`` partition key."""
    return isinstance(key, str) and bool(_NAME_PATTERN.fullmatch(key))


def validate_partition_key(key: object, where: str = "partition key") -> str:
    """``key`` when it is a valid model name, else :class:`PartitionKeyError` naming it and the rule.

    Partition keys enter from the registry, the CLI and the Dagster UI's "add partition" dialog
    (which accepts any text); every entry point checks them with this.
    """
    if not is_valid_partition_key(key):
        raise PartitionKeyError(f"{where} {key!r} is not a valid model name: it must be {NAME_RULE}")
    assert isinstance(key, str)
    return key


#: The validation context key that holds the code location's :class:`Studies` (see ``parse_registry``).
STUDIES_CONTEXT = "studies"


def context_studies(info: ValidationInfo) -> Studies | None:
    """The studies the registry is validated against; ``None`` when it is read without them.

    Without them (the Slurm launcher's reading, or an entry built in code) study names are not
    checked, and a scope must already be validated: a raw scope table is an error, except in a
    reading that asked for no studies, which leaves scopes out.
    """
    context = info.context or {}
    return context.get(STUDIES_CONTEXT)


def _known_study(name: str, info: ValidationInfo) -> str:
    known = context_studies(info)
    if known is not None and name not in known.names:
        raise ValueError(f"unknown study '{name}' (known: {', '.join(known.names)})")
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
    overrides them field by field (``ModelRegistry.slurm_for``). GPUs come from the entry's engine.
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


@dataclass(frozen=True)
class JudgmentsFile:
    """A file of judgments made elsewhere, named by an entry whose engine imports instead of judging."""

    path: str
    #: ``tidy`` (read by the import engine) or a study's own released format (e.g. ``published_tsv``).
    format: str
    model: str

    def resolve(self, data_root: Path | None) -> Path:
        """An absolute ``path`` as is, a relative one below the published-data folder (``data_root``).

        The one rule for relative paths in the registry, whatever the format and the study.
        """
        path = Path(self.path)
        if path.is_absolute():
            return path
        if data_root is None:
            raise FileNotFoundError(
                f"model '{self.model}': relative path '{self.path}' resolves against the published-data folder, "
                "but none is configured (set ARGASSETS_DATA_DIR)"
            )
        return data_root / path


class ModelEntry(_Strict):
    """One judge of the registry: the fields every engine shares; each engine's subclass adds its own.

    The class variables and methods below are what the platform asks an engine (docs/judgments.md,
    "Engines"); an engine must implement the abstract ones, the others have defaults.
    """

    name: str
    #: The engine's registered name; each engine's subclass narrows it to ``Literal["<name>"]``.
    backend: str
    #: Names of the studies (:mod:`argassets.platform.study`) this judge takes part in.
    studies: list[Annotated[str, AfterValidator(_known_study)]] = Field(min_length=1)
    model_id: str | None = None
    family: str | None = None
    size_class: Literal["baseline", "tiny", "small", "medium", "large"] | None = None
    #: Requests per batch (one cache commit each); default: the engine's (:meth:`engine_batch_size`).
    batch_size: int | None = Field(default=None, ge=1)
    sampling: Sampling = Sampling()
    reasoning: bool = False
    position_bias: bool = False
    seed: int = 0
    #: Per study, the part of it this judge answers, validated by the study's scope model:
    #: ``scope.<study> = { ... }``. A flat ``scope = { ... }`` is shorthand: each field goes to the
    #: entry's studies whose scope model declares it.
    scope: dict[str, SerializeAsAny[StudyScope]] = Field(default_factory=dict)
    description: str | None = None
    #: The model's name in a paper's published results (Study A: ``llama-70B-big``, ...); its
    #: configurations are then reported beside the published ones, with deltas and ``reproduced``.
    published_as: str | None = Field(default=None, min_length=1)
    #: Slurm resources of this entry's jobs, over the registry's ``[slurm]`` defaults.
    slurm: SlurmSettings = SlurmSettings()
    #: Completions per second, for estimates before the entry has run (measured runs take precedence).
    throughput: float | None = Field(default=None, gt=0.0)
    #: ``sample``: every run drawn by the engine. ``label_probabilities``: one forward pass per
    #: prompt (one token, its log-probabilities), the runs drawn from the label distribution with
    #: the run seeds (docs/judgments.md, "Probabilities mode").
    mode: Literal["sample", "label_probabilities"] = "sample"
    #: Judge the entry's pairwise partitions in rounds and stop on a stated criterion; ``None``
    #: (the default) judges every request (docs/study_design.md, "Adaptive LLM judging").
    adaptive: AdaptiveJudging | None = None

    #: Labelled as a baseline in every report (no model behind it).
    is_baseline: ClassVar[bool] = False
    #: Returns log-probabilities, so ``mode = "label_probabilities"`` is possible.
    returns_logprobs: ClassVar[bool] = False
    #: A language model that writes free text (the political retrieval's debater and persona).
    generates_text: ClassVar[bool] = False
    #: Its completions go to the persistent judgment cache (an import is re-read from its file instead).
    caches_judgments: ClassVar[bool] = True
    #: Run by the registry sensor and the nightly schedule unless ``$ARGASSETS_RUN_BACKENDS`` says otherwise.
    runs_automatically_by_default: ClassVar[bool] = True
    #: Open weights run on the platform's own machines (exports say ``self_deployed``, ``open_weights``).
    runs_open_weights_here: ClassVar[bool] = False
    #: The inference engine's name in exported records (default: the backend's).
    engine_label: ClassVar[str | None] = None

    @abstractmethod
    def identity_fields(self) -> dict[str, Any]:
        """What decides this judge's answers, as JSON-able fields of its cache identity
        (:func:`argassets.platform.judging.identity.model_identity`): required of every engine."""

    @abstractmethod
    def build_judge(self, settings: JudgeSettings) -> Judge:
        """The judge of this entry; nothing heavy is loaded before its first batch."""

    @abstractmethod
    def engine_batch_size(self) -> int:
        """Requests per batch (one cache commit each) when the entry sets no ``batch_size``."""

    @property
    def default_batch_size(self) -> int:
        """Requests per batch: the entry's ``batch_size``, else its engine's."""
        return self.batch_size if self.batch_size is not None else self.engine_batch_size()

    @property
    def gpus_needed(self) -> int:
        """GPUs a run of this entry's partition asks for (Slurm, Kubernetes, the GPU pool)."""
        return 0

    @property
    def uses_server_sampling_defaults(self) -> bool:
        """Whether an endpoint applies its own sampling defaults (only what the OpenAI API names is sent)."""
        return False

    @property
    def judgments_file(self) -> JudgmentsFile | None:
        """The file this entry's judgments are imported from; ``None`` when its engine judges."""
        return None

    def prompt_tokenizer(self) -> PromptTokenizer | None:
        """The model's own tokenizer when it is on this machine, for estimates; ``None``: characters / 4."""
        return None

    def prefix_reuse(self) -> ReuseModel | None:
        """How the engine reuses prompt tokens across prompts, for the prefill floor
        (docs/judgments.md, "Prefix order"); ``None``: not known (an endpoint, a baseline)."""
        return None

    def batch_format(self, structured_output: str) -> BatchFormat | None:
        """The engine's requests as OpenAI-Batch lines (docs/judgments.md, "Batch files");
        ``None``: the engine has no batch files."""
        return None

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What sending these tokens costs in US dollars, when the entry declares a price."""
        return None

    def machine_needs(self, data_root: Path | None) -> MachineNeeds:
        """What a run asks of the machine it runs on (the pre-flight's question): by default its
        GPUs and its judgments file (resolved below ``data_root``); engines add their own needs."""
        file = self.judgments_file
        if file is None:
            files: tuple[Path, ...] = ()
        else:
            try:
                files = (file.resolve(data_root),)
            except FileNotFoundError:
                files = (Path(file.path),)
        engine = "a baseline" if self.is_baseline else ("an import file" if file else f"the {self.backend} engine")
        return MachineNeeds(engine, gpus=self.gpus_needed, files=files)

    @classmethod
    def available_here(cls) -> bool:
        """Whether this machine can run the engine (its optional package is installed)."""
        return True

    @model_validator(mode="before")
    @classmethod
    def _fields_of_other_engines(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            _refuse_fields_of_other_engines(cls, data)
        return data

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
        known = context_studies(info)
        if known is None and info.context is not None and STUDIES_CONTEXT in info.context:
            return {}  # read without the studies on purpose: scopes left out
        return scopes_by_study(value, studies, known)

    @model_validator(mode="after")
    def _mode_needs_logprobs(self) -> ModelEntry:
        if self.mode == "label_probabilities" and not self.returns_logprobs:
            able = sorted(name for name in engine_names() if engine_type(name).returns_logprobs)
            raise ValueError(f"mode 'label_probabilities' needs log-probabilities: backend one of {able}")
        return self

    @model_validator(mode="after")
    def _adaptive_needs_pairs(self, info: ValidationInfo) -> ModelEntry:
        known = context_studies(info)
        if self.adaptive is None or known is None:
            return self
        unpaired = [name for name in self.studies if name in known.names and known.get(name).adaptive_pairs is None]
        if unpaired:
            raise ValueError(
                f"'adaptive' judges pairwise comparisons in rounds; study '{unpaired[0]}' declares no pairs "
                "(StudyDefinition.adaptive_pairs): give that study its own entry without 'adaptive'"
            )
        return self

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


# --- the engines, registered by name ---------------------------------------------------------------

_ENGINES: dict[str, type[ModelEntry]] = {}
EntryT = TypeVar("EntryT", bound=type[ModelEntry])


def _registration_problems(name: str, entry_type: type) -> list[str]:
    if not (isinstance(entry_type, type) and issubclass(entry_type, ModelEntry)):
        return [f"{entry_type!r} is not a subclass of ModelEntry"]
    problems = []
    if not _ENGINE_NAME_PATTERN.fullmatch(name):
        problems.append("its name must be 1-32 lowercase letters, digits, '_' or '-'")
    backend = entry_type.model_fields["backend"].annotation
    if get_args(backend) != (name,):
        problems.append(f"its 'backend' field must be Literal['{name}'], not {backend}")
    missing = sorted(getattr(entry_type, "__abstractmethods__", ()))
    if "identity_fields" in missing:
        problems.append("it has no cache identity (identity_fields): its answers could be reused for another model")
    problems += [f"it does not implement {method}" for method in missing if method != "identity_fields"]
    return problems


def judge_engine(name: str) -> Callable[[EntryT], EntryT]:
    """Registers a :class:`ModelEntry` subclass as the engine ``name`` (the registry's ``backend``).

    Fails at import when the class cannot be an engine (no cache identity, a method missing, a
    ``backend`` field that is not ``Literal[name]``) or another class has the name already.
    """

    def register(entry_type: EntryT) -> EntryT:
        problems = _registration_problems(name, entry_type)
        if problems:
            raise EngineRegistrationError(f"judge engine '{name}' ({entry_type.__qualname__}): " + "; ".join(problems))
        known = _ENGINES.get(name)
        if known is not None and (known.__module__, known.__qualname__) != (
            entry_type.__module__,
            entry_type.__qualname__,
        ):
            raise EngineRegistrationError(
                f"judge engine '{name}' is registered already, by {known.__module__}.{known.__qualname__}"
            )
        _ENGINES[name] = entry_type
        return entry_type

    return register


def engine_names() -> tuple[str, ...]:
    """The registered engines' names, in registration order."""
    return tuple(_ENGINES)


def engine_type(name: str) -> type[ModelEntry]:
    """The entry class of engine ``name``; :class:`KeyError` naming the known engines otherwise."""
    try:
        return _ENGINES[name]
    except KeyError:
        raise KeyError(f"unknown backend '{name}' (known: {', '.join(_ENGINES)})") from None


def _refuse_fields_of_other_engines(entry_type: type[ModelEntry], data: Mapping[str, Any]) -> None:
    """A field that belongs to other engines is named as such, not as a mere unknown field."""
    for field in data:
        if field in entry_type.model_fields:
            continue
        owners = [name for name, other in _ENGINES.items() if field in other.model_fields]
        if owners:
            error = PydanticCustomError(
                "field_of_other_engine",
                "'{field}' only applies to backend {owners}",
                {"field": field, "owners": " or ".join(f"'{owner}'" for owner in owners)},
            )
            raise ValidationError.from_exception_data(
                entry_type.__name__, [InitErrorDetails(type=error, loc=(field,), input=data[field])]
            )


def _as_engine_entry(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> ModelEntry:
    """A registry entry validated by the class of its engine (the discriminated union on ``backend``),
    in the registry's validation context (its studies)."""
    if isinstance(value, ModelEntry) or not isinstance(value, Mapping):
        return handler(value)
    backend = value.get("backend")
    entry_type = _ENGINES.get(backend) if isinstance(backend, str) else None
    if entry_type is None:
        error = PydanticCustomError(
            "unknown_backend",
            "{problem} (known: {known})",
            {
                "problem": "missing: every entry names its engine"
                if backend is None
                else f"unknown backend {backend!r}",
                "known": ", ".join(_ENGINES),
            },
        )
        raise ValidationError.from_exception_data(
            "ModelEntry", [InitErrorDetails(type=error, loc=("backend",), input=backend)]
        )
    return entry_type.model_validate(value, context=info.context)


#: A registry entry of any registered engine, validated by its engine's class.
EngineEntry = Annotated[SerializeAsAny[ModelEntry], WrapValidator(_as_engine_entry)]
_ENTRY_ADAPTER: TypeAdapter[ModelEntry] = TypeAdapter(EngineEntry)


def model_entry(**fields: Any) -> ModelEntry:
    """One entry, validated by the class of the engine its ``backend`` names (as in the registry file)."""
    return _ENTRY_ADAPTER.validate_python(fields)
