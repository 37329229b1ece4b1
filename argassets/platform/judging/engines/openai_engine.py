"""The ``openai`` engine: any OpenAI-compatible chat-completions endpoint (a vLLM server, a hosted API)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from argassets.platform.judging.interface import Judge, JudgeSettings
from argassets.platform.registry.model_entry import ModelEntry, judge_engine
from argassets.platform.registry.needs import MachineNeeds

if TYPE_CHECKING:
    from argassets.platform.judging.batch_files import BatchFormat

DEFAULT_BASE_URL_ENV = "ARGASSETS_OPENAI_BASE_URL"
DEFAULT_API_KEY_ENV = "ARGASSETS_OPENAI_API_KEY"


class Price(BaseModel):
    """What an endpoint's provider charges, in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0.0)
    output_per_mtok: float = Field(ge=0.0)


@judge_engine("openai")
class OpenAIEntry(ModelEntry):
    """A registry entry judged through an endpoint whose URL and key are read at run time."""

    backend: Literal["openai"]
    #: Names of the environment variables holding the endpoint's base URL and its key.
    base_url_env: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = Field(default=8, ge=1, le=512)
    #: The provider's price, for cost estimates and the budget.
    price: Price | None = None
    #: The server applies its own sampling defaults (a hosted API that refuses ``top_k``/``min_p``/
    #: ``repetition_penalty``): only the OpenAI fields are sent, and the partition's metadata says
    #: that the draws may come from a truncated distribution.
    server_sampling_defaults: bool = False

    returns_logprobs: ClassVar[bool] = True
    generates_text: ClassVar[bool] = True

    @model_validator(mode="after")
    def _needs_a_model(self) -> OpenAIEntry:
        if not self.model_id:
            raise ValueError("backend 'openai' needs 'model_id'")
        return self

    def identity_fields(self) -> dict[str, Any]:
        """The model id; where the endpoint lives (its URL) is left out."""
        fields: dict[str, Any] = {"model_id": self.model_id}
        if not self.server_sampling_defaults:
            # Before the knobs were sent, the server's defaults may have truncated the draws: those
            # stay under the old identity, reused only by an entry that declares server defaults.
            fields["sampling_knobs"] = "stated"
        # Each prompt's runs are seeded from its hash: before, every prompt of a run had one seed.
        fields["seeds"] = "per-prompt"
        return fields

    def build_judge(self, settings: JudgeSettings) -> Judge:
        """Reads the endpoint and key from ``base_url_env`` / ``api_key_env`` (default
        ``ARGASSETS_OPENAI_BASE_URL`` / ``ARGASSETS_OPENAI_API_KEY``) now, i.e. at run time."""
        from argassets.platform.judging.engines.openai_compat import OpenAIJudge

        env = os.environ if settings.environ is None else settings.environ
        url_var = self.base_url_env or DEFAULT_BASE_URL_ENV
        key_var = self.api_key_env or DEFAULT_API_KEY_ENV
        base_url = env.get(url_var)
        if not base_url:
            raise ValueError(
                f"model '{self.name}': set {url_var} to the endpoint's base URL (e.g. http://host:8000/v1)"
            )
        return OpenAIJudge(
            model_id=self.model_id or self.name,
            base_url=base_url,
            api_key=env.get(key_var),
            max_concurrency=self.max_concurrency,
            structured_output=settings.openai_structured_output,  # type: ignore[arg-type]
            timeout_s=settings.openai_timeout_s,
            max_retries=settings.openai_max_retries,
            server_sampling_defaults=self.server_sampling_defaults,
        )

    def machine_needs(self, data_root: Path | None) -> MachineNeeds:
        """Only the endpoint's URL variable: its GPUs are elsewhere."""
        return MachineNeeds("an OpenAI-compatible endpoint", env_vars=(self.base_url_env or DEFAULT_BASE_URL_ENV,))

    def engine_batch_size(self) -> int:
        """Small batches for a slow, paid endpoint: enough to keep every connection busy."""
        return max(16, 4 * self.max_concurrency)

    @property
    def uses_server_sampling_defaults(self) -> bool:
        return self.server_sampling_defaults

    def batch_format(self, structured_output: str) -> BatchFormat:
        """The live judge's request bodies, byte for byte (:mod:`~argassets.platform.judging.engines.openai_batch`)."""
        from argassets.platform.judging.engines.openai_batch import OpenAIBatchFormat
        from argassets.platform.judging.engines.openai_compat import OpenAIJudge

        judge = OpenAIJudge(
            self.model_id or self.name,
            "http://batch.invalid/v1",  # never contacted: only the bodies are used
            structured_output=structured_output,  # type: ignore[arg-type]
            server_sampling_defaults=self.server_sampling_defaults,
        )
        return OpenAIBatchFormat(judge)

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        if self.price is None:
            return None
        return (prompt_tokens * self.price.input_per_mtok + completion_tokens * self.price.output_per_mtok) / 1e6
