"""Every Eval Ever's own validator, run from its released wheel on this project's Python.

``every-eval-ever`` 0.3.0 declares Python >= 3.12 and so cannot be installed here (3.11), but its
validator (pydantic models generated from its JSON Schema, and its semantic checks) runs on 3.11
with what this project has. ``scripts/install`` downloads the wheel (``pip download --no-deps``)
into ``~/.cache/argassets/wheels``; it is extracted once beside it and imported from there. Its
code and schema are never part of this repository.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

EEE_VERSION = "0.3.0"
WHEEL_NAME = f"every_eval_ever-{EEE_VERSION}-py3-none-any.whl"
WHEEL_ENV_VAR = "ARGASSETS_EEE_WHEEL"
WHEEL_CACHE_ENV_VAR = "ARGASSETS_WHEEL_CACHE"


class ValidatorUnavailableError(RuntimeError):
    """The EEE wheel is not where it should be (says how to get it)."""


def wheel_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$ARGASSETS_EEE_WHEEL``, else the wheel in ``$ARGASSETS_WHEEL_CACHE`` (``~/.cache/argassets/wheels``)."""
    env = os.environ if environ is None else environ
    if env.get(WHEEL_ENV_VAR):
        return Path(env[WHEEL_ENV_VAR]).expanduser()
    cache = env.get(WHEEL_CACHE_ENV_VAR)
    folder = Path(cache).expanduser() if cache else Path.home() / ".cache" / "argassets" / "wheels"
    return folder / WHEEL_NAME


def _extracted(wheel: Path) -> Path:
    """The wheel's contents in a folder beside it (extracted once, atomically)."""
    target = wheel.parent / f"{wheel.stem}.extracted"
    if (target / "every_eval_ever").is_dir():
        return target
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=wheel.parent))
    try:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(scratch)
        try:
            os.replace(scratch, target)
        except OSError:
            if not (target / "every_eval_ever").is_dir():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def validation_core(wheel: Path | None = None) -> ModuleType:
    """EEE's ``every_eval_ever.validator.validation_core`` module, imported from the wheel."""
    wheel = wheel_path() if wheel is None else wheel
    if not wheel.is_file():
        raise ValidatorUnavailableError(
            f"the Every Eval Ever validator is not installed: {wheel} is missing (scripts/install fetches it; "
            f"or: pip download --no-deps --python-version 3.12 --only-binary=:all: every-eval-ever=={EEE_VERSION} "
            f"-d {wheel.parent})"
        )
    folder = str(_extracted(wheel))
    if folder not in sys.path:
        sys.path.append(folder)
    return importlib.import_module("every_eval_ever.validator.validation_core")


def validate_tree(root: Path, wheel: Path | None = None) -> dict[str, list[str]]:
    """Validate every ``.json`` file under ``root/data`` as the EEE datastore would (schema and
    semantic checks: path, model identity, deployment, score bounds). Returns the problems (errors
    and warnings) by repository path; an empty dict means every file passed."""
    core = validation_core(wheel)
    files = sorted((root / "data").rglob("*.json"))
    available = frozenset(path.relative_to(root).as_posix() for path in files)
    problems: dict[str, list[str]] = {}
    for path in files:
        repo_path = path.relative_to(root).as_posix()
        report = core.validate_file(
            path,
            repo_path=repo_path,
            available_files=available,
            read_repo_file=lambda rel: (root / rel).read_text(encoding="utf-8"),
            run_semantic_checks=True,
        )
        found = [core.format_error(e) for e in report.errors] + [core.format_warning(w) for w in report.warnings]
        if found or not report.valid:
            problems[repo_path] = found or ["invalid"]
    return problems
