"""No import the layer contracts cannot see: production code imports modules by name in one place only.

``lint-imports`` (pyproject's contracts) reads ``import`` statements; a module imported by name at
run time (``importlib.import_module``, ``__import__``) is invisible to it and could point upwards,
as the platform's import of ``argassets.studies`` once did. The imports left are the list of
studies reading the study modules named by ``$ARGASSETS_EXTRA_STUDIES`` (studies sit below it), and
the exports importing Every Eval Ever's validator from its wheel (a third-party module).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = ("argassets", "asset_checks", "resources", "sensors")
#: File (relative) to why its import by name cannot point upwards.
ALLOWED = {
    "argassets/studies.py": "imports the study modules $ARGASSETS_EXTRA_STUDIES names: studies, below it",
    "argassets/platform/reporting/exports/eee_validator.py": "imports Every Eval Ever's validator from its wheel: not ours",
}


def imports_by_name(source: str) -> list[int]:
    """Lines that import a module by name: ``importlib.import_module(...)``, ``import_module(...)``, ``__import__(...)``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("import_module", "__import__"):
                lines.append(node.lineno)
    return lines


def test_only_the_list_of_studies_imports_modules_by_name() -> None:
    files = sorted(path for folder in PRODUCTION for path in (ROOT / folder).rglob("*.py"))
    found = {
        path.relative_to(ROOT).as_posix(): lines
        for path in files
        if (lines := imports_by_name(path.read_text(encoding="utf-8")))
    }
    assert set(found) == set(ALLOWED), found


def test_the_check_finds_an_import_by_name() -> None:
    assert imports_by_name("import importlib\nm = importlib.import_module('argassets.studies')\n") == [2]
    assert imports_by_name("x = __import__('sensors')\n") == [1]
    assert imports_by_name("import importlib.util\nimportlib.util.find_spec('llama_cpp')\n") == []
