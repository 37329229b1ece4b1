"""The neutral evaluation record a study builds from its reports, written out by :mod:`.eee`.

A judge is evaluated against people: each :class:`MetricResult` is one figure (a metric of one
configuration), with the judges behind it (one for a judge, several for a jury) and, where the
study has one, the human baseline on the same task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: Deployment and weight availability, as Every Eval Ever names them.
DEPLOYMENTS = ("self_deployed", "externally_managed", "unknown")
AVAILABILITY = ("open_weights", "closed_weights", "unknown")
AGGREGATIONS = ("majority_vote", "average", "weighted_average", "median")


@dataclass(frozen=True)
class Model:
    """A judge: its registry name, a ``developer/name`` id (Hugging Face style) and how it ran."""

    name: str
    id: str
    developer: str = ""
    engine: str = ""
    deployment: str = "unknown"
    availability: str = "unknown"
    temperature: float | None = None
    details: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if "/" not in self.id.strip("/"):
            raise ValueError(f"model {self.name!r}: id {self.id!r} must read developer/name")
        if self.deployment not in DEPLOYMENTS or self.availability not in AVAILABILITY:
            raise ValueError(f"model {self.name!r}: deployment or availability not among {DEPLOYMENTS}, {AVAILABILITY}")


@dataclass(frozen=True)
class Metric:
    """What a figure measures: its id, a display name, its direction and its bounds (None: unbounded)."""

    id: str
    name: str
    lower_is_better: bool
    min_score: float | None
    max_score: float | None
    unit: str = ""


@dataclass(frozen=True)
class MetricResult:
    """One figure of one configuration (e.g. Cohen's kappa, dimension logic, few-shot prompt)."""

    result_id: str
    evaluation_name: str
    metric: Metric
    score: float
    num_samples: int | None
    judges: Sequence[Model]
    prompt: str
    aggregation: str | None = None
    human_baseline: float | None = None
    details: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.judges:
            raise ValueError(f"{self.result_id}: a result needs at least one judge")
        if self.aggregation is not None and self.aggregation not in AGGREGATIONS:
            raise ValueError(f"{self.result_id}: aggregation {self.aggregation!r} not among {AGGREGATIONS}")


@dataclass(frozen=True)
class Dataset:
    """The data the judges were evaluated on: its name, where it is published, its licence."""

    name: str
    urls: Sequence[str]
    licence: str
    citation: str
    description: str


@dataclass(frozen=True)
class EvaluationRecord:
    """Every figure of one model (judge or jury) in one study."""

    study: str
    model: Model
    dataset: Dataset
    results: Sequence[MetricResult]
    #: ``evaluation_run`` when the platform judged (or imported per-item outputs), ``documentation``
    #: when the figures are only a paper's published aggregates.
    source_type: str = "evaluation_run"
    details: Mapping[str, str] = field(default_factory=dict)


def registry_model(name: str, entry: object | None, developer: str = "argassets") -> Model:
    """The :class:`Model` of a registry entry (a ``ModelEntry``), or of a name the registry lacks
    (a baseline of a report, a paper's configuration): then ``<developer>/<name>``."""
    model_id = getattr(entry, "model_id", None) if entry is not None else None
    backend = str(getattr(entry, "backend", "")) if entry is not None else ""
    local = bool(getattr(entry, "runs_open_weights_here", False))
    baseline = bool(getattr(entry, "is_baseline", False))
    sampling = getattr(entry, "sampling", None)
    return Model(
        name=name,
        id=model_id if model_id and "/" in model_id else f"{developer}/{name.replace(':', '-')}",
        developer=model_id.split("/")[0] if model_id and "/" in model_id else developer,
        engine=getattr(entry, "engine_label", None) or backend,
        deployment="self_deployed" if local or baseline else "unknown",
        availability="open_weights" if local else "unknown",
        temperature=getattr(sampling, "temperature", None),
        details={"registry_backend": backend} if backend else {},
    )
