"""Prompt variants: named, hashed pairwise templates read from one TOML file, refused whole when wrong.

A variant is a template for the pair's user message with exactly the slots ``{a}`` and ``{b}``
(the two texts; a literal brace is written doubled, as in :meth:`str.format`), a name, optionally
the facets (e.g. Study A's dimensions) it applies to, and the SHA-256 of its UTF-8 bytes, so
judgments made with it can be kept apart and cached by that hash. The file::

    [[variants]]
    name = "appendix"
    facets = ["logic"]          # optional: every facet when absent
    template = "Argument A: {a}\\nArgument B: {b}"

Any error (a missing or unknown slot, a duplicate name, an unknown facet, a missing field) refuses
the whole file, naming the file and the variant. Issue 32 item 3; Study A judges with them through
an entry's scope (docs/prompt_variants.md).
"""

from __future__ import annotations

import hashlib
import string
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PromptVariant", "read_prompt_variants"]

SLOTS = ("a", "b")


@dataclass(frozen=True)
class PromptVariant:
    """One named template; ``sha256`` is the hex digest of ``template.encode("utf-8")``."""

    name: str
    template: str
    facets: tuple[str, ...] | None
    sha256: str

    def render(self, text_a: str, text_b: str) -> str:
        """The user message for the pair (``text_a``, ``text_b``)."""
        return self.template.format(a=text_a, b=text_b)


def _slots(template: str, where: str) -> set[str]:
    """The named slots of ``template``; a malformed brace is an error naming ``where``."""
    try:
        return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    except ValueError as exc:
        raise ValueError(f"{where}: malformed template ({exc}); write a literal brace doubled") from exc


def _variant(entry: object, index: int, path: Path, known_facets: Collection[str], facet_word: str) -> PromptVariant:
    """One ``[[variants]]`` entry, checked."""
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: variant {index + 1} is not a table")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{path}: variant {index + 1} has no name")
    where = f"{path}: variant {name!r}"
    unknown_keys = sorted(set(entry) - {"name", "template", "facets"})
    if unknown_keys:
        raise ValueError(f"{where}: unknown field(s) {', '.join(unknown_keys)}")
    template = entry.get("template")
    if not isinstance(template, str):
        raise ValueError(f"{where}: no template (a string)")
    slots = _slots(template, where)
    missing, extra = [s for s in SLOTS if s not in slots], sorted(slots - set(SLOTS))
    if missing:
        raise ValueError(f"{where}: template lacks the slot(s) {', '.join('{' + s + '}' for s in missing)}")
    if extra:
        raise ValueError(f"{where}: template has unknown slot(s) {', '.join('{' + s + '}' for s in extra)}")
    facets = entry.get("facets")
    if facets is not None:
        if not isinstance(facets, list) or not facets or not all(isinstance(f, str) for f in facets):
            raise ValueError(f"{where}: facets must be a non-empty list of {facet_word} names")
        unknown = [f for f in facets if f not in known_facets]
        if unknown:
            raise ValueError(f"{where}: unknown {facet_word} {unknown[0]!r} (known: {', '.join(sorted(known_facets))})")
        facets = tuple(facets)
    digest = hashlib.sha256(template.encode("utf-8")).hexdigest()
    return PromptVariant(name, template, facets, digest)


def read_prompt_variants(
    path: str | Path, known_facets: Collection[str], *, facet_word: str = "dimension"
) -> tuple[PromptVariant, ...]:
    """Every variant of the TOML file at ``path``, in file order.

    Raises
    ------
    ValueError
        A file that is not TOML or has no ``[[variants]]``; a variant without a name or template,
        with a missing ``{a}``/``{b}`` or an unknown slot, a facet outside ``known_facets``, an
        unknown field, or a name used twice. The message names the file and the variant.
    """
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML ({exc})") from exc
    entries = document.get("variants")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: no [[variants]] table")
    variants: list[PromptVariant] = []
    for index, entry in enumerate(entries):
        variant = _variant(entry, index, path, known_facets, facet_word)
        if any(v.name == variant.name for v in variants):
            raise ValueError(f"{path}: variant {variant.name!r} is named twice")
        variants.append(variant)
    return tuple(variants)
