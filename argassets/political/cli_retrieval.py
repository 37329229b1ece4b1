"""``argassets retrieve | debate | persona``: graph-based retrieval and generation from a terminal.

Registered by the ``argassets`` parser (:mod:`argassets.cli`, :func:`add_commands`). The embedded store reads the tables a
run wrote (``argassets run-default``); ``--store neo4j`` queries the server of ``NEO4J_URI``,
``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE`` after ``neo4j_political_kb_embeddings``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from argassets.platform.operations import remedies
from argassets.platform.study import Studies
from argassets.political.neo4j_graph import RELATIONSHIP_TYPES
from argassets.political.retrieval.api import Retriever, debate, persona
from argassets.political.retrieval.query import (
    METHODS,
    PoliticalFilter,
    RetrievalError,
    RetrievalQuery,
    RetrievalResult,
    canonical_query,
    parse_position_range,
)

#: The tables the embedded store reads, and what to materialise when one is missing.
TABLES = (
    "political_kb_arguments",
    "political_kb_relations",
    "political_argument_embeddings",
)
STATS_TABLES = ("political_model_stats", "political_ensembles")


class CommandError(RuntimeError):
    """Shown as one line by the CLI (exit status 2)."""


def _out(line: str) -> None:
    print(line, flush=True)


def _csv(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


def build_query(args: argparse.Namespace, utterance: str) -> RetrievalQuery:
    """The query the options describe (validated)."""
    political = None
    if args.system:
        low, high = parse_position_range(args.position) if args.position else (None, None)
        political = PoliticalFilter(args.system, low, high, args.max_std, args.max_prob_na)
    elif args.position or args.max_std is not None or args.max_prob_na is not None:
        raise RetrievalError("--position, --max-std and --max-prob-na need --system (a model or ensemble, e.g. E1)")
    return RetrievalQuery(
        utterance=utterance,
        method=args.method,
        k=args.k,
        force=args.force,
        relations=_csv(args.relations) or RELATIONSHIP_TYPES,
        neighbour_forces=_csv(args.neighbour_forces) or None,
        direction=args.direction,
        filter=political,
    ).validate()


def _embedded_store() -> tuple[Any, str]:
    from argassets.platform.resources.storage import read_stored_table
    from argassets.political.retrieval.embedded_store import EmbeddedStore, positions_table

    frames = {name: read_stored_table(name) for name in (*TABLES, *STATS_TABLES)}
    missing = [name for name in TABLES if frames[name] is None]
    if missing:
        raise CommandError(remedies.missing(f"the embedded store lacks {', '.join(missing)}"))
    positions = positions_table([frames[name] for name in STATS_TABLES])
    store = EmbeddedStore.from_tables(
        frames["political_kb_arguments"],
        frames["political_kb_relations"],
        frames["political_argument_embeddings"],
        positions,
    )
    return store, store.model


@contextmanager
def open_retriever(args: argparse.Namespace) -> Iterator[Retriever]:
    """The retriever of ``--store`` with the embedding model of ``--model-dir`` (default all-MiniLM-L6-v2)."""
    from argassets.political.retrieval.model import dtype_of, load_embedding_model

    if args.store == "embedded":
        store, store_model = _embedded_store()
        # the query is embedded in the dtype the store's embeddings were computed in
        yield Retriever(store, load_embedding_model(args.model_dir, dtype=dtype_of(store_model)), store_model)
        return
    from argassets.political import neo4j_graph as ng
    from argassets.political.retrieval.neo4j_store import Neo4jStore

    env = os.environ
    settings = ng.Neo4jSettings(
        env.get("NEO4J_URI", "bolt://localhost:7687"),
        env.get("NEO4J_USER", "neo4j"),
        env.get("NEO4J_PASSWORD", ""),
        env.get("NEO4J_DATABASE", "neo4j"),
    )
    driver = ng.connect(settings)
    try:
        neo4j = Neo4jStore(driver, settings.database, exact=args.exact)
        stored = neo4j.embedding_model()
        yield Retriever(neo4j, load_embedding_model(args.model_dir, dtype=dtype_of(stored)), stored)
    finally:
        driver.close()


def print_results(results: list[RetrievalResult], as_json: bool, floor: float | None = None) -> None:
    """Each result above the similarity ``floor``, grouped; a line already shown in its group is left out."""
    kept = [r for r in results if floor is None or r.similarity >= floor]
    if as_json:
        for r in kept:
            _out(json.dumps(r.as_dict(), ensure_ascii=False))
        return
    if not kept:
        _out("no results (loosen the filter, or choose other relations or forces)")
    group = None
    shown: set[tuple[Any, str]] = set()
    repeated = 0
    for r in kept:
        key = (r.relation, r.direction, r.neighbour_force)
        where = "" if r.position is None else f" position {r.position:.1f}"
        line = f"[{r.similarity:.3f}{where}] {r.example_line('locution')}"
        if (key, line) in shown:
            repeated += 1
            continue
        shown.add((key, line))
        if key != group and r.relation:
            group = key
            _out(f"== {r.relation} ({r.direction}, neighbour {r.neighbour_force or 'no force'})")
        _out(line)
    below = len(results) - len(kept)
    if below:
        _out(f"({below} result(s) below similarity {floor} left out: --min-similarity to change)")
    if repeated:
        _out(f"({repeated} repeated line(s) left out: the same texts under another argument id; --json shows them)")


def retrieve_with(args: argparse.Namespace, utterance: str) -> list[RetrievalResult]:
    """The results of the query the options describe, with forces and the system spelt as the
    embedded store spells them (a wrong case is corrected, a wrong name said, never no results)."""
    query = build_query(args, utterance)
    with open_retriever(args) as retriever:
        store = retriever.store
        if hasattr(store, "forces") and hasattr(store, "systems"):
            query = canonical_query(query, store.forces, store.systems)
        return retriever.retrieve(query)


def cmd_retrieve(args: argparse.Namespace) -> int:
    print_results(retrieve_with(args, args.utterance), args.json, args.min_similarity)
    return 0


def _generation_inputs(args: argparse.Namespace, utterance: str | None) -> tuple[list[RetrievalResult], Any, Any]:
    from argassets.platform.operations.machine import local_machine
    from argassets.platform.operations.preflight import refusals
    from argassets.platform.registry.entries import RegistryError, load_registry
    from argassets.platform.storage.judgment_cache import open_judgment_cache
    from argassets.platform.storage.judgment_cache.location import default_cache_location

    try:
        models = load_registry(studies=args.studies)
        entry = models.get(args.model)
    except (KeyError, RegistryError) as exc:
        raise CommandError(f"--model {args.model!r}: {exc.args[0] if exc.args else exc}") from None
    refused = refusals(models, [entry.name], local_machine())
    if refused:
        raise CommandError(refused[entry.name].line)
    results: list[RetrievalResult] = []
    if not args.no_retrieval:
        if not utterance:
            raise CommandError("retrieval needs a text to search with (--topic), or --no-retrieval")
        floor = args.min_similarity
        results = [r for r in retrieve_with(args, utterance) if r.similarity >= floor]
    return results, entry, open_judgment_cache(default_cache_location())


def _range(args: argparse.Namespace) -> tuple[float | None, float | None]:
    return parse_position_range(args.position) if args.position else (None, None)


def _print_answer(answer: Any, as_json: bool) -> None:
    if as_json:
        _out(json.dumps(answer.as_dict(), ensure_ascii=False))
        return
    _out(answer.text)
    cached = " (from the judgment cache)" if answer.from_cache else ""
    _out(f"-- {answer.model} [{answer.model_key}], {len(answer.retrieved_argument_ids)} retrieved arguments{cached}")


def cmd_debate(args: argparse.Namespace) -> int:
    results, entry, cache = _generation_inputs(args, args.utterance)
    low, high = _range(args)
    with cache:
        answer = debate(args.utterance, low, high, results, entry, cache, max_examples=args.max_examples)
    _print_answer(answer, args.json)
    return 0


def cmd_persona(args: argparse.Namespace) -> int:
    results, entry, cache = _generation_inputs(args, args.topic)
    low, high = _range(args)
    with cache:
        answer = persona(low, high, results, entry, cache, max_examples=args.max_examples)
    _print_answer(answer, args.json)
    return 0


#: Results whose cosine is below this are not shown: a negative cosine points away from the utterance.
DEFAULT_MIN_SIMILARITY = 0.0


def _similarity(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not -1.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"a cosine lies in -1..1, got {value}")
    return value


def _retrieval_options(parser: argparse.ArgumentParser, method_default: str) -> None:
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=method_default,
        help=f"vector: nearest arguments; typical: with every relation's neighbours; chosen: --relations only (default {method_default})",
    )
    parser.add_argument(
        "--k", type=_at_least(1), default=5, help="results per method (per relation group for graph methods), 1 or more"
    )
    parser.add_argument("--force", help="illocutionary force of the similar argument (e.g. Asserting)")
    parser.add_argument("--relations", help=f"comma-separated, for --method chosen ({', '.join(RELATIONSHIP_TYPES)})")
    parser.add_argument("--neighbour-forces", help="comma-separated forces of the neighbour, for --method chosen")
    parser.add_argument(
        "--direction",
        choices=["incoming", "outgoing", "both"],
        default="both",
        help="incoming: neighbour -[relation]-> argument; outgoing: argument -[relation]-> neighbour (default both)",
    )
    parser.add_argument(
        "--system", help="model or ensemble whose positions filter (e.g. E1, published-gpt4o; case does not matter)"
    )
    parser.add_argument("--position", help="MIN-MAX mean position on 0-100 (e.g. 60-90)")
    parser.add_argument("--max-std", type=float, help="largest standard deviation of the system's positions")
    parser.add_argument("--max-prob-na", type=float, help="largest probability of NA (no position) of the system")
    parser.add_argument(
        "--store",
        choices=["embedded", "neo4j"],
        default="embedded",
        help="embedded: the tables of run-default (default); neo4j: the server of NEO4J_URI",
    )
    parser.add_argument("--exact", action="store_true", help="neo4j: scan instead of the vector index")
    parser.add_argument("--model-dir", help="sentence-transformers folder (default: packaged all-MiniLM-L6-v2)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument(
        "--min-similarity",
        type=_similarity,
        default=DEFAULT_MIN_SIMILARITY,
        help=f"leave out results less similar than this cosine, -1 to 1 (default {DEFAULT_MIN_SIMILARITY}: "
        "none that points away from the utterance)",
    )


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Errors of the retrieval library shown as one line (the CLI's exit status 2)."""

    def run(args: argparse.Namespace) -> int:
        from argassets.political.neo4j_export import Neo4jExportError
        from argassets.political.retrieval.generation import GenerationError
        from argassets.political.retrieval.model import EmbeddingModelError
        from argassets.political.retrieval.neo4j_store import Neo4jRetrievalError

        try:
            return command(args)
        except (
            RetrievalError,
            CommandError,
            GenerationError,
            Neo4jExportError,
            Neo4jRetrievalError,
            EmbeddingModelError,
            LookupError,
        ) as exc:
            print(f"argassets: error: {exc}", file=sys.stderr)
            return 2

    return run


def _at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``minimum`` (a clear one-line error otherwise)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, got {value}")
        return value

    return parse


def add_commands(sub: Any, studies: Studies) -> None:
    """Add ``retrieve``, ``debate`` and ``persona`` to the ``argassets`` subcommands.

    ``studies`` are the code location's: the registry a command reads is validated against them.
    """
    retrieve = sub.add_parser("retrieve", help="arguments of the KB near an utterance (graph-based retrieval)")
    retrieve.add_argument("utterance", help="what the user said (the query)")
    _retrieval_options(retrieve, "vector")
    retrieve.set_defaults(func=_guarded(cmd_retrieve))

    deb = sub.add_parser("debate", help="a debater's answer to an utterance, from retrieved examples")
    deb.add_argument("utterance", help="what the debater answers")
    deb.add_argument("--model", required=True, help="registry entry (vllm, openai or llama_cpp)")
    deb.add_argument("--no-retrieval", action="store_true", help="answer without retrieved examples")
    deb.add_argument(
        "--max-examples", type=_at_least(0), default=8, help="retrieved examples shown to the model at most (0 or more)"
    )
    _retrieval_options(deb, "typical")
    deb.set_defaults(func=_guarded(cmd_debate), studies=studies)

    per = sub.add_parser("persona", help="a political persona, from retrieved arguments")
    per.add_argument("--topic", help="text to retrieve the persona's arguments with")
    per.add_argument("--model", required=True, help="registry entry (vllm, openai or llama_cpp)")
    per.add_argument("--no-retrieval", action="store_true", help="write the persona without retrieved arguments")
    per.add_argument(
        "--max-examples",
        type=_at_least(0),
        default=8,
        help="retrieved arguments shown to the model at most (0 or more)",
    )
    _retrieval_options(per, "vector")
    per.set_defaults(func=_guarded(cmd_persona), studies=studies)
