"""No model hub, ever: every process that imports argassets, and every process it starts, runs offline.

The Hugging Face libraries and vLLM read the offline flags from the environment (vLLM's engine core
and workers inherit it). A process that imports argassets and then asks for a model that is not on
disk fails at once without opening a connection; the same request without argassets (the control)
tries the network, so the test can fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from argassets.platform.judging.offline import OFFLINE_ENVIRONMENT, set_engine_log_level

ROOT = Path(__file__).resolve().parents[2]

#: Records every name lookup and connection, refuses them, then asks transformers for a hub model
#: (without waiting between the hub client's retries: they cost the control 23 s).
ASK_THE_HUB = """
import socket, sys, time
time.sleep = lambda seconds: None
attempts = []
def refuse(*args, **kwargs):
    attempts.append(args[:2])
    raise OSError("network blocked by the test")
socket.getaddrinfo = refuse
socket.socket.connect = lambda self, address: refuse(address)
if sys.argv[1] == "with-argassets":
    import argassets  # noqa: F401
from transformers import AutoConfig
try:
    AutoConfig.from_pretrained("mistralai/Mistral-7B-Instruct-v0.3")
    print("loaded")
except OSError as exc:
    print("failed:", type(exc).__name__)
print("attempts", len(attempts))
"""


def _clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_", "VLLM_", "DO_NOT"))}
    env.update(HF_HOME=str(tmp_path / "hf"), PYTHONPATH=str(ROOT))
    return env


def test_a_process_importing_argassets_and_its_children_have_the_offline_flags(tmp_path: Path) -> None:
    names = sorted(OFFLINE_ENVIRONMENT)
    child = f"import os, json; print(json.dumps({{k: os.environ.get(k) for k in {names!r}}}))"
    parent = f"import argassets, subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    done = subprocess.run(
        [sys.executable, "-c", parent], env=_clean_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(done.stdout) == dict(OFFLINE_ENVIRONMENT)


def test_a_model_not_on_disk_fails_at_once_without_any_connection(tmp_path: Path) -> None:
    def ask(mode: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", ASK_THE_HUB, mode],
            env=_clean_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    offline = ask("with-argassets")
    assert "failed: OSError" in offline
    assert "attempts 0" in offline, offline
    control = ask("without")
    assert "attempts 0" not in control, "without the flags the library asks the network (the test can fail)"


def test_engine_logs_are_quiet_unless_verbose_and_a_chosen_level_is_kept() -> None:
    quiet: dict[str, str] = {}
    set_engine_log_level(False, quiet)
    assert quiet == {"VLLM_LOGGING_LEVEL": "WARNING"}
    chosen = {"VLLM_LOGGING_LEVEL": "DEBUG"}
    set_engine_log_level(False, chosen)
    assert chosen == {"VLLM_LOGGING_LEVEL": "DEBUG"}
    verbose: dict[str, str] = {}
    set_engine_log_level(True, verbose)
    assert verbose == {"VLLM_LOGGING_LEVEL": "INFO"}
