"""Study A's prompt axis: how one partition presents a pair (a prompt variant, a perturbation).

A registry entry's scope may name a **prompt variant** (a template of the user message, from
``data/prompt_variants.toml``) and a **perturbation** (a content-free change of the request). Both are
applied when the request is built, so each (entry, variant, perturbation) is its own partition,
cached by its prompt hash like any other (docs/prompt_variants.md). Perturbations:

- ``pad-a-<N>`` / ``pad-b-<N>``: the comparison's argument A (B) gets ``N`` characters of neutral filler
  appended (:func:`filler`), byte-checked: the padded text is the original plus the filler;
- ``options-12``: the answer options are renamed (``A``/``B`` -> ``1``/``2``) in the instruction and
  the pair's labels, and the parser maps ``1``/``2`` back to ``A``/``B``;
- ``options-reordered``: the instruction lists the options as ``Tie, B, or A``.

The order swap is the existing ``ba`` order of an entry with ``position_bias = true``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from argassets.argument_quality.prompts import USER_TEMPLATE
from argassets.argument_quality.scope import DIMENSIONS
from argassets.platform.judging.prompt_variants import PromptVariant, read_prompt_variants
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.paths import PROJECT_ROOT

__all__ = [
    "DEFAULT_VARIANT",
    "PROMPT_VARIANTS_PATH",
    "PROTOCOL",
    "Presentation",
    "check_perturbation",
    "filler",
    "pad",
    "presentation",
    "study_prompt_variants",
]

#: The shipped variants file (no environment variable overrides it: the file is part of the code).
PROMPT_VARIANTS_PATH = PROJECT_ROOT / "data" / "prompt_variants.toml"
#: The variant whose bytes are the protocol's user message (a scope without a variant uses the protocol).
DEFAULT_VARIANT = "appendix"
#: The unit the padding repeats: a space and an ellipsis, no words of content.
FILLER_UNIT = " ..."
_PAD = re.compile(r"^pad-(a|b)-([1-9][0-9]{0,4})$")
OPTION_PERTURBATIONS = ("options-12", "options-reordered")
#: Substrings of the protocol's system messages an option perturbation rewrites (each must occur once).
_OPTIONS_LINE = "A, B, or Tie"
_PAIR_NAMES = "Argument A and Argument B"


@cache
def _variants_of(path: Path) -> dict[str, PromptVariant]:
    return {v.name: v for v in read_prompt_variants(path, DIMENSIONS)}


def study_prompt_variants(path: Path = PROMPT_VARIANTS_PATH) -> dict[str, PromptVariant]:
    """Study A's prompt variants by name, read (and checked) once per file."""
    return _variants_of(Path(path))


def check_perturbation(name: str) -> str:
    """``name`` when it is a known perturbation, else ``ValueError`` listing the known forms."""
    if _PAD.fullmatch(name) or name in OPTION_PERTURBATIONS:
        return name
    raise ValueError(
        f"unknown perturbation {name!r}: expected pad-a-<N> or pad-b-<N> (N characters, 1..99999), "
        f"{' or '.join(OPTION_PERTURBATIONS)}"
    )


def filler(length: int) -> str:
    """``length`` characters of neutral filler: :data:`FILLER_UNIT` repeated, cut to length."""
    if length < 1:
        raise ValueError(f"padding length must be at least 1, got {length}")
    return (FILLER_UNIT * (length // len(FILLER_UNIT) + 1))[:length]


def pad(text: str, length: int) -> str:
    """``text`` with :func:`filler` of ``length`` appended; checked to be exactly that, byte for byte."""
    padding = filler(length)
    padded = text + padding
    if padded[: len(text)] != text or padded[len(text) :] != padding or len(padding) != length:
        raise AssertionError("padding changed the original text")
    return padded


def _replace_once(text: str, old: str, new: str, where: str) -> str:
    """``text`` with its single ``old`` replaced; an error naming ``where`` when it is not there once."""
    count = text.count(old)
    if count != 1:
        raise ValueError(f"{where}: expected {old!r} once in the message to rewrite, found it {count} times")
    return text.replace(old, new)


@dataclass(frozen=True)
class Presentation:
    """How a partition presents a pair: a user template, an optional perturbation, and its options.

    ``options`` are the answer labels as the judge sees them, in the order (first slot, second
    slot, tie); the parser maps the i-th back to ``LABELS[i]``.
    """

    variant: PromptVariant | None
    perturbation: str | None

    @property
    def options(self) -> tuple[str, ...]:
        return ("1", "2", "Tie") if self.perturbation == "options-12" else LABELS

    @property
    def padding(self) -> tuple[str, int] | None:
        """``(side, length)`` of a padding perturbation (side ``a`` or ``b`` of the comparison)."""
        match = _PAD.fullmatch(self.perturbation or "")
        return (match.group(1), int(match.group(2))) if match else None

    def texts(self, text_a: str, text_b: str) -> tuple[str, str]:
        """The comparison's two texts after the perturbation (padding), in the comparison's order."""
        padding = self.padding
        if padding is None:
            return text_a, text_b
        side, length = padding
        return (pad(text_a, length), text_b) if side == "a" else (text_a, pad(text_b, length))

    def user(self, first: str, second: str, dimension: str, where: str) -> str | None:
        """The user message for the texts as presented; ``None``: the protocol's (aq_prompts') text.

        A variant restricted to some dimensions (``facets``) leaves the others at the protocol's text.
        """
        variant = self.variant
        if variant is not None and variant.facets is not None and dimension not in variant.facets:
            variant = None
        if variant is None and self.perturbation != "options-12":
            return None
        template = variant.template if variant is not None else USER_TEMPLATE
        if self.perturbation == "options-12":
            template = _replace_once(template, "Argument A", "Argument 1", where)
            template = _replace_once(template, "Argument B", "Argument 2", where)
        return template.format(a=first, b=second)

    def system(self, system: str, strategy: str, where: str) -> str:
        """The system message after an option perturbation (the protocol's otherwise)."""
        if self.perturbation == "options-reordered":
            return _replace_once(system, _OPTIONS_LINE, "Tie, B, or A", where)
        if self.perturbation == "options-12":
            if strategy == "few":
                raise ValueError(
                    f"{where}: options-12 cannot rewrite the few-shot examples' answers; scope it to zero/cot"
                )
            system = _replace_once(system, _PAIR_NAMES, "Argument 1 and Argument 2", where)
            return _replace_once(system, _OPTIONS_LINE, "1, 2, or Tie", where)
        return system


def presentation(prompt_variant: str | None, perturbation: str | None) -> Presentation:
    """The presentation of a scope's ``prompt_variant`` and ``perturbation`` (both checked)."""
    variants = study_prompt_variants()
    variant = None
    if prompt_variant is not None:
        if prompt_variant not in variants:
            raise ValueError(
                f"unknown prompt variant {prompt_variant!r} (in {PROMPT_VARIANTS_PATH}: {', '.join(variants)})"
            )
        variant = variants[prompt_variant]
    return Presentation(variant, None if perturbation is None else check_perturbation(perturbation))


#: The protocol's presentation: no variant, no perturbation.
PROTOCOL = Presentation(None, None)
