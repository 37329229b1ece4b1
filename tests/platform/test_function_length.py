"""No function in production code is longer than 60 lines: a longer one is split into named steps."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The production code: the code location and what definitions.py assembles into it.
PRODUCTION = ("argassets", "asset_checks", "resources", "sensors")
MAX_LINES = 60
#: Files exempt from the rule, path (relative) to the reason. None is: every production file is
#: checked. An entry is a debt to pay, not a way around the rule.
ALLOWED: dict[str, str] = {}


def long_functions(source: str, max_lines: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """``(name, first line, lines)`` of every function or method longer than ``max_lines`` (from
    its ``def`` line to its last line, decorators not counted; nested functions on their own)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > max_lines:
                found.append((node.name, node.lineno, lines))
    return sorted(found, key=lambda item: item[1])


def _production_files() -> list[Path]:
    return sorted(path for folder in PRODUCTION for path in (ROOT / folder).rglob("*.py"))


def test_no_production_function_is_longer_than_60_lines() -> None:
    files = _production_files()
    assert len(files) > 50, f"production code not found under {ROOT}"
    offenders = [
        f"{path.relative_to(ROOT)}:{line} {name} ({lines} lines)"
        for path in files
        if path.relative_to(ROOT).as_posix() not in ALLOWED
        for name, line, lines in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, f"functions over {MAX_LINES} lines (split them into named steps):\n" + "\n".join(offenders)


def test_the_length_rule_counts_def_to_last_line_and_nested_functions_alone() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(79))
    assert long_functions(f"def fits():\n{body}\n", max_lines=80) == []
    assert long_functions(f"@decorated\ndef too_long():\n{body}\n    return x0\n", max_lines=80) == [
        ("too_long", 2, 81)
    ]
    inner_body = "\n".join(f"            y{i} = {i}" for i in range(80))
    nested = f"class Holder:\n    def outer(self):\n        def inner():\n{inner_body}\n"
    assert long_functions(nested, max_lines=80) == [("outer", 2, 82), ("inner", 3, 81)]
