"""Generated sections of the README: the text between a pair of HTML-comment markers."""

from __future__ import annotations


def read_between(text: str, begin: str, end: str) -> str:
    """The text between ``begin`` and ``end`` (without them); errors when they are missing."""
    start = text.find(begin)
    stop = text.find(end)
    if start < 0 or stop < 0 or stop < start:
        raise ValueError(f"README: the markers {begin!r} and {end!r} are missing or out of order")
    return text[start + len(begin) : stop].strip("\n")


def replace_between(text: str, fragment: str, begin: str, end: str) -> str:
    """``text`` with the part between the markers replaced by ``fragment``."""
    read_between(text, begin, end)
    start = text.find(begin) + len(begin)
    return text[:start] + "\n" + fragment.strip("\n") + "\n" + text[text.find(end) :]
