"""Local tokenizers that count prompt tokens as a model sees them, chat template included (for estimates)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from argassets.platform.judging.interface import ChatRequest


def chat_messages(request: ChatRequest) -> list[dict[str, str]]:
    system = [{"role": "system", "content": request.system}] if request.system else []
    return [*system, {"role": "user", "content": request.user}]


@dataclass(frozen=True)
class GGUFTokenizer:
    """The tokenizer of a GGUF file through llama.cpp, loaded with ``vocab_only=True`` (no weights)."""

    gguf: Path

    @property
    def description(self) -> str:
        return f"tokenizer of {self.gguf.name} (llama.cpp, vocab only), chat template"

    def count(self, requests: Sequence[ChatRequest]) -> list[int]:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llm = Llama(model_path=str(self.gguf), vocab_only=True, verbose=False)
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


@dataclass(frozen=True)
class TransformersTokenizer:
    """The tokenizer of a local Hugging Face folder (``transformers``, local files only)."""

    folder: Path

    @property
    def description(self) -> str:
        return f"tokenizer of {self.folder} (transformers), chat template"

    def count(self, requests: Sequence[ChatRequest]) -> list[int]:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(self.folder), local_files_only=True)
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
