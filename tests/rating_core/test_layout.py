"""The layout's one hard rule: `rating_core` is pure logic and never imports Dagster."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rating_core

PACKAGE = Path(rating_core.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))


def _imported_roots(path: Path) -> set[str]:
    """The top-level package of every import statement in a source file."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_rating_core_module_imports_dagster_or_the_orchestration(path: Path) -> None:
    assert not _imported_roots(path) & {"dagster", "assets", "pipelines"}


def test_importing_every_rating_core_module_loads_no_dagster() -> None:
    """Indirect imports count too: a library of ours pulling Dagster in would break the rule."""
    names = [
        ".".join(("rating_core", *p.relative_to(PACKAGE).with_suffix("").parts))
        for p in MODULES
        if p.name != "__init__.py"
    ]
    probe = (
        "import importlib, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'dagster'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
