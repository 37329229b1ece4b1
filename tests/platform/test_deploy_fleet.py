"""The remote vLLM fleet: manifests and registry render from data/models.toml and work together.

``FakeFleet`` is a real HTTP server speaking the part of vLLM's OpenAI-compatible API the
``openai`` backend uses (``POST /v1/chat/completions``, bearer key); the reliability tests use it
too, as a counting endpoint.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.interface import ChatRequest, SamplingParams, run_seed
from argassets.studies import load_registry

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "deploy" / "vllm-fleet"
DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class FakeFleet:
    """A local OpenAI-compatible endpoint that counts and records every request it answers.

    Parameters
    ----------
    api_key
        The bearer key it demands (401 otherwise).
    delay_s
        Seconds each answer takes (to catch a run in the middle of its work).
    answer
        The content returned for a request body.
    """

    def __init__(self, api_key: str = "fleet-key", delay_s: float = 0.0, answer=None):
        self.api_key = api_key
        self.delay_s = delay_s
        self.answer = answer or (lambda body: json.dumps({"label": "A"}))
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.unauthorized = 0
        fleet = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                if not raw or len(raw) < length:
                    # The client died while sending (the kill tests): no request was made.
                    return
                body = json.loads(raw)
                if self.headers.get("Authorization") != f"Bearer {fleet.api_key}":
                    with fleet.lock:
                        fleet.unauthorized += 1
                    self._reply(401, {"error": "unauthorized"})
                    return
                if self.path != "/v1/chat/completions":
                    self._reply(404, {"error": self.path})
                    return
                if fleet.delay_s:
                    time.sleep(fleet.delay_s)
                content = fleet.answer(body)
                with fleet.lock:
                    fleet.requests.append(body)
                self._reply(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)  # quick shutdown

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeFleet:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def request_keys(self) -> list[tuple[str, int | None]]:
        """(SHA-256 of the messages, seed) of every answered request, in order."""
        with self.lock:
            return [
                (hashlib.sha256(json.dumps(b["messages"], sort_keys=True).encode()).hexdigest(), b.get("seed"))
                for b in self.requests
            ]


def _render_module():
    spec = importlib.util.spec_from_file_location("argassets_deploy_render_fleet", ROOT / "deploy" / "render.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


render = _render_module()


def _env_example() -> dict[str, str]:
    pairs = {}
    for line in (FLEET / "fleet.env.example").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            pairs[key] = value
    return pairs


@pytest.fixture(scope="module")
def manifests() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((FLEET / "fleet.yaml").read_text(encoding="utf-8")) if doc]


def test_every_vllm_model_is_served_with_its_registry_gpu_count(manifests: list[dict[str, Any]]) -> None:
    vllm = [e for e in load_registry().models if e.backend == "vllm" and e.device == "gpu"]
    deployments = {d["metadata"]["annotations"]["argassets/model"]: d for d in manifests if d["kind"] == "Deployment"}
    services = {d["metadata"]["name"] for d in manifests if d["kind"] == "Service"}
    assert set(deployments) == {e.name for e in vllm}
    for entry in vllm:
        deployment = deployments[entry.name]
        name = deployment["metadata"]["name"]
        assert DNS_1123.match(name), name
        assert name in services
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        args = container["args"]
        assert args[args.index("--tensor-parallel-size") + 1] == str(entry.gpus)
        assert args[args.index("--served-model-name") + 1] == entry.model_id
        assert container["resources"]["limits"]["nvidia.com/gpu"] == str(entry.gpus)
        assert deployment["spec"]["template"]["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
        # The key comes from a Secret, never from the manifest.
        [key_env] = [e for e in container["env"] if e["name"] == "VLLM_API_KEY"]
        assert "secretKeyRef" in key_env["valueFrom"]
        assert deployment["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/instance": name}


def test_fleet_registry_keeps_every_partition_and_points_each_vllm_model_at_its_server() -> None:
    main = load_registry()
    fleet = load_registry(FLEET / "models.toml")
    assert fleet.names == main.names, "same partitions whether models run offline or on the fleet"
    env = _env_example()
    assert env["ARGASSETS_MODELS"] == "deploy/vllm-fleet/models.toml"
    for entry in main.models:
        served = fleet.get(entry.name)
        assert served.studies == entry.studies and served.scope == entry.scope
        assert served.sampling == entry.sampling and served.position_bias == entry.position_bias
        if entry.backend == "vllm" and entry.device == "gpu":
            assert served.backend == "openai" and served.gpus_needed == 0
            assert served.model_id == entry.model_id
            assert env[served.base_url_env] == render.service_url(entry.name)
            assert served.api_key_env == "ARGASSETS_VLLM_API_KEY"
        else:
            assert served.backend == entry.backend
    assert env["ARGASSETS_VLLM_API_KEY"] == "", "the example never holds a key"


def test_fleet_entry_judges_through_an_openai_compatible_server() -> None:
    entry = load_registry(FLEET / "models.toml").get("qwen2.5-7b-instruct")
    with FakeFleet(api_key="s3cret-fleet-key") as fleet:
        env = {entry.base_url_env: fleet.base_url, entry.api_key_env: "s3cret-fleet-key"}
        judge = build_judge(entry, environ=env)
        try:
            requests = [
                ChatRequest(key=f"k{i}", system="sys", user=f"u{i}", choices=("A", "B", "Tie")) for i in range(3)
            ]
            results = judge.complete(requests, SamplingParams(temperature=1.0, seed=7), runs=[0, 1, 2])
        finally:
            judge.close()
        assert "s3cret" not in repr(judge)
    assert [[c.text for c in row] for row in results] == [['{"label": "A"}'] * 3] * 3
    assert len(fleet.requests) == 9 and fleet.unauthorized == 0
    assert {body["model"] for body in fleet.requests} == {"Qwen/Qwen2.5-7B-Instruct"}
    # Each prompt's runs are seeded from its hash (run_seed): 9 seeds, none shared between prompts.
    assert sorted(body["seed"] for body in fleet.requests) == sorted(
        run_seed(7, request.prompt_sha256, run) for request in requests for run in range(3)
    )
    assert len({body["seed"] for body in fleet.requests}) == 9


def test_a_wrong_fleet_key_is_refused_without_leaking_it() -> None:
    entry = load_registry(FLEET / "models.toml").get("qwen2.5-7b-instruct")
    with FakeFleet(api_key="right-key") as fleet:
        judge = build_judge(entry, environ={entry.base_url_env: fleet.base_url, entry.api_key_env: "wrong-key-123"})
        with pytest.raises(Exception) as failure:
            judge.complete(
                [ChatRequest(key="k", system="s", user="u", choices=("A", "B", "Tie"))], SamplingParams(1.0), [0]
            )
        judge.close()
    assert "401" in str(failure.value)
    assert "wrong-key-123" not in str(failure.value)


@pytest.fixture()
def fake_fleet() -> Iterator[FakeFleet]:
    with FakeFleet() as fleet:
        yield fleet


def test_fake_fleet_counts_what_it_answers(fake_fleet: FakeFleet) -> None:
    import httpx

    response = httpx.post(
        fake_fleet.base_url + "/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "x"}], "seed": 3},
        headers={"Authorization": "Bearer fleet-key"},
    )
    assert response.status_code == 200
    assert len(fake_fleet.request_keys()) == 1 and fake_fleet.request_keys()[0][1] == 3
