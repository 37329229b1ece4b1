"""The token ids of many chat prompts, fast: each distinct system and user text is tokenized once.

docs/judgments.md, "Prefix order and the prefill floor".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from argassets.platform.judging.interface import ChatRequest

if TYPE_CHECKING:
    from argassets.platform.registry.model_entry import ModelEntry

__all__ = [
    "ChatTokenizer",
    "TokenizedPrompts",
    "entry_tokenizer",
    "llama_cpp_tokenizer",
    "tokenize_prompts",
    "transformers_tokenizer",
]

#: Placeholders rendered in place of the texts to find where the template puts them.
_SYSTEM_MARK, _USER_MARK = "\ue000", "\ue001"
#: Prompts whose split is checked against tokenizing them whole.
_CHECKED = 8
_ENCODE_CHUNK = 2048


class ChatTokenizer(Protocol):
    """A model's chat template and tokenizer, as the engine applies them."""

    description: str
    #: Strings the tokenizer turns into one special token wherever they occur.
    special_texts: tuple[str, ...]

    def render(self, messages: list[dict[str, str]]) -> str: ...

    def encode(self, texts: list[str], at_start: bool) -> list[list[int]]:
        """Ids of each text; ``at_start``: the text starts the prompt (a BOS token where the model adds one)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class TokenizedPrompts:
    """Token ids of prompts, stored once per head and tail: prompt ``i`` is ``heads[pairs[i, 0]]``
    followed by ``tails[pairs[i, 1]]``."""

    heads: list[np.ndarray]
    tails: list[np.ndarray]
    pairs: np.ndarray
    method: str

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def lengths(self) -> np.ndarray:
        head = np.array([len(h) for h in self.heads], dtype=np.int64)
        tail = np.array([len(t) for t in self.tails], dtype=np.int64)
        return head[self.pairs[:, 0]] + tail[self.pairs[:, 1]]

    def tokens(self, index: int) -> np.ndarray:
        head, tail = self.pairs[index]
        return np.concatenate([self.heads[head], self.tails[tail]])


class _Split:
    """Where the template puts the texts, and the cut after the first special token between them."""

    def __init__(self, tokenizer: ChatTokenizer):
        text = tokenizer.render([{"role": "system", "content": _SYSTEM_MARK}, {"role": "user", "content": _USER_MARK}])
        ok = (
            text.count(_SYSTEM_MARK) == 1
            and text.count(_USER_MARK) == 1
            and text.index(_SYSTEM_MARK) < text.index(_USER_MARK)
        )
        self.usable = False
        if not ok:
            return
        self.pre, rest = text.split(_SYSTEM_MARK)
        mid, self.post = rest.split(_USER_MARK)
        found = [(mid.find(s), -len(s), s) for s in tokenizer.special_texts if s and s in mid]
        if not found:
            return
        start, _, special = min(found)
        self.cut = start + len(special)
        self.mid = mid
        self.usable = True

    def head(self, system: str) -> str:
        return self.pre + system + self.mid[: self.cut]

    def tail(self, user: str) -> str:
        return self.mid[self.cut :] + user + self.post


def _arrays(tokenizer: ChatTokenizer, texts: list[str], at_start: bool) -> list[np.ndarray]:
    out: list[np.ndarray] = []
    for start in range(0, len(texts), _ENCODE_CHUNK):
        out += [
            np.asarray(ids, dtype=np.int32) for ids in tokenizer.encode(texts[start : start + _ENCODE_CHUNK], at_start)
        ]
    return out


def _split_holds(tokenizer: ChatTokenizer, split: _Split, sample: list[tuple[str, str]]) -> bool:
    """Whether rendering and tokenizing the sample whole gives the head's ids followed by the tail's."""
    for system, user in sample:
        whole = tokenizer.render([{"role": "system", "content": system}, {"role": "user", "content": user}])
        if whole != split.head(system) + split.tail(user):
            return False
        (ids,) = tokenizer.encode([whole], True)
        (head,) = tokenizer.encode([split.head(system)], True)
        (tail,) = tokenizer.encode([split.tail(user)], False)
        if list(ids) != list(head) + list(tail):
            return False
    return True


def tokenize_prompts(tokenizer: ChatTokenizer, requests: Sequence[ChatRequest]) -> TokenizedPrompts:
    """The token ids of every request's rendered prompt (chat template and generation prompt included)."""
    systems: dict[str, int] = {}
    users: dict[str, int] = {}
    pairs = np.empty((len(requests), 2), dtype=np.int64)
    for index, request in enumerate(requests):
        pairs[index, 0] = systems.setdefault(request.system, len(systems))
        pairs[index, 1] = users.setdefault(request.user, len(users))
    split = _Split(tokenizer)
    sample = [(r.system, r.user) for r in requests[:_CHECKED]]
    if split.usable and _split_holds(tokenizer, split, sample):
        heads = _arrays(tokenizer, [split.head(s) for s in systems], True)
        tails = _arrays(tokenizer, [split.tail(u) for u in users], False)
        return TokenizedPrompts(heads, tails, pairs, f"{tokenizer.description}, per system and user text")
    # Every distinct prompt whole: one empty head, the prompts as tails.
    distinct: dict[tuple[int, int], int] = {}
    whole_pairs = np.empty_like(pairs)
    system_texts, user_texts = list(systems), list(users)
    texts: list[str] = []
    for index, (s, u) in enumerate(map(tuple, pairs.tolist())):
        if (s, u) not in distinct:
            distinct[(s, u)] = len(distinct)
            messages = [{"role": "system", "content": system_texts[s]}, {"role": "user", "content": user_texts[u]}]
            texts.append(tokenizer.render(messages))
        whole_pairs[index] = (0, distinct[(s, u)])
    tails = _arrays(tokenizer, texts, True)
    return TokenizedPrompts(
        [np.zeros(0, dtype=np.int32)], tails, whole_pairs, f"{tokenizer.description}, whole prompts"
    )


class _TransformersTokenizer:
    def __init__(self, folder: Path):
        from transformers import AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.description = f"tokenizer of {folder.name} (transformers), chat template"
        self.special_texts = tuple(str(token.content) for token in self._tokenizer.added_tokens_decoder.values())

    def render(self, messages: list[dict[str, str]]) -> str:
        if not self._tokenizer.chat_template:
            return "\n".join(m["content"] for m in messages)
        return str(self._tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))

    def encode(self, texts: list[str], at_start: bool) -> list[list[int]]:
        # The template writes any BOS itself; vLLM tokenizes the rendered chat without adding one.
        return list(self._tokenizer(texts, add_special_tokens=False, return_attention_mask=False)["input_ids"])

    def close(self) -> None:
        """Nothing held beyond the Python object."""


class _LlamaCppTokenizer:
    def __init__(self, gguf: Path):
        import llama_cpp as ll
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self._llm: Any = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
        self.description = f"tokenizer of {gguf.name} (llama.cpp, vocab only), chat template"
        template = self._llm.metadata.get("tokenizer.chat_template")
        text_of = self._llm._model.token_get_text
        self._format = (
            Jinja2ChatFormatter(template, text_of(self._llm.token_eos()), text_of(self._llm.token_bos()))
            if template
            else None
        )
        vocab = ll.llama_model_get_vocab(self._llm._model.model)
        self.special_texts = tuple(
            text_of(token) for token in range(self._llm.n_vocab()) if ll.llama_vocab_is_control(vocab, token)
        )
        self._add_bos = True

    def render(self, messages: list[dict[str, str]]) -> str:
        if self._format is None:
            return "\n".join(m["content"] for m in messages)
        prompt = self._format(messages=messages)
        self._add_bos = not prompt.added_special  # as ParallelRuns.tokens does
        return str(prompt.prompt)

    def encode(self, texts: list[str], at_start: bool) -> list[list[int]]:
        add_bos = at_start and self._add_bos
        return [self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True) for text in texts]

    def close(self) -> None:
        self._llm.close()


def transformers_tokenizer(folder: Path) -> ChatTokenizer:
    """The tokenizer and chat template of a Hugging Face folder (local files only): vLLM's."""
    return _TransformersTokenizer(folder)


def llama_cpp_tokenizer(gguf: Path) -> ChatTokenizer:
    """The tokenizer and chat template of a GGUF file through llama.cpp (no weights loaded)."""
    return _LlamaCppTokenizer(gguf)


def entry_tokenizer(entry: ModelEntry) -> ChatTokenizer | None:
    """The engine's own tokenizer of a registry entry where it is on this machine, else ``None``."""
    from argassets.platform.judging.engines.tokenizers import GGUFTokenizer, TransformersTokenizer

    counter = entry.prompt_tokenizer()
    if isinstance(counter, GGUFTokenizer):
        return llama_cpp_tokenizer(counter.gguf)
    if isinstance(counter, TransformersTokenizer):
        return transformers_tokenizer(counter.folder)
    return None
