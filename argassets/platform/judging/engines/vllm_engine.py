"""The ``vllm`` engine: a model run offline by vLLM on GPUs (tensor parallel) or on vLLM's CPU build."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from argassets.platform.judging.engines.cpu_dtype import engine_dtype
from argassets.platform.judging.engines.llama_cpp_backend import find_gguf, gguf_needs
from argassets.platform.judging.engines.tokenizers import TransformersTokenizer
from argassets.platform.judging.engines.vllm_model import CONVERTED_DTYPE, converted_model_dir, file_sha256, read_stamp
from argassets.platform.judging.interface import Judge, JudgeSettings, PromptTokenizer
from argassets.platform.judging.prefill_floor import ReuseModel
from argassets.platform.registry.model_entry import ModelEntry, judge_engine
from argassets.platform.registry.needs import MachineNeeds

#: vLLM 0.32's default KV-cache block, in tokens: 128 on its CPU build (vllm/platforms/cpu.py), 16 on CUDA.
VLLM_DEFAULT_BLOCK = {"cpu": 128, "gpu": 16}


@judge_engine("vllm")
class VLLMEntry(ModelEntry):
    """A registry entry judged by ``vllm.LLM`` in the run's own process (one model load per partition)."""

    runs_open_weights_here: ClassVar[bool] = True
    engine_label: ClassVar[str | None] = "vLLM"

    backend: Literal["vllm"]
    #: Tensor-parallel size, and the GPUs a run of this partition asks for (0 with ``device = "cpu"``).
    gpus: int = Field(default=0, ge=0, le=64)
    gpu_memory_utilization: float = Field(default=0.9, gt=0.0, le=1.0)
    max_model_len: int | None = Field(default=None, ge=256)
    #: ``gpu`` (CUDA, ``gpus`` >= 1) or ``cpu`` (vLLM's CPU build, ``gpus`` = 0).
    device: Literal["gpu", "cpu"] = "gpu"
    #: KV cache size in GiB (default: what ``gpu_memory_utilization`` leaves).
    kv_cache_gib: float | None = Field(default=None, gt=0.0)
    #: Skip torch.compile (faster start, slower steps).
    enforce_eager: bool = False
    #: The dtype vLLM computes in (``auto``: the checkpoint's). ``cpu_native`` (device ``cpu`` only):
    #: bfloat16 where the CPU has native bfloat16 (AVX512-BF16/AMX), else float32, since emulated
    #: bfloat16 products are about 30x slower (:mod:`argassets.platform.judging.engines.cpu_dtype`).
    dtype: Literal["auto", "bfloat16", "float16", "float32", "cpu_native"] = "auto"
    #: A GGUF file, or a Python package that ships one: dequantised once into a safetensors folder
    #: (:mod:`argassets.platform.judging.engines.vllm_model`) that vLLM loads; ``model_id`` stays the model's name.
    gguf_path: str | None = None
    gguf_package: str | None = None

    returns_logprobs: ClassVar[bool] = True
    generates_text: ClassVar[bool] = True
    #: vLLM needs GPU machines: a deployment that has them says so (``ARGASSETS_RUN_BACKENDS=all``).
    runs_automatically_by_default: ClassVar[bool] = False

    @model_validator(mode="after")
    def _device_and_gpus(self) -> VLLMEntry:
        if not self.model_id:
            raise ValueError(f"backend '{self.backend}' needs 'model_id'")
        if self.device == "gpu" and self.gpus < 1:
            raise ValueError(f"backend '{self.backend}' needs 'gpus' >= 1 (the tensor-parallel size)")
        if self.device == "cpu" and self.gpus != 0:
            raise ValueError(f"backend '{self.backend}' with device 'cpu' runs on no GPU: set 'gpus' = 0")
        if self.dtype == "cpu_native" and self.device != "cpu":
            raise ValueError(f"dtype 'cpu_native' only applies to backend '{self.backend}' with device 'cpu'")
        return self

    def gguf(self) -> Path | None:
        """The GGUF file the model comes from, when it comes from one."""
        return find_gguf(self.gguf_path, self.gguf_package) if (self.gguf_path or self.gguf_package) else None

    def identity_fields(self) -> dict[str, Any]:
        """The model, the weights file's checksum, and the engine arguments that change outputs.

        Left out: what changes speed but not answers (tensor-parallel size, memory share, KV cache).
        """
        fields: dict[str, Any] = {"model_id": self.model_id}
        gguf = self.gguf()
        if gguf is not None:
            fields["weights"] = {"file": gguf.name, "sha256": file_sha256(gguf)}
        fields["engine"] = {
            "device": self.device,
            "max_model_len": self.max_model_len,
            "enforce_eager": self.enforce_eager,
            "dtype": engine_dtype(self.dtype),  # cpu_native: what this CPU computes in
        }
        if gguf is not None:
            fields["engine"]["converted_to"] = CONVERTED_DTYPE  # the dequantised folder vLLM loads
        return fields

    def build_judge(self, settings: JudgeSettings) -> Judge:
        from argassets.platform.judging.engines.vllm_backend import VLLMJudge

        return VLLMJudge(self.engine_arguments(), gguf=self.gguf())

    def engine_arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``vllm.LLM`` for this entry (also given to ``vllm serve``/``run-batch``)."""
        from argassets.platform.judging.engines.vllm_backend import engine_kwargs

        gguf = self.gguf()
        model = str(converted_model_dir(gguf)) if gguf is not None else (self.model_id or self.name)
        return engine_kwargs(
            model,
            tensor_parallel_size=self.gpus,
            gpu_memory_utilization=self.gpu_memory_utilization,
            max_model_len=self.max_model_len,
            seed=self.seed,
            device=self.device,
            kv_cache_gib=self.kv_cache_gib,
            enforce_eager=self.enforce_eager,
            dtype=engine_dtype(self.dtype),
        )

    def engine_batch_size(self) -> int:
        return 8192

    @property
    def gpus_needed(self) -> int:
        return self.gpus

    def prefix_reuse(self) -> ReuseModel:
        """vLLM's prefix cache of blocks, its default block size for the device (a running judge
        reports the real one: ``VLLMJudge.reuse_model``)."""
        return ReuseModel("blocks", VLLM_DEFAULT_BLOCK[self.device])

    def machine_needs(self, data_root: Path | None) -> MachineNeeds:
        """vLLM (its CUDA build and ``gpus`` GPUs, or its CPU build), the GGUF, and the weights of a
        hub ``model_id`` in the local cache (never downloaded)."""
        packages, files = gguf_needs(self.gguf_path, self.gguf_package)
        local_model = bool(packages or files) or Path(self.model_id or "").expanduser().is_dir()
        weights = None if local_model else self.model_id
        on_cuda = self.device == "gpu"
        return MachineNeeds(
            "vLLM on CUDA" if on_cuda else "vLLM's CPU build",
            gpus=self.gpus_needed,
            cuda_build=on_cuda,
            modules=("vllm", *packages),
            files=files,
            cached_weights=weights,
        )

    def prompt_tokenizer(self) -> PromptTokenizer | None:
        """The tokenizer of the folder vLLM loads: the dequantised GGUF, or a local ``model_id`` folder."""
        try:
            gguf = self.gguf()
        except FileNotFoundError:
            return None
        if gguf is not None:
            folder = converted_model_dir(gguf)
            return TransformersTokenizer(folder) if read_stamp(folder) is not None else None
        local = Path(self.model_id or "").expanduser()
        return TransformersTokenizer(local) if self.model_id and (local / "tokenizer_config.json").is_file() else None
