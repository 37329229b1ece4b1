"""Prompt tokens of a partition's requests, counted with the model's own tokenizer where it is local.

- ``llama_cpp`` entries: the GGUF's tokenizer through llama.cpp, loaded with ``vocab_only=True``
  (no weights), the prompt rendered with the GGUF's chat template;
- ``vllm`` entries: the tokenizer of the folder vLLM loads (the dequantised GGUF folder, or a
  local ``model_id`` folder), with its chat template (``transformers``, local files only);
- anything else (an ``openai`` endpoint, a Hub id that is not on disk): characters / 4, the usual
  rule of thumb for English text with BPE tokenizers, stated as such.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from argassets.platform.judging.interface import ChatRequest
from argassets.platform.registry.entries import ModelEntry

CHARS_PER_TOKEN = 4.0
APPROXIMATION = "approximation: characters / 4"


def approx_tokens(request: ChatRequest) -> int:
    return math.ceil((len(request.system) + len(request.user)) / CHARS_PER_TOKEN)


def chat_messages(request: ChatRequest) -> list[dict[str, str]]:
    system = [{"role": "system", "content": request.system}] if request.system else []
    return [*system, {"role": "user", "content": request.user}]


def local_tokenizer(entry: ModelEntry) -> tuple[str, Path] | None:
    """``("llama_cpp", gguf)`` or ``("transformers", folder)``: the entry's tokenizer on this machine."""
    from argassets.platform.judging.engines.llama_cpp_backend import find_gguf
    from argassets.platform.judging.engines.vllm_model import converted_model_dir, read_stamp

    gguf = None
    if entry.gguf_path or entry.gguf_package:
        try:
            gguf = find_gguf(entry.gguf_path, entry.gguf_package)
        except FileNotFoundError:
            return None
    if entry.backend == "llama_cpp" and gguf is not None:
        return "llama_cpp", gguf
    if entry.backend not in ("vllm", "vllm_batch"):
        return None
    if gguf is not None:
        folder = converted_model_dir(gguf)
        return ("transformers", folder) if read_stamp(folder) is not None else None
    local = Path(entry.model_id or "").expanduser()
    return ("transformers", local) if entry.model_id and (local / "tokenizer_config.json").is_file() else None


def _llama_cpp_counts(gguf: Path, requests: Sequence[ChatRequest]) -> list[int]:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llm = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
    try:
        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            texts = [f"{r.system}\n{r.user}" for r in requests]
        else:
            token_text = llm._model.token_get_text
            render = Jinja2ChatFormatter(template, token_text(llm.token_eos()), token_text(llm.token_bos()))
            texts = [render(messages=chat_messages(r)).prompt for r in requests]
        return [len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)) for text in texts]
    finally:
        llm.close()


def _transformers_counts(folder: Path, requests: Sequence[ChatRequest]) -> list[int]:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    if not tokenizer.chat_template:
        return [len(tokenizer(f"{r.system}\n{r.user}")["input_ids"]) for r in requests]
    return [
        len(
            tokenizer.apply_chat_template(
                chat_messages(r), add_generation_prompt=True, tokenize=True, return_dict=False
            )
        )
        for r in requests
    ]


def prompt_token_counts(entry: ModelEntry, requests: Sequence[ChatRequest]) -> tuple[list[int], str]:
    """Tokens of each request's prompt (chat template included), and how they were counted."""
    source = local_tokenizer(entry) if requests else None
    if source is None:
        return [approx_tokens(r) for r in requests], APPROXIMATION
    kind, path = source
    if kind == "llama_cpp":
        return _llama_cpp_counts(path, requests), f"tokenizer of {path.name} (llama.cpp, vocab only), chat template"
    return _transformers_counts(path, requests), f"tokenizer of {path} (transformers), chat template"
