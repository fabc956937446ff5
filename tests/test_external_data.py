"""Tests that read ../shared/external skip without it (a fresh clone) and fail under CI=true."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

CONFTEST = Path(__file__).resolve().with_name("conftest.py")


def load_conftest() -> ModuleType:
    """A private copy of tests/conftest.py, so that its folder can be pointed elsewhere."""
    spec = importlib.util.spec_from_file_location("external_data_conftest", CONFTEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_absent_folder_skips_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conftest = load_conftest()
    monkeypatch.setattr(conftest, "EXTERNAL", tmp_path / "shared" / "external")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="shared/external"):
        conftest.require_external()


@pytest.mark.parametrize("value", ["true", "TRUE"])
def test_absent_folder_fails_under_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    conftest = load_conftest()
    monkeypatch.setattr(conftest, "EXTERNAL", tmp_path / "shared" / "external")
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match=r"shared/external.*CI=true"):
        conftest.require_external()


def test_present_folder_is_returned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conftest = load_conftest()
    folder = tmp_path / "shared" / "external"
    folder.mkdir(parents=True)
    monkeypatch.setattr(conftest, "EXTERNAL", folder)
    monkeypatch.setenv("CI", "true")
    assert conftest.require_external() == folder
