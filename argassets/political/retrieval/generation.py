"""Generation from retrieved arguments: a persuasive debater and a persona writer, with or without
retrieval, answered by any registry entry through the judgment cache (a repeat costs nothing).

The prompts follow the authors' release in substance (our wording): the debater gets a political
range and answers an utterance, optionally shown examples written as
``'neighbour' -[RELATION]-> 'similar'``; the persona writer describes a person holding the
retrieved arguments. Every answer records its prompt, the retrieved argument ids, the model's cache
key (name and identity) and the sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.identity import cache_model_key
from argassets.platform.judging.incremental import judge_incrementally
from argassets.platform.judging.interface import ChatRequest, Judge, SamplingParams
from argassets.platform.registry.model_entry import ModelEntry, engine_names, engine_type
from argassets.platform.storage.judgment_cache.interface import JudgmentStore
from argassets.political.retrieval.query import RetrievalResult

DEFAULT_SAMPLING = SamplingParams(temperature=0.7, top_p=0.95, seed=0, max_tokens=160)
#: Examples shown to the model at most (small models have 2,048-token windows).
DEFAULT_MAX_EXAMPLES = 8

DEBATER_SYSTEM = (
    "You are a persuasive debater on a televised political debate panel. Your political position is "
    "{range} on a scale from 0 (far left) to 100 (far right). Answer what the audience member says in "
    "at most three sentences, arguing from that position."
)
DEBATER_EXAMPLES = (
    "\n\nHere is how people argued in past debates. Each example links two statements by how one "
    "relates to the other (SUPPORTS, ATTACKS, IS_A_REPHRASE_OF, TRANSITIONS_TO):\n{examples}\n"
    "Use them as a guide to the arguments and the tone of your answer."
)
PERSONA_SYSTEM = "You write short, realistic political personas for a debate simulation."
PERSONA_USER = (
    "Write a persona (name, age, occupation, background, core beliefs, way of speaking) of a British "
    "voter whose political position is {range} on a scale from 0 (far left) to 100 (far right)."
)
PERSONA_EXAMPLES = "\nThe persona has made these arguments in public debates:\n{examples}"


class GenerationError(ValueError):
    """The chosen model cannot generate text (names the entry and its backend)."""


@dataclass(frozen=True)
class GeneratedAnswer:
    """One generated answer and everything needed to reproduce it."""

    kind: str
    text: str
    system_prompt: str
    user_prompt: str
    prompt_sha256: str
    retrieved_argument_ids: list[str]
    model: str
    model_key: str
    sampling: dict[str, object]
    from_cache: bool
    latency_s: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def select_examples(results: Sequence[RetrievalResult], limit: int = DEFAULT_MAX_EXAMPLES) -> list[RetrievalResult]:
    """At most ``limit`` results, taken round-robin over the (relation, direction, neighbour force)
    groups, so that a short prompt still shows supports and attacks alike; the groups whose best
    result is closest to the utterance come first (``results`` are ordered within each group)."""
    if limit < 0:
        raise ValueError(f"max_examples must be 0 or more, got {limit}")
    grouped: dict[tuple[str, str, str], list[RetrievalResult]] = {}
    for result in results:
        grouped.setdefault((result.relation, result.direction, result.neighbour_force), []).append(result)
    # rounded as the stores order, so both stores choose alike; a stable sort keeps ties in order
    groups = sorted(grouped.values(), key=lambda g: -round(max(r.similarity for r in g), 5))
    chosen: list[RetrievalResult] = []
    depth = 0
    while len(chosen) < limit and any(depth < len(g) for g in groups):
        chosen += [g[depth] for g in groups if depth < len(g)][: limit - len(chosen)]
        depth += 1
    return chosen


def describe_range(low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return "anywhere"
    return f"between {0 if low is None else low:g} and {100 if high is None else high:g}"


def _examples(results: Sequence[RetrievalResult], what: str) -> str:
    return "\n".join(f"- {r.example_line(what)}" for r in results)


def debater_request(
    utterance: str,
    low: float | None,
    high: float | None,
    results: Sequence[RetrievalResult] = (),
    what: str = "locution",
) -> ChatRequest:
    """The debater's chat; with ``results`` its system prompt lists them as examples."""
    system = DEBATER_SYSTEM.format(range=describe_range(low, high))
    if results:
        system += DEBATER_EXAMPLES.format(examples=_examples(results, what))
    return ChatRequest(key="debate", system=system, user=utterance)


def persona_request(
    low: float | None, high: float | None, results: Sequence[RetrievalResult] = (), what: str = "locution"
) -> ChatRequest:
    """The persona writer's chat; with ``results`` the persona is grounded in them."""
    user = PERSONA_USER.format(range=describe_range(low, high))
    if results:
        user += PERSONA_EXAMPLES.format(examples=_examples(results, what))
    return ChatRequest(key="persona", system=PERSONA_SYSTEM, user=user)


def generate(
    kind: str,
    request: ChatRequest,
    results: Sequence[RetrievalResult],
    entry: ModelEntry,
    cache: JudgmentStore,
    sampling: SamplingParams = DEFAULT_SAMPLING,
    judge: Judge | None = None,
) -> GeneratedAnswer:
    """Answer ``request`` with the registry ``entry`` (``judge`` when given, e.g. a running engine)."""
    if not entry.generates_text:
        writers = [name for name in engine_names() if engine_type(name).generates_text]
        raise GenerationError(
            f"model '{entry.name}' ({entry.backend}) cannot generate text; use an entry of backend {', '.join(writers)}"
        )
    model_key = cache_model_key(entry)
    own = judge is None
    active = build_judge(entry) if judge is None else judge
    try:
        [completion] = judge_incrementally(active, model_key, [request], sampling, n_runs=1, cache=cache, batch_size=1)
    finally:
        if own:
            active.close()
    return GeneratedAnswer(
        kind=kind,
        text=completion.text.strip(),
        system_prompt=request.system,
        user_prompt=request.user,
        prompt_sha256=request.prompt_sha256,
        retrieved_argument_ids=list(dict.fromkeys(i for r in results for i in (r.argument_id, r.neighbour_id) if i)),
        model=entry.name,
        model_key=model_key,
        sampling=sampling.as_dict(),
        from_cache=completion.from_cache,
        latency_s=completion.latency_s,
    )
