"""Credentials in a URL are never shown (issue 21, part 5): redaction, and the judge's basic auth.

The whole-platform check (a planted secret searched in DAGSTER_HOME, the DuckDB file, the cache and
the captured output after a failing and a succeeding run) is in ``test_reliability_runs.py``.
"""

from __future__ import annotations

import pytest

from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.interface import ChatRequest, PartialBatchError, SamplingParams
from argassets.platform.secrets import redact, split_credentials
from argassets.platform.storage.judgment_cache.location import redact_location
from tests.platform.test_deploy_fleet import FakeFleet

SECRET = "sk-URLSECRET456"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"POST http://user:{SECRET}@127.0.0.1:18998/v1 failed", "POST http://user:***@127.0.0.1:18998/v1 failed"),
        (f"postgresql://argassets:{SECRET}@db:5432/cache", "postgresql://argassets:***@db:5432/cache"),
        (f"neo4j+s://neo4j:{SECRET}@graph.example", "neo4j+s://neo4j:***@graph.example"),
        (f"https://host/v1?api_key={SECRET}&model=x", "https://host/v1?api_key=***&model=x"),
        ("http://127.0.0.1:8000/v1 and /data/cache.sqlite", "http://127.0.0.1:8000/v1 and /data/cache.sqlite"),
    ],
)
def test_every_url_credential_is_redacted(text: str, shown: str) -> None:
    assert redact(text) == shown
    assert redact_location(text) == shown


def test_credentials_leave_the_url_and_become_basic_auth() -> None:
    assert split_credentials(f"http://user:{SECRET}@127.0.0.1:18998/v1") == (
        "http://127.0.0.1:18998/v1",
        ("user", SECRET),
    )
    assert split_credentials("http://127.0.0.1:18998/v1") == ("http://127.0.0.1:18998/v1", None)


def test_a_judge_rejected_by_its_endpoint_names_the_url_without_its_credentials() -> None:
    with FakeFleet(api_key="the-key") as fleet:
        url = fleet.base_url.replace("http://", f"http://user:{SECRET}@")
        judge = OpenAIJudge("fake/judge", url, api_key="the-key", max_retries=0)
        assert SECRET not in repr(judge) and judge.base_url == fleet.base_url
        with pytest.raises(PartialBatchError, match="rejected with HTTP 401") as failure:
            judge.complete([ChatRequest("k", "system", "user")], SamplingParams(0.0), [0])
        judge.close()
    # Basic auth replaced the bearer key, so the endpoint refused: the error names the clean URL.
    assert fleet.unauthorized == 1
    assert fleet.base_url in str(failure.value) and SECRET not in str(failure.value)
