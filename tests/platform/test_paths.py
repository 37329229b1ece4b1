"""Where the platform looks for the protocol specifications."""

from pathlib import Path

import pytest

from argassets.platform.paths import PROJECT_ROOT, SPECS_DIR_ENV_VAR, resolve_specs_dir


def test_specs_folder_defaults_to_the_sibling_shared_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SPECS_DIR_ENV_VAR, raising=False)
    assert resolve_specs_dir() == PROJECT_ROOT.parent / "shared" / "specs"


def test_specs_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(SPECS_DIR_ENV_VAR, str(tmp_path))
    assert resolve_specs_dir() == tmp_path
