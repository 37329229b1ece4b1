"""Every backend states every sampling knob; the cache key names the ones that truncate (docs/judgments.md)."""

from __future__ import annotations

import pytest

from argassets.platform.judging.engines import build_judge
from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.engines.vllm_backend import sampling_kwargs
from argassets.platform.judging.identity import model_identity
from argassets.platform.judging.interface import ChatRequest, SamplingParams, run_seed
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.registry.diff import entry_fingerprint
from argassets.platform.registry.entries import RegistryError
from argassets.platform.registry.model_entry import ModelEntry
from argassets.studies import code_location_studies, parse_registry

REQUEST = ChatRequest("c", "s", "u", choices=LABELS)


def _entry(**fields: object) -> ModelEntry:
    return parse_registry({"models": [{"name": "m", "studies": ["argument_quality"], **fields}]}).get("m")


def test_full_distribution_key_is_the_key_from_before_the_knobs() -> None:
    # The key SamplingParams(1.0, 1.0, 3, 8) had (computed with the code of 02684ed) when it held only temperature, top_p, seed, max_tokens.
    assert SamplingParams(1.0, 1.0, 3, 8).key() == "5ce9a5a5dd30b398"
    assert SamplingParams(1.0, 1.0, 3, 8, logprobs=20).key() == "5ce9a5a5dd30b398"
    truncated = {SamplingParams(1.0, 1.0, 3, 8, top_k=1).key(), SamplingParams(1.0, 1.0, 3, 8, min_p=0.05).key()}
    assert len(truncated) == 2 and "5ce9a5a5dd30b398" not in truncated
    assert SamplingParams(1.0, min_p=0.05).truncated_knobs() == {"min_p": 0.05}
    with pytest.raises(ValueError, match="top_k"):
        SamplingParams(1.0, top_k=0)


def test_vllm_and_openai_requests_state_every_knob() -> None:
    sampling = SamplingParams(1.0, seed=2, logprobs=5)
    kwargs, _ = sampling_kwargs(REQUEST, sampling, [0])
    assert {
        k: kwargs[k] for k in ("top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty")
    } == {
        "top_k": 0,
        "min_p": 0.0,
        "repetition_penalty": 1.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
    }
    assert kwargs["logprobs"] == 5
    body = OpenAIJudge("m", "http://127.0.0.1:9/v1").request_body(REQUEST, sampling, 1)
    assert body["top_k"] == 0 and body["min_p"] == 0.0 and body["repetition_penalty"] == body["repeat_penalty"] == 1.0
    assert body["presence_penalty"] == body["frequency_penalty"] == 0.0 and body["seed"] == run_seed(
        2, REQUEST.prompt_sha256, 1
    )
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    hosted = OpenAIJudge("m", "http://127.0.0.1:9/v1", server_sampling_defaults=True).request_body(REQUEST, sampling, 1)
    assert not {"top_k", "min_p", "repetition_penalty", "repeat_penalty"} & set(hosted)
    truncated, _ = sampling_kwargs(REQUEST, SamplingParams(1.0, top_k=1, min_p=0.05), [0])
    assert truncated["top_k"] == 1 and truncated["min_p"] == 0.05


def test_server_defaults_keep_the_old_identity_and_new_fields_keep_fingerprints() -> None:
    stated = _entry(backend="openai", model_id="x")
    declared = _entry(backend="openai", model_id="x", server_sampling_defaults=True)
    assert model_identity(stated)["sampling_knobs"] == "stated" and "sampling_knobs" not in model_identity(declared)
    assert build_judge(declared, environ={"ARGASSETS_OPENAI_BASE_URL": "http://h/v1"}).server_sampling_defaults  # type: ignore[attr-defined]
    plain = _entry(backend="random")
    assert entry_fingerprint(plain, code_location_studies()) == entry_fingerprint(
        _entry(backend="random", mode="sample"), code_location_studies()
    )
    assert entry_fingerprint(stated, code_location_studies()) != entry_fingerprint(declared, code_location_studies())
    with pytest.raises(RegistryError, match="server_sampling_defaults"):
        _entry(backend="vllm", model_id="x", gpus=1, server_sampling_defaults=True)
    with pytest.raises(RegistryError, match="label_probabilities"):
        _entry(backend="random", mode="label_probabilities")
