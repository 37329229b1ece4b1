"""Credentials in a URL are never shown (issue 21, part 5): redaction, and the judge's basic auth.

The whole-platform check (a planted secret searched in DAGSTER_HOME, the DuckDB file, the cache and
the captured output after a failing and a succeeding run) is in ``test_reliability_runs.py``.
"""

from __future__ import annotations

import socket
from urllib.parse import quote, unquote

import pytest

from argassets.platform.judging.engines.openai_compat import OpenAIJudge
from argassets.platform.judging.interface import ChatRequest, PartialBatchError, SamplingParams
from argassets.platform.secrets import redact, remember_secret, split_credentials, url_password
from argassets.platform.storage.judgment_cache import PostgresJudgmentStore
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


#: A password that breaks URL parsing: '@', ':', '/', '#', '%', a space and non-ASCII, unescaped.
TRICKY = "HEADPART@mi:d/dl#e%zz sp€ce-TAILPART"
#: Pieces a half-parsed URL would leave in a message (the probe found the part after the first '@').
PIECES = ("HEADPART", "TAILPART", "mi:d/dl", "sp€ce", "%zz sp")


def tricky_url(port: int = 1, escaped: bool = False) -> str:
    password = quote(TRICKY, safe="") if escaped else TRICKY
    return f"postgresql://argassets:{password}@127.0.0.1:{port}/cache"


@pytest.mark.parametrize("escaped", [False, True])
def test_a_password_that_breaks_url_parsing_is_taken_whole(escaped: bool) -> None:
    clean, credentials = split_credentials(tricky_url(5432, escaped))
    assert clean == "postgresql://127.0.0.1:5432/cache"
    assert credentials == ("argassets", TRICKY if escaped else unquote(TRICKY))
    assert url_password(tricky_url(escaped=escaped)) == (quote(TRICKY, safe="") if escaped else TRICKY)


@pytest.mark.parametrize("escaped", [False, True])
def test_configured_secrets_are_redacted_wherever_they_appear(escaped: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGASSETS_CACHE", tricky_url(escaped=escaped))
    monkeypatch.setenv("NEO4J_PASSWORD", "neo4j-Pa55 word")
    monkeypatch.setenv("MY_LLM_API_KEY", "sk-key-in-a-variable")
    text = (
        f"connect to {tricky_url(escaped=escaped)} failed; password {TRICKY!r} in a message, "
        f"encoded {quote(TRICKY, safe='')}; neo4j auth neo4j-Pa55 word; Bearer sk-key-in-a-variable"
    )
    shown = redact(text)
    for piece in (*PIECES, "neo4j-Pa55", "sk-key-in-a-variable", "%40mi"):
        assert piece not in shown, shown
    assert "postgresql://argassets:***@127.0.0.1:1/cache" in shown


def test_a_key_read_from_a_variable_of_any_name_is_redacted_once_remembered() -> None:
    remember_secret("key-from-an-entrys-own-variable")
    assert redact("HTTP 401 for key-from-an-entrys-own-variable") == "HTTP 401 for ***"


def test_an_unreachable_postgres_cache_names_its_url_without_any_piece_of_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = PostgresJudgmentStore(tricky_url(port), connect_timeout_s=5)
    with pytest.raises(ConnectionError) as failure:
        store.count()
    message = str(failure.value)
    assert message.startswith(f"judgment cache postgresql://argassets:***@127.0.0.1:{port}/cache: cannot connect")
    assert "refused" in message.lower()
    for piece in PIECES:
        assert piece not in message and piece not in repr(store.location)
