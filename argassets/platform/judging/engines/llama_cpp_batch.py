"""The runs of one prompt decoded side by side: llama.cpp's batch API with one sequence per run."""

from __future__ import annotations

import ctypes
from collections.abc import Mapping, Sequence
from typing import Any

from argassets.platform.judging.label_probabilities import TokenCandidates

__all__ = ["ContextWindowExceeded", "ParallelRuns"]

#: llama.cpp's "pick a random seed" value, for a run without a seed.
_RANDOM_SEED = 0xFFFFFFFF


class ContextWindowExceeded(ValueError):
    """The prompt does not fit into the context window."""


class ParallelRuns:
    """A llama.cpp context for up to ``n_seq`` runs of one prompt, on the weights of ``llama``.

    ``llama`` is a loaded ``llama_cpp.Llama`` (its model and tokenizer are used; its own context
    is not). ``n_ctx`` is the window of each run: a prompt of ``n_ctx`` tokens or more is refused,
    and generation stops at the window as ``create_chat_completion`` does.
    """

    def __init__(self, llama: Any, n_seq: int, n_ctx: int, n_threads: int):
        import llama_cpp as ll
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError(f"{llama.model_path}: the GGUF has no chat template (tokenizer.chat_template)")
        model = llama._model
        # The same formatter Llama builds for a GGUF's own template ("chat_template.default").
        self._format = Jinja2ChatFormatter(
            template=template,
            eos_token=model.token_get_text(llama.token_eos()) if llama.token_eos() != -1 else "",
            bos_token=model.token_get_text(llama.token_bos()) if llama.token_bos() != -1 else "",
        )
        self._llama = llama
        self.n_seq = n_seq
        self.n_ctx = n_ctx
        params = ll.llama_context_default_params()
        params.n_ctx = n_ctx * n_seq
        params.n_batch = n_ctx
        params.n_seq_max = n_seq
        params.kv_unified = True  # the runs read their prompt's cells, decoded once
        params.n_threads = params.n_threads_batch = n_threads
        self._ctx = ll.llama_init_from_model(model.model, params)
        if not self._ctx:
            raise RuntimeError(f"{llama.model_path}: llama.cpp could not create a context for {n_seq} sequences")
        self._vocab = ll.llama_model_get_vocab(model.model)
        self._memory = ll.llama_get_memory(self._ctx)
        self._batch = ll.llama_batch_init(n_ctx, 0, n_seq)
        self._cached: list[int] = []
        self._label_ids: dict[tuple[str, ...], tuple[int, ...]] = {}

    def tokens(self, messages: Sequence[dict[str, str]]) -> list[int]:
        """The prompt's tokens, as ``create_chat_completion`` would send them."""
        prompt = self._format(messages=list(messages))
        return self._llama.tokenize(prompt.prompt.encode("utf-8"), add_bos=not prompt.added_special, special=True)

    def generate(
        self,
        messages: Sequence[dict[str, str]],
        grammar: str | None,
        seeds: Sequence[int | None],
        temperature: float,
        top_p: float,
        max_tokens: int,
        knobs: Mapping[str, float | int] | None = None,
    ) -> list[str]:
        """One text per seed: the runs of one chat request, sampled side by side."""
        texts, _ = self.generate_with_candidates(messages, grammar, seeds, temperature, top_p, max_tokens, knobs)
        return texts

    def generate_with_candidates(
        self,
        messages: Sequence[dict[str, str]],
        grammar: str | None,
        seeds: Sequence[int | None],
        temperature: float,
        top_p: float,
        max_tokens: int,
        knobs: Mapping[str, float | int] | None = None,
        top_logprobs: int | None = None,
        labels: Sequence[str] = (),
    ) -> tuple[list[str], list[list[TokenCandidates]]]:
        """The texts of :meth:`generate`, and per run its tokens with their top ``top_logprobs`` candidates.

        ``knobs`` are :meth:`SamplingParams.knobs` (default: the full distribution). The candidates
        are the model's own log-probabilities (before grammar, temperature and truncation); without
        ``top_logprobs`` the lists are empty. Every token that starts one of ``labels`` is among the
        candidates too, however improbable before the grammar: the label probabilities are exact.
        """
        import llama_cpp as ll

        if len(seeds) > self.n_seq:
            raise ValueError(f"{len(seeds)} runs, but the context holds {self.n_seq} sequences")
        prompt = self.tokens(messages)
        if len(prompt) >= self.n_ctx:
            raise ContextWindowExceeded(f"Requested tokens ({len(prompt)}) exceed context window of {self.n_ctx}")
        max_tokens = min(max_tokens, self.n_ctx - len(prompt))
        runs = list(range(len(seeds)))
        self._decode_prompt(prompt, runs)

        samplers = [self._sampler(grammar, seed, temperature, top_p, knobs or {}) for seed in seeds]
        texts = [b""] * len(runs)
        candidates: list[list[TokenCandidates]] = [[] for _ in runs]
        try:
            logits_at = dict.fromkeys(runs, -1)  # run -> batch index of its logits (-1: the prompt's last)
            position = len(prompt)
            for generated in range(max_tokens):
                step: dict[int, int] = {}
                for run, index in logits_at.items():
                    top = self._top_logprobs(index, top_logprobs, self._label_tokens(labels)) if top_logprobs else None
                    token = ll.llama_sampler_sample(samplers[run], self._ctx, index)
                    if not ll.llama_vocab_is_eog(self._vocab, token):
                        piece = self._piece(token)
                        texts[run] += piece
                        step[run] = token
                        if top is not None:
                            candidates[run].append(TokenCandidates(piece.decode("utf-8", errors="replace"), top))
                if not step or generated == max_tokens - 1:
                    break  # the last tokens need no decode: nothing reads their logits
                for index, (run, token) in enumerate(step.items()):
                    self._put(index, token, position, [run], logits=True)
                self._decode(len(step))
                logits_at = {run: index for index, run in enumerate(step)}
                position += 1
        finally:
            for sampler in samplers:
                ll.llama_sampler_free(sampler)
        return [text.decode("utf-8", errors="replace") for text in texts], candidates

    def _label_tokens(self, labels: Sequence[str]) -> tuple[int, ...]:
        """The ids of every token whose text starts one of ``labels`` as spelled, found once per label set."""
        import llama_cpp as ll

        key = tuple(labels)
        if key not in self._label_ids:
            found = []
            for token in range(ll.llama_vocab_n_tokens(self._vocab)):
                text = self._piece(token).decode("utf-8", errors="replace")
                if text and any(label.startswith(text) for label in labels):
                    found.append(token)
            self._label_ids[key] = tuple(found)
        return self._label_ids[key]

    def _top_logprobs(self, index: int, k: int, also: Sequence[int] = ()) -> dict[str, float]:
        """The ``k`` most probable next tokens at batch index ``index``, and the tokens ``also`` (text, log-probability).

        Tokens of the same text are summed.
        """
        import llama_cpp as ll
        import numpy as np

        n_vocab = ll.llama_vocab_n_tokens(self._vocab)
        logits = np.ctypeslib.as_array(ll.llama_get_logits_ith(self._ctx, index), shape=(n_vocab,)).astype(np.float64)
        top = {int(token) for token in np.argpartition(logits, -k)[-k:]} | set(also)
        shift = logits.max()
        log_norm = shift + np.log(np.exp(logits - shift).sum())
        probabilities: dict[str, float] = {}
        for token in top:
            text = self._piece(token).decode("utf-8", errors="replace")
            probabilities[text] = probabilities.get(text, 0.0) + float(np.exp(logits[token] - log_norm))
        return {text: float(np.log(p)) if p > 0 else float("-inf") for text, p in probabilities.items()}

    def close(self) -> None:
        import llama_cpp as ll

        if self._ctx:
            ll.llama_batch_free(self._batch)
            ll.llama_free(self._ctx)
            self._ctx = None

    def _decode_prompt(self, prompt: list[int], runs: list[int]) -> None:
        import llama_cpp as ll

        common = 0
        for cached, token in zip(self._cached, prompt, strict=False):
            if cached != token:
                break
            common += 1
        common = min(common, len(prompt) - 1)  # decode at least the last token: its logits start every run
        ll.llama_memory_seq_rm(self._memory, -1, common, -1)  # every run's cells past the shared prefix
        self._cached = []
        for start in range(common, len(prompt), self.n_ctx):
            chunk = prompt[start : start + self.n_ctx]
            for offset, token in enumerate(chunk):
                position = start + offset
                self._put(offset, token, position, runs, logits=position == len(prompt) - 1)
            self._decode(len(chunk))
        self._cached = prompt

    def _sampler(
        self, grammar: str | None, seed: int | None, temperature: float, top_p: float, knobs: Mapping[str, float | int]
    ) -> Any:
        """Grammar, then llama.cpp's order: penalties, top-k, top-p, min-p, temperature, the draw.

        Penalties, top-k and min-p join the chain only when they truncate or penalise (the default
        is the full distribution, unlike ``create_chat_completion``'s ``top_k`` 40, ``min_p`` 0.05).
        """
        import llama_cpp as ll

        chain = ll.llama_sampler_chain_init(ll.llama_sampler_chain_default_params())
        if grammar is not None:
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_grammar(self._vocab, grammar.encode(), b"root"))
        repeat = float(knobs.get("repetition_penalty", 1.0))
        frequency = float(knobs.get("frequency_penalty", 0.0))
        presence = float(knobs.get("presence_penalty", 0.0))
        if (repeat, frequency, presence) != (1.0, 0.0, 0.0):
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_penalties(64, repeat, frequency, presence))
        if int(knobs.get("top_k", -1)) > 0:
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_top_k(int(knobs["top_k"])))
        ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_top_p(top_p, 1))
        if float(knobs.get("min_p", 0.0)) > 0.0:
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_min_p(float(knobs["min_p"]), 1))
        ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_temp(temperature))
        ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_dist(_RANDOM_SEED if seed is None else seed))
        return chain

    def _put(self, index: int, token: int, position: int, runs: Sequence[int], logits: bool) -> None:
        batch = self._batch
        batch.token[index] = token
        batch.pos[index] = position
        batch.n_seq_id[index] = len(runs)
        for slot, run in enumerate(runs):
            batch.seq_id[index][slot] = run
        batch.logits[index] = logits

    def _decode(self, n_tokens: int) -> None:
        import llama_cpp as ll

        self._batch.n_tokens = n_tokens
        status = ll.llama_decode(self._ctx, self._batch)
        if status != 0:
            self._cached = []
            raise RuntimeError(f"llama_decode failed with status {status}")

    def _piece(self, token: int) -> bytes:
        import llama_cpp as ll

        buffer = ctypes.create_string_buffer(64)
        n = ll.llama_token_to_piece(self._vocab, token, buffer, len(buffer), 0, False)
        if n < 0:  # a longer piece: ask again with the size llama.cpp asked for
            buffer = ctypes.create_string_buffer(-n)
            n = ll.llama_token_to_piece(self._vocab, token, buffer, len(buffer), 0, False)
        return buffer.raw[:n]
