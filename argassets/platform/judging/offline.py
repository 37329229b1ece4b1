"""No model hub, ever: the environment every engine process starts with, and where engine logs go.

:func:`apply_engine_environment` runs when ``argassets`` is imported, so every process that can
start an engine (the CLI, ``dagster dev``'s code servers, run workers, Slurm jobs) and every
process those start (vLLM's engine core and workers inherit the environment) has the Hugging Face
offline flags and vLLM's "no usage statistics" flags set: a model that is not on disk fails at
once, instead of asking a hub for minutes. Engine logs (vLLM's) go to stderr, never to stdout
(which carries results: ``--json``, ``--csv``); the CLI lowers their level unless ``--verbose``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping

__all__ = ["ENGINE_LOG_LEVEL_ENV", "OFFLINE_ENVIRONMENT", "apply_engine_environment", "set_engine_log_level"]

#: Set (overriding any other value) in every process: the Hugging Face libraries and vLLM read them.
OFFLINE_ENVIRONMENT: Mapping[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "VLLM_DO_NOT_TRACK": "1",
    "DO_NOT_TRACK": "1",
}
#: vLLM's log stream: stderr, so that engine logs never mix with a command's results.
ENGINE_LOG_STREAM: Mapping[str, str] = {"VLLM_LOGGING_STREAM": "ext://sys.stderr"}
ENGINE_LOG_LEVEL_ENV = "VLLM_LOGGING_LEVEL"


def apply_engine_environment(environ: MutableMapping[str, str] | None = None) -> None:
    """Set the offline flags and the engine log stream in ``environ`` (default: this process's).

    When ``huggingface_hub`` was imported before (it reads its flag at import), its flag is set too.
    """
    env = os.environ if environ is None else environ
    env.update(OFFLINE_ENVIRONMENT)
    env.update(ENGINE_LOG_STREAM)
    constants = sys.modules.get("huggingface_hub.constants")
    if environ is None and constants is not None:
        constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]


def set_engine_log_level(verbose: bool, environ: MutableMapping[str, str] | None = None) -> None:
    """Engine logs at INFO with ``verbose``; otherwise warnings only, unless the user chose a level."""
    env = os.environ if environ is None else environ
    if verbose:
        env[ENGINE_LOG_LEVEL_ENV] = "INFO"
    else:
        env.setdefault(ENGINE_LOG_LEVEL_ENV, "WARNING")
