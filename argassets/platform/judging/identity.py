"""Which model answers: the identity a judgment cache entry and its provenance are keyed by.

A registry name is only a label: an entry's ``model_id``, weights file or backend can change under the
same name. The cache keys completions by ``<name>@<identity key>``, where the identity holds what
decides the answers: the backend, the model id, the weights file's SHA-256 when the weights are a
local file (GGUF, also when vLLM loads its dequantised folder), and the engine arguments that change
outputs. Change any of them and the old answers stay in the cache under the old identity, never
reused or relabelled.

Left out on purpose: what changes speed but not answers in principle (vLLM's tensor-parallel size,
memory share, KV cache size, batch size, concurrency) and where an endpoint lives (its URL).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from argassets.platform.registry.entries import ModelEntry

__all__ = ["cache_model_key", "identity_key", "model_identity"]

#: Bump when the meaning of an identity field changes.
IDENTITY_VERSION = 1


def model_identity(entry: ModelEntry) -> dict[str, Any]:
    """The identity of an entry's judge as a JSON-able dict (reads the weights file's checksum)."""
    identity: dict[str, Any] = {"version": IDENTITY_VERSION, "backend": entry.backend}
    if entry.backend == "random":
        identity["seed"] = entry.seed
    elif entry.backend == "import":
        identity["path"] = entry.path
        identity["format"] = entry.format
    elif entry.backend in ("vllm", "vllm_batch", "llama_cpp", "openai"):
        identity["model_id"] = entry.model_id
        if entry.backend == "openai" and not entry.server_sampling_defaults:
            # Before the knobs were sent, the server's defaults may have truncated the draws: those
            # stay under the old identity, reused only by an entry that declares server defaults.
            identity["sampling_knobs"] = "stated"
        if entry.backend != "openai" and (entry.gguf_path or entry.gguf_package):
            from argassets.platform.judging.engines.llama_cpp_backend import find_gguf
            from argassets.platform.judging.engines.vllm_model import CONVERTED_DTYPE, file_sha256

            gguf = find_gguf(entry.gguf_path, entry.gguf_package)
            identity["weights"] = {"file": gguf.name, "sha256": file_sha256(gguf)}
        if entry.backend in ("vllm", "vllm_batch"):
            from argassets.platform.judging.engines.cpu_dtype import engine_dtype

            identity["engine"] = {
                "device": entry.device,
                "max_model_len": entry.max_model_len,
                "enforce_eager": entry.enforce_eager,
                "dtype": engine_dtype(entry.dtype),  # cpu_native: what this CPU computes in
            }
            if entry.gguf_path or entry.gguf_package:
                identity["engine"]["converted_to"] = CONVERTED_DTYPE  # the dequantised folder vLLM loads
        elif entry.backend == "llama_cpp":
            # The runs of a request are sampled as parallel sequences (judges/llama_cpp_batch.py):
            # same seeds, other draws than the one-call-per-run decoding that came before.
            identity["engine"] = {"n_ctx": entry.n_ctx, "decoding": "parallel-sequences"}
    return identity


def identity_key(identity: dict[str, Any]) -> str:
    """16 hex characters of the SHA-256 of the identity's canonical JSON."""
    payload = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def cache_model_key(entry: ModelEntry, identity: dict[str, Any] | None = None) -> str:
    """The cache's model key of an entry: ``<name>@<identity key>``."""
    return f"{entry.name}@{identity_key(model_identity(entry) if identity is None else identity)}"
