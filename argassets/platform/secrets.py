"""Credentials kept out of every error, log line, event and metadata value (docs/operations.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import quote, unquote

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "configured_secrets",
    "redact",
    "redact_url",
    "remember_secret",
    "split_credentials",
    "url_password",
]

REDACTED = "***"
#: Shorter values are not replaced as such (a one-letter password would blank every such letter);
#: the URL rules below still hide them inside URLs.
MIN_SECRET_LENGTH = 4
#: Variable names whose whole value is a secret.
_SECRET_NAME = re.compile(
    r"(PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_KEY|SECRET|TOKEN|CREDENTIALS?)(_[A-Z0-9]+)?$", re.IGNORECASE
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: ``scheme://user:secret@`` inside a text: up to the last '@' before white space.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*):\S*@")
#: Query parameters that carry a key (``?api_key=...``, ``&token=...``).
_SECRET_PARAMETER = re.compile(
    r"(?P<head>[?&](?:api[_-]?key|apikey|key|token|access[_-]?token|password|passwd|secret|sig|signature)=)[^&\s#'\"]+",
    re.IGNORECASE,
)
_remembered: set[str] = set()


def remember_secret(value: str | None) -> None:
    """Redact ``value`` from now on in this process (a key read from a variable of any name)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        _remembered.add(value)


def _userinfo(url: str) -> tuple[str, str, str | None] | None:
    """``(scheme://, user, raw password or None)`` of a URL with user-info, split at its last '@'."""
    match = _SCHEME.match(url)
    if match is None:
        return None
    rest = url[match.end() :]
    at = rest.rfind("@")
    if at < 0:
        return None
    user, colon, password = rest[:at].partition(":")
    return match.group(0), user, password if colon else None


def url_password(url: str) -> str | None:
    """The password of ``url`` as written (not decoded), or ``None``; any character allowed in it."""
    parts = _userinfo(url.strip())
    return parts[2] if parts else None


def _forms(value: str) -> set[str]:
    return {value, unquote(value), quote(value, safe=""), quote(unquote(value), safe="")}


def configured_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret value the environment configures (and those remembered), longest first."""
    environ = os.environ if environ is None else environ
    found: set[str] = set()
    for name, value in environ.items():
        if _SECRET_NAME.search(name):
            found |= _forms(value)
        password = url_password(value) if "://" in value else None
        if password:
            found |= _forms(password)
    for value in _remembered:
        found |= _forms(value)
    return sorted((s for s in found if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every configured secret, URL password and key-like query parameter replaced by ``***``."""
    for secret in configured_secrets():
        text = text.replace(secret, REDACTED)
    text = _USERINFO.sub(lambda m: f"{m['head']}:{REDACTED}@", text)
    return _SECRET_PARAMETER.sub(lambda m: f"{m['head']}{REDACTED}", text)


def redact_url(url: str) -> str:
    """One URL fit for showing: its password (up to the last '@', spaces included) replaced by ``***``
    and remembered, so that no other message of this process shows it either."""
    parts = _userinfo(url.strip())
    if parts is None:
        return redact(url)
    scheme, user, password = parts
    if password is None:
        return redact(url)
    remember_secret(password)
    remember_secret(unquote(password))
    return redact(f"{scheme}{user}:{REDACTED}@{url.strip()[len(scheme) :].rsplit('@', 1)[1]}")


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL without its ``user:password@`` part, and that user and password, decoded (``None`` when absent).

    The user-info ends at the URL's last '@', so a password holding '@', '/', '#' or ':' unescaped
    is taken whole.
    """
    parts = _userinfo(url)
    if parts is None:
        return url, None
    scheme, user, password = parts
    clean = scheme + url[len(scheme) :].rsplit("@", 1)[1]
    return clean, (unquote(user), unquote(password or ""))
