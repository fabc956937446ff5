"""Shared fixtures: paths to the project's sample inbox and to the external test data."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data_samples"
EXTERNAL = ROOT.parent / "shared" / "external"


@pytest.fixture(scope="session")
def samples() -> Path:
    """The sample inbox that `ratings run` uses by default."""
    return SAMPLES


@pytest.fixture(scope="session")
def external() -> Path:
    """Real files nobody here wrote (read in place, never copied into the project)."""
    if not EXTERNAL.is_dir():
        pytest.fail(f"{EXTERNAL} is missing: CI and developers have ../shared beside the project")
    return EXTERNAL
