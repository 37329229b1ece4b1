"""The model registry: the shipped file, and every kind of bad edit named by entry and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from argassets.platform.registry.entries import DEFAULT_REGISTRY_PATH, RegistryError
from argassets.studies import load_registry, parse_registry

PAPER_MODEL_IDS = {
    "mistralai/Mistral-7B-Instruct-v0.3",
    "meta-llama/Llama-3.1-8B-Instruct",
    "allenai/OLMo-2-1124-7B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct",
    "CohereLabs/c4ai-command-r7b-12-2024",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "mistralai/Mistral-Small-Instruct-2409",
    "allenai/OLMo-2-0325-32B-Instruct",
    "mistralai/Mixtral-8x22B-Instruct-v0.1",
    "meta-llama/Llama-3.3-70B-Instruct",
    "Qwen/Qwen2.5-72B-Instruct",
    "CohereLabs/c4ai-command-r-plus-08-2024",
}


def test_shipped_registry_has_the_paper_models_and_the_baselines() -> None:
    registry = load_registry(DEFAULT_REGISTRY_PATH)
    vllm_ids = {entry.model_id for entry in registry.models if entry.backend == "vllm" and entry.device == "gpu"}
    assert vllm_ids == PAPER_MODEL_IDS
    # Plus SmolLM2 through vLLM's CPU build, for the tests (pilot scope).
    cpu = registry.get("smollm2-135m-vllm")
    assert (
        cpu.backend == "vllm"
        and cpu.device == "cpu"
        and cpu.gpus == 0
        and cpu.scope["argument_quality"].max_comparisons
    )
    assert registry.get("random").is_baseline
    assert registry.get("longer-wins").is_baseline
    assert not registry.get("smollm2-135m").is_baseline
    gpus = {
        entry.model_id: entry.gpus for entry in registry.models if entry.backend == "vllm" and entry.device == "gpu"
    }
    assert gpus["meta-llama/Llama-3.3-70B-Instruct"] == 4
    assert gpus["Qwen/Qwen2.5-7B-Instruct"] == 1
    assert gpus["mistralai/Mixtral-8x7B-Instruct-v0.1"] == 2


def test_minimal_entry_is_complete() -> None:
    registry = parse_registry({"models": [{"name": "x", "backend": "random", "studies": ["argument_quality"]}]})
    entry = registry.get("x")
    assert entry.scope == {} and entry.scope_text("argument_quality") == "full"
    assert registry.for_study("political") == []
    assert [e.name for e in registry.for_study("argument_quality")] == ["x"]


def test_scope_is_described() -> None:
    registry = parse_registry(
        {
            "models": [
                {
                    "name": "pilot",
                    "backend": "random",
                    "studies": ["argument_quality"],
                    "scope": {"topics": [1, 2], "dimensions": ["logic"], "max_comparisons": 10},
                }
            ]
        }
    )
    assert registry.get("pilot").scope_text("argument_quality") == "topics=1,2; dimensions=logic; max_comparisons=10"


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"name": "x", "backend": "gpt", "studies": ["political"]}, "entry #1 ('x'): field 'backend'"),
        ({"name": "x", "backend": "random", "studies": []}, "entry #1 ('x'): field 'studies'"),
        ({"name": "x", "backend": "random", "studies": ["poetry"]}, "field 'studies.0'"),
        ({"name": "Bad Name", "backend": "random", "studies": ["political"]}, "field 'name'"),
        ({"name": "x", "backend": "random", "studies": ["political"], "temprature": 1}, "field 'temprature'"),
        ({"name": "x", "backend": "vllm", "studies": ["political"], "gpus": 1}, "needs 'model_id'"),
        ({"name": "x", "backend": "vllm", "studies": ["political"], "model_id": "m"}, "needs 'gpus'"),
        ({"name": "x", "backend": "import", "studies": ["political"]}, "needs 'path'"),
        (
            {"name": "x", "backend": "random", "studies": ["political"], "sampling": {"top_p": 0}},
            "field 'sampling.top_p'",
        ),
    ],
)
def test_bad_entries_name_the_entry_and_field(entry: dict, expected: str) -> None:
    with pytest.raises(RegistryError) as raised:
        parse_registry({"models": [entry]}, "models.toml")
    assert expected in str(raised.value)
    assert "models.toml" in str(raised.value)


def test_duplicate_names_are_rejected() -> None:
    entry = {"name": "x", "backend": "random", "studies": ["political"]}
    with pytest.raises(RegistryError, match="'x' is used twice"):
        parse_registry({"models": [entry, dict(entry)]})


def test_unknown_top_level_keys_are_errors(tmp_path: Path) -> None:
    entry = {"name": "x", "backend": "random", "studies": ["political"]}
    with pytest.raises(RegistryError, match=r"models.toml: unknown top-level key 'defaults' \(the registry holds only"):
        parse_registry({"models": [entry], "defaults": {"seed": 1}}, "models.toml")
    typo = tmp_path / "typo.toml"
    typo.write_text('[[model]]\nname = "x"\nbackend = "random"\nstudies = ["political"]\n')
    with pytest.raises(RegistryError, match=r"typo.toml: no \[\[models\]\] entries; unknown top-level key 'model'"):
        load_registry(typo)
    two = tmp_path / "two.toml"
    two.write_text('title = "t"\nversion = 2\n[[models]]\nname = "x"\nbackend = "random"\nstudies = ["political"]\n')
    with pytest.raises(RegistryError, match="unknown top-level keys 'title', 'version'"):
        load_registry(two)


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.toml"
    with pytest.raises(RegistryError, match="none.toml: model registry file not found"):
        load_registry(missing)
    broken = tmp_path / "broken.toml"
    broken.write_text("[[models]\nname = 'x'\n")
    with pytest.raises(RegistryError, match="broken.toml: not valid TOML"):
        load_registry(broken)
    empty = tmp_path / "empty.toml"
    empty.write_text("title = 'nothing'\n")
    with pytest.raises(RegistryError, match=r"empty.toml: no \[\[models\]\] entries"):
        load_registry(empty)


def test_env_var_overrides_the_shipped_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    custom = tmp_path / "models.toml"
    custom.write_text('[[models]]\nname = "only"\nbackend = "random"\nstudies = ["political"]\n')
    monkeypatch.setenv("ARGASSETS_MODELS", str(custom))
    assert load_registry().names == ["only"]


def _scoped(scope: dict, studies: tuple[str, ...] = ("argument_quality", "political")) -> dict:
    return {"models": [{"name": "pilot", "backend": "random", "studies": list(studies), "scope": scope}]}


def test_scope_per_study_and_its_flat_shorthand_agree() -> None:
    tables = parse_registry(
        _scoped({"argument_quality": {"topics": [1], "max_comparisons": 4}, "political": {"max_arguments": 9}})
    )
    flat = parse_registry(_scoped({"topics": [1], "max_comparisons": 4, "max_arguments": 9}))
    for registry in (tables, flat):
        entry = registry.get("pilot")
        assert entry.scope_text("argument_quality") == "topics=1; max_comparisons=4"
        assert entry.scope_text("political") == "max_arguments=9"
    assert tables.get("pilot") == flat.get("pilot")


@pytest.mark.parametrize(
    ("scope", "studies", "expected"),
    [
        ({"topics": [99]}, ("argument_quality",), "topic 99 is not a topic of Webis-ArgQuality-20 (1..20)"),
        ({"argument_quality": {"topics": [0, 3]}}, ("argument_quality",), "topic 0 is not a topic"),
        ({"dimensions": ["logos"]}, ("argument_quality",), "scope of argument_quality: dimensions.0: Input should be"),
        ({"strategies": ["two-shot"]}, ("argument_quality",), "scope of argument_quality: strategies.0"),
        ({"topics": []}, ("argument_quality",), "scope of argument_quality: topics: List should have at least 1 item"),
        ({"dimensions": []}, ("argument_quality",), "dimensions: List should have at least 1 item"),
        ({"political": {"max_arguments": 0}}, ("political",), "scope of political: max_arguments"),
        (
            {"max_arguments": 5},
            ("argument_quality",),
            "'max_arguments' is neither a study nor a scope field of this entry's studies",
        ),
        (
            {"political": {"max_arguments": 5}},
            ("argument_quality",),
            "restricts study 'political', which this entry takes no part in",
        ),
        ({"poetry": {"max_lines": 5}}, ("argument_quality",), "'poetry' is neither a study nor a scope field"),
        (
            {"political": {"max_arguments": 5}, "topics": [1]},
            ("argument_quality", "political"),
            "mixes per-study tables",
        ),
    ],
)
def test_a_scope_that_selects_nothing_or_names_the_unknown_names_the_entry(
    scope: dict, studies: tuple[str, ...], expected: str
) -> None:
    with pytest.raises(RegistryError) as raised:
        parse_registry(_scoped(scope, studies), "models.toml")
    message = str(raised.value)
    assert "models.toml: entry #1 ('pilot'): field 'scope'" in message
    assert expected in message


def test_unknown_study_lists_the_known_ones() -> None:
    with pytest.raises(RegistryError, match=r"unknown study 'poetry' \(known: argument_quality, political"):
        parse_registry({"models": [{"name": "x", "backend": "random", "studies": ["poetry"]}]})
