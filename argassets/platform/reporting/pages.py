"""The results pages, found and served where they are now, not where a run once wrote them.

A page's location is resolved at read time (``reports/`` beside the configured DuckDB file), so a
copied or moved home still finds its pages. ``argassets open PAGE`` prints (and opens) the page;
``argassets ui`` serves the folder over HTTP on the port after the UI's (3001 by default), because
browsers refuse ``file://`` links from a web page, and the pages' assets link there
(:func:`page_url`, ``$ARGASSETS_PAGES_URL`` to change it).
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from argassets.platform.operations.remedies import missing
from argassets.platform.paths import resolve_duckdb_path

PAGES_URL_ENV_VAR = "ARGASSETS_PAGES_URL"
DEFAULT_PAGES_URL = "http://127.0.0.1:3001/"


class PageNotFoundError(LookupError):
    """No such page (lists those there, and how to build them)."""


def reports_dir() -> Path:
    """Where the results pages are: ``reports/`` beside the DuckDB file configured now."""
    return resolve_duckdb_path().parent / "reports"


def page_url(file_name: str, environ: Mapping[str, str] | None = None) -> str:
    """The address ``argassets ui`` serves a page at (``$ARGASSETS_PAGES_URL``, else port 3001)."""
    env = os.environ if environ is None else environ
    base = env.get(PAGES_URL_ENV_VAR) or DEFAULT_PAGES_URL
    return base.rstrip("/") + "/" + file_name


def list_pages(folder: Path | None = None) -> list[Path]:
    folder = reports_dir() if folder is None else folder
    return sorted(folder.glob("*.html")) if folder.is_dir() else []


def find_page(name: str, folder: Path | None = None) -> Path:
    """The page called ``name``: a file name, its stem, its asset's name (``aq_results_page``) or a
    unique prefix (``aq``)."""
    pages = list_pages(folder)
    stem = name.removesuffix(".html").removesuffix("_page")
    exact = [p for p in pages if p.stem == stem]
    matches = exact or [p for p in pages if p.stem.startswith(stem)]
    if len(matches) == 1:
        return matches[0]
    where = reports_dir() if folder is None else folder
    have = ", ".join(p.stem for p in pages) or missing("none yet")
    kind = "is ambiguous" if matches else "is not a results page"
    raise PageNotFoundError(f"{name!r} {kind} in {where} (pages: {have})")


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet: the UI's terminal is not a web log."""


def page_server(host: str, port: int, folder: Callable[[], Path] = reports_dir) -> http.server.ThreadingHTTPServer:
    """An HTTP server of the pages folder, resolved again at every request (not started)."""

    class Handler(_Handler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(folder()), **kwargs)

    return http.server.ThreadingHTTPServer((host, port), functools.partial(Handler))


def serve_pages_in_background(host: str, port: int) -> http.server.ThreadingHTTPServer | None:
    """Start :func:`page_server` in a daemon thread (``shutdown()`` stops it); when the port is
    taken, say so on stderr and return ``None``: the UI starts all the same."""
    try:
        server = page_server(host, port)
    except OSError as exc:
        print(
            f"argassets: results pages not served on {host}:{port} ({exc}); `argassets open` finds them",
            file=sys.stderr,
        )  # noqa: T201
        return None
    threading.Thread(target=server.serve_forever, name="argassets pages", daemon=True).start()
    return server
