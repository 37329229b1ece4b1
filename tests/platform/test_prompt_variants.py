"""Prompt variant files: read, hashed over their bytes, rendered; refused whole when wrong, naming file and variant."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from argassets.platform.judging.prompt_variants import read_prompt_variants

DIMENSIONS = ("logic", "rhetoric", "dialectic")
GOOD = '''
[[variants]]
name = "protocol"
template = "Argument A: {a}\\nArgument B: {b}"

[[variants]]
name = "appendix"
facets = ["logic", "dialectic"]
template = """Which argument is more cogent? {{answer A or B}}
First: {a}
Second: {b}"""
'''


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "variants.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_variants_are_read_in_order_hashed_over_their_bytes_and_rendered(tmp_path: Path) -> None:
    protocol, appendix = read_prompt_variants(_file(tmp_path, GOOD), DIMENSIONS)
    assert (protocol.name, protocol.facets) == ("protocol", None)
    assert appendix.facets == ("logic", "dialectic")
    assert protocol.template == "Argument A: {a}\nArgument B: {b}"
    assert protocol.sha256 == hashlib.sha256(protocol.template.encode("utf-8")).hexdigest()
    assert protocol.sha256 != appendix.sha256
    assert protocol.render("x", "y") == "Argument A: x\nArgument B: y"
    assert appendix.render("x", "y") == "Which argument is more cogent? {answer A or B}\nFirst: x\nSecond: y"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('name = "no-b"\ntemplate = "A: {a}"', r"variant 'no-b': template lacks the slot\(s\) \{b\}"),
        ('name = "no-slots"\ntemplate = "compare"', r"variant 'no-slots': template lacks the slot\(s\) \{a\}, \{b\}"),
        ('name = "extra"\ntemplate = "{a} {b} {c}"', r"variant 'extra': template has unknown slot\(s\) \{c\}"),
        ('name = "brace"\ntemplate = "{a} {b} {"', r"variant 'brace': malformed template"),
        ('name = "facet"\nfacets = ["logos"]\ntemplate = "{a} {b}"', r"variant 'facet': unknown dimension 'logos'"),
        ('name = "empty"\nfacets = []\ntemplate = "{a} {b}"', r"variant 'empty': facets must be a non-empty list"),
        ('name = "typo"\ntemplat = "{a} {b}"', r"variant 'typo': unknown field\(s\) templat"),
        ('template = "{a} {b}"', r"variant 3 has no name"),
        ('name = "protocol"\ntemplate = "{b} then {a}"', r"variant 'protocol' is named twice"),
    ],
)
def test_a_wrong_variant_refuses_the_file_naming_file_and_variant(tmp_path: Path, entry: str, message: str) -> None:
    path = _file(tmp_path, GOOD + "\n[[variants]]\n" + entry + "\n")
    with pytest.raises(ValueError, match=message) as caught:
        read_prompt_variants(path, DIMENSIONS)
    assert str(caught.value).startswith(str(path))


def test_a_file_without_variants_or_not_toml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no \[\[variants\]\] table"):
        read_prompt_variants(_file(tmp_path, "title = 'x'\n"), DIMENSIONS)
    with pytest.raises(ValueError, match="not valid TOML"):
        read_prompt_variants(_file(tmp_path, "[[variants]\n"), DIMENSIONS)
