"""Run tags derived from a registry entry: how many GPUs a run asks for, and where it may run."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from argassets.platform.registry.model_entry import ModelEntry

MODEL_TAG = "argassets/model"
BACKEND_TAG = "argassets/backend"
GPUS_TAG = "argassets/gpus"
POOL_TAG = "argassets/pool"
GPU_POOL = "gpu"
STUDY_TAG = "argassets/study"
#: On the automation's report runs, the study (``sensors.report_sensors``); the run queue
#: limits these runs to one per study at a time (``applyLimitPerUniqueValue``).
REPORTS_TAG = "argassets/reports"
K8S_CONFIG_TAG = "dagster-k8s/config"

#: Label set on GPU nodes by NVIDIA's GPU feature discovery (GPU operator); override with
#: ``ARGASSETS_K8S_GPU_NODE_SELECTOR`` (a JSON object) for clusters that label nodes otherwise.
DEFAULT_GPU_NODE_SELECTOR: dict[str, str] = {"nvidia.com/gpu.present": "true"}
NODE_SELECTOR_ENV_VAR = "ARGASSETS_K8S_GPU_NODE_SELECTOR"
#: Shared memory for tensor-parallel workers, per GPU.
SHM_PER_GPU_GI = 8


def gpu_node_selector(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The node selector for GPU runs: ``$ARGASSETS_K8S_GPU_NODE_SELECTOR`` or the default.

    Raises
    ------
    ValueError
        When the variable is set but is not a JSON object of strings.
    """
    env = os.environ if environ is None else environ
    raw = env.get(NODE_SELECTOR_ENV_VAR)
    if not raw:
        return dict(DEFAULT_GPU_NODE_SELECTOR)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{NODE_SELECTOR_ENV_VAR} is not JSON: {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f"{NODE_SELECTOR_ENV_VAR} must be a JSON object of string labels")
    return value


def k8s_gpu_config(gpus: int, node_selector: Mapping[str, str]) -> dict:
    """The ``dagster-k8s/config`` value for a run that needs ``gpus`` GPUs."""
    gpu_count = str(int(gpus))
    return {
        "container_config": {
            "resources": {
                "requests": {"nvidia.com/gpu": gpu_count},
                "limits": {"nvidia.com/gpu": gpu_count},
            },
            "volume_mounts": [{"name": "dshm", "mount_path": "/dev/shm"}],
        },
        "pod_spec_config": {
            "node_selector": dict(node_selector),
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "volumes": [
                {
                    "name": "dshm",
                    "empty_dir": {"medium": "Memory", "size_limit": f"{SHM_PER_GPU_GI * int(gpus)}Gi"},
                }
            ],
        },
    }


def run_tags_for_entry(
    entry: ModelEntry, study: str | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The run tags of a run of ``entry``'s partition (see the module docstring)."""
    tags = {
        MODEL_TAG: entry.name,
        BACKEND_TAG: entry.backend,
        GPUS_TAG: str(entry.gpus_needed),
    }
    if study is not None:
        tags[STUDY_TAG] = study
    if entry.gpus_needed > 0:
        tags[POOL_TAG] = GPU_POOL
        tags[K8S_CONFIG_TAG] = json.dumps(k8s_gpu_config(entry.gpus_needed, gpu_node_selector(environ)), sort_keys=True)
    return tags
