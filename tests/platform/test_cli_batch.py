"""``argassets batch export`` and ``argassets batch import`` end to end, on the sample corpus's inputs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli_home import BIN, ROOT, cli_environment

pytestmark = pytest.mark.slow

REGISTRY = """[[models]]
name = "gpt"
backend = "openai"
studies = ["argument_quality"]
model_id = "gpt-x"
scope.argument_quality = { dimensions = ["logic"], strategies = ["zero"], max_comparisons = 5 }

[[models]]
name = "random"
backend = "random"
studies = ["argument_quality"]
"""


def _argassets(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "argassets"), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def _result(custom_id: str) -> str:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": '{"label": "A"}'}}], "created": 1}
    return json.dumps({"custom_id": custom_id, "response": {"status_code": 200, "body": body}, "error": None})


def test_a_partition_goes_out_as_batch_files_and_comes_back(tmp_path: Path, study_a_inputs_home: Path) -> None:
    env = cli_environment(tmp_path, REGISTRY, inputs=study_a_inputs_home)
    out = tmp_path / "batch"
    exported = _argassets(env, "batch", "export", "gpt", "--study", "argument_quality", "--out", str(out))
    assert exported.returncode == 0, exported.stderr[-2000:]
    assert "15 requests written (requests-0001.jsonl)" in exported.stdout  # 5 comparisons x 3 runs
    ids = [json.loads(line)["custom_id"] for line in (out / "requests-0001.jsonl").read_text().splitlines()]
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(_result(i) for i in ids[:14]) + "\n" + _result(ids[14])[:30] + "\n")
    imported = _argassets(env, "batch", "import", "gpt", "--study", "argument_quality", str(results))
    assert imported.returncode == 2 and f"{results}:15: " in imported.stderr and "14 stored" in imported.stderr
    again = _argassets(env, "batch", "export", "gpt", "--study", "argument_quality", "--out", str(out), "--again")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "1 requests written (requests-0002.jsonl)" in again.stdout and "14 already judged" in again.stdout
    wrong = _argassets(env, "batch", "export", "random", "--study", "argument_quality", "--out", str(tmp_path / "r"))
    assert wrong.returncode == 2 and "has no batch files" in wrong.stderr
