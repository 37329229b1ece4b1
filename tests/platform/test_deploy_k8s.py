"""The Kubernetes deployment: values render to a valid instance, and GPU runs get their GPUs.

No cluster: the Helm values are rendered the way the chart renders them (deploy/render.py), the
result is validated with Dagster's instance schema and dagster-k8s's run-launcher schema, and a
real ``K8sRunLauncher`` launches runs into a recording stand-in of the Kubernetes API, so the
Job manifests it would create are asserted on.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from dagster._config import process_config
from dagster._core.code_pointer import ModuleCodePointer
from dagster._core.instance.config import dagster_instance_config
from dagster._core.launcher import LaunchRunContext
from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin
from dagster._core.storage.dagster_run import DagsterRun
from dagster_k8s import K8sRunLauncher

from argassets.platform.operations.run_tags import run_tags_for_entry
from argassets.studies import load_registry, parse_registry
from tests.instances import new_instance

ROOT = Path(__file__).resolve().parents[2]


def _render_module():
    spec = importlib.util.spec_from_file_location("argassets_deploy_render", ROOT / "deploy" / "render.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


render = _render_module()

FAKE_KUBECONFIG = """
apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://127.0.0.1:1"}
  name: fake
contexts:
- context: {cluster: fake, user: fake}
  name: fake
current-context: fake
users:
- name: fake
  user: {token: fake}
"""


class RecordingBatchApi:
    """Stands in for kubernetes.client.BatchV1Api: records the Jobs instead of creating them."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, Any]] = []

    def create_namespaced_job(self, body: Any, namespace: str, **_: Any) -> Any:
        self.jobs.append((namespace, body))
        return body


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "deploy" / "k8s" / "values.yaml").read_text(encoding="utf-8"))


@pytest.fixture()
def launcher_config(values: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The rendered run-launcher config, processed by dagster-k8s's own schema."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    monkeypatch.setenv("DAGSTER_K8S_INSTANCE_CONFIG_MAP", "argassets-dagster-instance")
    monkeypatch.setenv("DAGSTER_K8S_PG_PASSWORD_SECRET", "dagster-postgresql-secret")
    monkeypatch.setenv("DAGSTER_K8S_PIPELINE_RUN_ENV_CONFIGMAP", "argassets-dagster-pipeline-env")
    rendered = render.render_instance(values)["run_launcher"]["config"]
    result = process_config(K8sRunLauncher.config_type(), rendered)
    assert result.success, result.errors
    return dict(result.value)


def test_committed_instance_and_fleet_files_match_their_sources() -> None:
    stale = [
        str(path.relative_to(ROOT))
        for path, text in render.rendered_files().items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    assert not stale, f"out of date (run: python deploy/render.py all): {stale}"


def test_rendered_instance_passes_dagsters_instance_schema(values: dict[str, Any], tmp_path: Path) -> None:
    shutil.copy(ROOT / "deploy" / "k8s" / "dagster.yaml", tmp_path / "dagster.yaml")
    config, custom_class = dagster_instance_config(str(tmp_path))
    assert custom_class is None
    assert config["run_launcher"]["class"] == "K8sRunLauncher"
    limits = config["concurrency"]["runs"]["tag_concurrency_limits"]
    assert {"key": "argassets/pool", "value": "gpu", "limit": 8} in limits
    assert config["concurrency"]["pools"]["default_limit"] == 8
    assert config["run_monitoring"]["enabled"] is True
    # No secret value anywhere in the deployment files: only names of Secrets and env vars.
    for name in ("values.yaml", "dagster.yaml", "storage.yaml"):
        text = (ROOT / "deploy" / "k8s" / name).read_text(encoding="utf-8").lower()
        assert "sk-" not in text and "password: " not in text.replace("password:\n", "")


def test_bad_values_are_refused_by_the_schemas(values: dict[str, Any]) -> None:
    broken = json.loads(json.dumps(values))
    broken["runLauncher"]["config"]["k8sRunLauncher"]["failPodOnRunFailure"] = "sometimes"
    rendered = render.render_instance(broken)["run_launcher"]["config"]
    assert not process_config(K8sRunLauncher.config_type(), rendered).success
    broken = json.loads(json.dumps(values))
    broken["runLauncher"]["type"] = "CeleryK8sRunLauncher"
    with pytest.raises(ValueError, match="K8sRunLauncher"):
        render.render_instance(broken)


def _launch(launcher_config: dict[str, Any], tmp_path: Path, tags: dict[str, str]) -> Any:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(FAKE_KUBECONFIG, encoding="utf-8")
    batch = RecordingBatchApi()
    config = {**launcher_config, "load_incluster_config": False, "kubeconfig_file": str(kubeconfig)}
    launcher = K8sRunLauncher(**config, k8s_client_batch_api=batch)
    origin = JobPythonOrigin(
        job_name="__ASSET_JOB",
        repository_origin=RepositoryPythonOrigin(
            executable_path="/usr/local/bin/python",
            code_pointer=ModuleCodePointer("argassets.definitions", "defs", working_directory="/opt/argassets"),
            container_image="registry.example.org/argassets:0.1.0",
        ),
    )
    with new_instance() as instance:
        launcher.register_instance(instance)
        run = instance.add_run(
            DagsterRun(job_name="__ASSET_JOB", run_id=str(uuid.uuid4()), tags=tags, job_code_origin=origin)
        )
        launcher.launch_run(LaunchRunContext(dagster_run=run, workspace=None))
    [(namespace, job)] = batch.jobs
    assert namespace == "argassets"
    return job


def test_gpu_partition_run_asks_kubernetes_for_its_gpus_on_a_gpu_node(
    launcher_config: dict[str, Any], tmp_path: Path
) -> None:
    entry = load_registry().get("llama-3.3-70b-instruct")
    tags = {**run_tags_for_entry(entry, study="argument_quality"), "dagster/partition": entry.name}
    job = _launch(launcher_config, tmp_path, tags)
    pod = job.spec.template.spec
    container = pod.containers[0]
    assert container.image == "registry.example.org/argassets:0.1.0"
    assert container.resources.limits["nvidia.com/gpu"] == "4"
    assert container.resources.requests["nvidia.com/gpu"] == "4"
    # The deployment's defaults still apply (CPU and memory of every run pod).
    assert container.resources.requests["cpu"] == "2"
    assert pod.node_selector == {"nvidia.com/gpu.present": "true"}
    assert [t.key for t in pod.tolerations] == ["nvidia.com/gpu"]
    volumes = {v.name: v for v in pod.volumes}
    assert volumes["dshm"].empty_dir.medium == "Memory"
    assert volumes["dshm"].empty_dir.size_limit == "32Gi"
    assert "argassets-data" in volumes
    secrets = [source.secret_ref.name for source in container.env_from if source.secret_ref]
    assert secrets == ["argassets-secrets"]
    assert job.spec.backoff_limit == 0


def test_cpu_partition_run_gets_no_gpu(launcher_config: dict[str, Any], tmp_path: Path) -> None:
    entry = load_registry().get("random")
    job = _launch(launcher_config, tmp_path, {**run_tags_for_entry(entry), "dagster/partition": "random"})
    container = job.spec.template.spec.containers[0]
    assert "nvidia.com/gpu" not in (container.resources.limits or {})
    assert job.spec.template.spec.node_selector in (None, {})


@pytest.mark.parametrize("gpus", [1, 2, 4])
def test_every_gpu_size_of_the_registry_maps_to_its_request(
    launcher_config: dict[str, Any], tmp_path: Path, gpus: int
) -> None:
    registry = parse_registry(
        {
            "models": [
                {
                    "name": f"m{gpus}",
                    "backend": "vllm",
                    "model_id": "x/y",
                    "gpus": gpus,
                    "studies": ["argument_quality"],
                }
            ]
        }
    )
    job = _launch(launcher_config, tmp_path, run_tags_for_entry(registry.get(f"m{gpus}")))
    assert job.spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"] == str(gpus)


def test_registry_gpu_counts_are_the_ones_the_paper_used() -> None:
    registry = load_registry()
    sizes = {e.size_class: e.gpus for e in registry.models if e.backend == "vllm" and e.device == "gpu"}
    assert sizes == {"small": 1, "medium": 2, "large": 4}


def _env_file(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs if not key.lstrip().startswith("#")}


def test_run_pods_share_postgresql_cache_and_parquet_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deployment's environment selects the storage that concurrent run pods can share."""
    from argassets.platform.resources.judges import JudgmentCacheResource
    from argassets.platform.resources.storage import TableStorageIOManager, table_io_manager
    from argassets.platform.storage.judgment_cache.postgres import PostgresJudgmentStore

    [config_map] = [
        doc
        for doc in yaml.safe_load_all((ROOT / "deploy" / "k8s" / "storage.yaml").read_text(encoding="utf-8"))
        if doc["kind"] == "ConfigMap"
    ]
    secrets = _env_file(ROOT / "deploy" / "k8s" / "secrets.env.example")
    # No SQLite cache on the shared volume: the cache URL (with its password) is a secret.
    assert "ARGASSETS_CACHE" not in config_map["data"]
    assert secrets["ARGASSETS_CACHE"].startswith("postgresql://")
    assert config_map["data"]["ARGASSETS_TABLES"] == "/data/tables"
    mounts = {
        m["mountPath"]
        for m in yaml.safe_load((ROOT / "deploy" / "k8s" / "values.yaml").read_text())["runLauncher"]["config"][
            "k8sRunLauncher"
        ]["volumeMounts"]
    }
    assert config_map["data"]["ARGASSETS_TABLES"].startswith(tuple(mounts))
    for key, value in {**config_map["data"], **secrets}.items():
        monkeypatch.setenv(key, value)
    cache = JudgmentCacheResource().open()
    assert isinstance(cache, PostgresJudgmentStore)  # selected, not connected
    assert "CHANGE-ME" not in JudgmentCacheResource().location()
    manager = table_io_manager()
    assert isinstance(manager, TableStorageIOManager) and manager.location() == "/data/tables"
