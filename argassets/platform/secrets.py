"""Credentials kept out of every error, log line, event and metadata value (docs/operations.md)."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["REDACTED", "redact", "split_credentials"]

REDACTED = "***"
#: ``scheme://user:secret@``: the secret is everything between the first ':' after ``//`` and '@'.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*):[^\s/@]*@")
#: Query parameters that carry a key (``?api_key=...``, ``&token=...``).
_SECRET_PARAMETER = re.compile(
    r"(?P<head>[?&](?:api[_-]?key|apikey|key|token|access[_-]?token|password|passwd|secret|sig|signature)=)[^&\s#'\"]+",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """``text`` with the password of every URL and every key-like query parameter replaced by ``***``."""
    text = _USERINFO.sub(lambda m: f"{m['head']}:{REDACTED}@", text)
    return _SECRET_PARAMETER.sub(lambda m: f"{m['head']}{REDACTED}", text)


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL without its ``user:password@`` part, and that user and password (``None`` when absent)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username or ""), unquote(parts.password or ""))
