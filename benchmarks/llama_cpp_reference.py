"""What llama.cpp itself reaches on the judge's requests, outside the platform (for bench_vllm.py).

Two references, both on SmolLM2-135M's GGUF, same grammar (A | B | Tie), temperature 1, top-p 1:

- ``sequential``: ``llama_cpp.Llama.create_chat_completion`` called once per (prompt, run), as a
  user of the bindings would; llama-cpp-python reuses the longest cached prefix between calls, so
  the runs of one prompt share its prefill.
- ``parallel``: llama.cpp's batch API with one sequence per run (the pattern of llama.cpp's
  ``batched`` example), driven directly through the platform's decoder
  (``argassets/platform/judging/engines/llama_cpp_batch.py``) without judge, cache or Dagster: each prompt is
  decoded once into all sequences, then the runs are sampled side by side.

Both use ``n_threads`` threads, as the judge does (llama-cpp-python's own default is half the
cores). Both return completions per second and the label counts, so a reader can see they answer the same
kind of thing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Messages = list[dict[str, str]]


def _grammar(choices: Sequence[str]) -> str:
    from argassets.platform.judging.engines.openai_compat import choice_grammar

    return choice_grammar(choices)


def sequential(
    gguf: Path,
    messages: Sequence[Messages],
    choices: Sequence[str],
    runs: int,
    seed: int,
    n_ctx: int,
    max_tokens: int,
    n_threads: int,
) -> dict[str, Any]:
    from llama_cpp import Llama, LlamaGrammar

    llm = Llama(model_path=str(gguf), n_ctx=n_ctx, n_threads=n_threads, seed=seed, verbose=False)
    grammar = LlamaGrammar.from_string(_grammar(choices), verbose=False)
    labels: Counter[str] = Counter()
    started = time.perf_counter()
    for i, chat in enumerate(messages):
        for run in range(runs):
            response = llm.create_chat_completion(
                messages=chat,  # type: ignore[arg-type]
                temperature=1.0,
                top_p=1.0,
                max_tokens=max_tokens,
                seed=seed + 1000 * i + run,
                grammar=grammar,
            )
            labels[response["choices"][0]["message"].get("content") or ""] += 1  # type: ignore[index]
    seconds = time.perf_counter() - started
    llm.close()
    return {"seconds": round(seconds, 2), "per_s": round(len(messages) * runs / seconds, 3), "labels": dict(labels)}


def parallel(
    gguf: Path,
    messages: Sequence[Messages],
    choices: Sequence[str],
    runs: int,
    seed: int,
    n_ctx: int,
    max_tokens: int,
    n_threads: int,
) -> dict[str, Any]:
    from llama_cpp import Llama

    from argassets.platform.judging.engines.llama_cpp_batch import ParallelRuns

    llm = Llama(model_path=str(gguf), n_ctx=256, n_threads=n_threads, seed=seed, verbose=False)
    decoder = ParallelRuns(llm, n_seq=runs, n_ctx=n_ctx, n_threads=n_threads)
    grammar = _grammar(choices)
    labels: Counter[str] = Counter()
    started = time.perf_counter()
    for i, chat in enumerate(messages):
        seeds = [seed + 1000 * i + run for run in range(runs)]
        labels.update(decoder.generate(chat, grammar, seeds, temperature=1.0, top_p=1.0, max_tokens=max_tokens))
    seconds = time.perf_counter() - started
    decoder.close()
    llm.close()
    return {"seconds": round(seconds, 2), "per_s": round(len(messages) * runs / seconds, 3), "labels": dict(labels)}
