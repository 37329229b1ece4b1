"""No module reads another module's ``_private`` name: a name shared across modules is public."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The production code (the code location and what definitions.py assembles into it).
PRODUCTION = ("argassets", "asset_checks", "resources", "sensors")
#: Code outside production that is held to the same rule.
OTHERS = ("tests", "benchmarks")
#: Reads left, ``"path:name"`` to the reason. Production code has none (a test checks it); an
#: entry is a debt to pay, not a way around the rule.
ALLOWED: dict[str, str] = {}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@functools.cache
def _is_project_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or package of this repository (not the stdlib's ``os``)."""
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _module_aliases(tree: ast.Module, is_project_module: Callable[[str], bool]) -> dict[str, str]:
    """Local name to the dotted project module it is bound to by an import."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return {name: dotted for name, dotted in aliases.items() if is_project_module(dotted)}


def _attribute_path(node: ast.Attribute) -> tuple[str, list[str]] | None:
    """``(root name, attributes after it)`` of ``a.b.c``, or None when the root is no plain name."""
    chain: list[str] = []
    value: ast.expr = node
    while isinstance(value, ast.Attribute):
        chain.append(value.attr)
        value = value.value
    return (value.id, chain[::-1]) if isinstance(value, ast.Name) else None


def private_reads(
    source: str, is_project_module: Callable[[str], bool] = _is_project_module
) -> list[tuple[int, str, str]]:
    """``(line, module, name)`` of every ``from module import _name`` of a project module and every
    ``module._name`` read through a name an import bound to a project module."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and is_project_module(node.module):
            found += [(node.lineno, node.module, alias.name) for alias in node.names if _is_private(alias.name)]
    aliases = _module_aliases(tree, is_project_module)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            path = _attribute_path(node)
            if path is not None and path[0] in aliases:
                module = ".".join([aliases[path[0]], *path[1][:-1]])
                if is_project_module(module):
                    found.append((node.lineno, module, node.attr))
    return sorted(found)


def _offenders(folders: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        for line, module, name in private_reads(path.read_text(encoding="utf-8")):
            if f"{relative}:{name}" not in ALLOWED:
                found.append(f"{relative}:{line} reads {module}.{name}")
    return found


def test_no_module_reads_another_modules_private_name() -> None:
    assert len(list((ROOT / "argassets").rglob("*.py"))) > 50, f"production code not found under {ROOT}"
    offenders = _offenders(PRODUCTION + OTHERS)
    assert not offenders, "private names read across modules (make them public):\n" + "\n".join(offenders)


def test_production_code_has_no_allowed_private_reads() -> None:
    production = [key for key in ALLOWED if key.split("/")[0] in PRODUCTION]
    assert production == []


def test_the_scan_finds_from_imports_and_attribute_reads_of_project_modules_only() -> None:
    def project(dotted: str) -> bool:
        return dotted.split(".")[0] == "pkg"

    source = (
        "import os\nimport pkg.mod as m\nfrom pkg import other\nfrom pkg.mod import _hidden, public, __version__\n"
        "os._exit(0)\nm._helper()\nother._x.y\nm.public._inner\n"
    )
    assert private_reads(source, project) == [
        (4, "pkg.mod", "_hidden"),
        (6, "pkg.mod", "_helper"),
        (7, "pkg.other", "_x"),
        (8, "pkg.mod.public", "_inner"),
    ]
