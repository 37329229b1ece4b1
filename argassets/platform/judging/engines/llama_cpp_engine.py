"""The ``llama_cpp`` engine: a local GGUF model in-process through llama-cpp-python (CPU)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from argassets.platform.judging.engines.llama_cpp_backend import find_gguf, gguf_needs
from argassets.platform.judging.engines.tokenizers import GGUFTokenizer
from argassets.platform.judging.engines.vllm_model import file_sha256
from argassets.platform.judging.interface import Judge, JudgeSettings, PromptTokenizer
from argassets.platform.judging.prefill_floor import ReuseModel
from argassets.platform.registry.model_entry import ModelEntry, judge_engine
from argassets.platform.registry.needs import MachineNeeds


@judge_engine("llama_cpp")
class LlamaCppEntry(ModelEntry):
    """A registry entry judged by ``llama_cpp.Llama``, the runs of a request as parallel sequences."""

    runs_open_weights_here: ClassVar[bool] = True
    engine_label: ClassVar[str | None] = "llama.cpp"

    backend: Literal["llama_cpp"]
    #: A GGUF file, or a Python package that ships one (located, never imported).
    gguf_path: str | None = None
    gguf_package: str | None = None
    n_ctx: int = Field(default=2048, ge=256)

    returns_logprobs: ClassVar[bool] = True
    generates_text: ClassVar[bool] = True

    @model_validator(mode="after")
    def _needs_a_gguf(self) -> LlamaCppEntry:
        if not (self.gguf_path or self.gguf_package):
            raise ValueError("backend 'llama_cpp' needs 'gguf_path' or 'gguf_package'")
        return self

    def gguf(self) -> Path:
        return find_gguf(self.gguf_path, self.gguf_package)

    def identity_fields(self) -> dict[str, Any]:
        """The model id, the GGUF file's checksum, and the context size and decoding."""
        gguf = self.gguf()
        return {
            "model_id": self.model_id,
            "weights": {"file": gguf.name, "sha256": file_sha256(gguf)},
            # The runs of a request are sampled as parallel sequences (llama_cpp_batch.py): same
            # seeds, other draws than the one-call-per-run decoding that came before.
            "engine": {"n_ctx": self.n_ctx, "decoding": "parallel-sequences"},
            # Each prompt's runs are seeded from its hash: before, every prompt of a run had one seed.
            "seeds": "per-prompt",
        }

    def build_judge(self, settings: JudgeSettings) -> Judge:
        from argassets.platform.judging.engines.llama_cpp_backend import LlamaCppJudge

        return LlamaCppJudge(self.gguf(), n_ctx=self.n_ctx, n_threads=settings.llama_threads, seed=self.seed)

    def engine_batch_size(self) -> int:
        return 8

    def prefix_reuse(self) -> ReuseModel:
        """llama.cpp keeps the prefix shared with the previous prompt in its KV cache, nothing older."""
        return ReuseModel("previous_prompt")

    def prompt_tokenizer(self) -> PromptTokenizer | None:
        """The GGUF's own tokenizer through llama.cpp (vocab only), when the file is here."""
        try:
            return GGUFTokenizer(self.gguf())
        except FileNotFoundError:
            return None

    def machine_needs(self, data_root: Path | None) -> MachineNeeds:
        """llama-cpp-python and the GGUF (its file, or the package that ships it)."""
        packages, files = gguf_needs(self.gguf_path, self.gguf_package)
        return MachineNeeds("llama.cpp", modules=("llama_cpp", *packages), files=files)

    @classmethod
    def available_here(cls) -> bool:
        """Whether llama-cpp-python is installed (an optional dependency)."""
        return importlib.util.find_spec("llama_cpp") is not None
