"""The results pages are found and served where they are now (a moved home still finds its pages)."""

from __future__ import annotations

import threading
import urllib.request
from pathlib import Path

import pytest

from argassets import cli
from argassets.platform.reporting.pages import (
    PageNotFoundError,
    find_page,
    page_server,
    page_url,
    serve_pages_in_background,
)


def _home(root: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    reports = root / "reports"
    reports.mkdir(parents=True)
    (reports / "aq_results.html").write_text(text)
    (reports / "political_results.html").write_text("B")
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(root / "argassets.duckdb"))
    return reports


def test_a_page_is_resolved_when_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    _home(tmp_path / "old", monkeypatch, "A old")
    assert find_page("aq_results_page").read_text() == "A old"
    moved = _home(tmp_path / "moved", monkeypatch, "A moved")  # a copied home, configured now
    for name in ("aq_results", "aq_results.html", "aq_results_page", "aq"):
        assert find_page(name) == moved / "aq_results.html"
    assert cli.main(["open", "political", "--print"]) == 0
    assert capsys.readouterr().out.strip() == str(moved / "political_results.html")
    with pytest.raises(PageNotFoundError, match="'nothing' is not a results page .*pages: aq_results, political"):
        find_page("nothing")
    assert cli.main(["open", "nothing", "--print"]) == 2
    assert "is not a results page" in capsys.readouterr().err


def test_without_pages_the_message_names_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(tmp_path / "argassets.duckdb"))
    with pytest.raises(PageNotFoundError, match=r"none yet: run `argassets run-default` \(about"):
        find_page("aq")


def test_the_server_serves_the_folder_configured_at_each_request(tmp_path: Path, monkeypatch) -> None:
    old = _home(tmp_path / "old", monkeypatch, "A old")
    folder = [old]
    server = page_server("127.0.0.1", 0, lambda: folder[0])
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        assert urllib.request.urlopen(base + "aq_results.html", timeout=10).read() == b"A old"
        folder[0] = _home(tmp_path / "moved", monkeypatch, "A moved")
        assert urllib.request.urlopen(base + "aq_results.html", timeout=10).read() == b"A moved"
    finally:
        server.shutdown()
        server.server_close()
    assert page_url("aq_results.html", {}) == "http://127.0.0.1:3001/aq_results.html"
    assert page_url("x.html", {"ARGASSETS_PAGES_URL": "http://h:9/p/"}) == "http://h:9/p/x.html"


def test_a_taken_port_leaves_the_ui_running(capsys: pytest.CaptureFixture[str]) -> None:
    first = serve_pages_in_background("127.0.0.1", 0)
    assert first is not None
    try:
        assert serve_pages_in_background("127.0.0.1", first.server_address[1]) is None
        assert "results pages not served" in capsys.readouterr().err
    finally:
        first.shutdown()
        first.server_close()
