"""`fingerprints`: the reader's version covers exactly the code the ingest store imports, so a
change there reads every inbox file again and a change to the engines or publishing does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rating_core.lake import fingerprints

CORE = Path(fingerprints.__file__).resolve().parents[1]


def _package(tmp_path: Path) -> Path:
    """pkg: `a` imports `b` at the top and `c` inside a function (relatively); `d` is apart."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text('"""pkg."""\n')
    (root / "sub" / "__init__.py").write_text("")
    (root / "a.py").write_text(
        "from pkg import b\n\n\ndef late():\n    from .sub.c import value\n\n    return value\n"
    )
    (root / "b.py").write_text("import os\n")
    (root / "sub" / "c.py").write_text("value = 1\n")
    (root / "d.py").write_text("import pkg.b\n")
    return root


def test_the_closure_follows_top_level_function_and_relative_imports(tmp_path: Path) -> None:
    root = _package(tmp_path)
    found = {p.relative_to(root).as_posix() for p in fingerprints.imported_modules(root, "pkg.a")}
    assert found == {"__init__.py", "a.py", "b.py", "sub/__init__.py", "sub/c.py"}


def test_the_digest_changes_with_an_imported_module_only(tmp_path: Path) -> None:
    root = _package(tmp_path)

    def digest() -> str:
        return fingerprints.source_digest(
            root, sorted(fingerprints.imported_modules(root, "pkg.a"))
        )

    before = digest()
    (root / "d.py").write_text("import pkg.b  # changed\n")
    assert digest() == before
    (root / "sub" / "c.py").write_text("value = 2\n")
    assert digest() != before


def test_the_reader_covers_the_ingest_and_not_the_engines() -> None:
    closure = {
        p.relative_to(CORE).as_posix()
        for p in fingerprints.imported_modules(CORE, fingerprints.READER_ENTRY)
    }
    for needed in (
        "lake/ingest_store.py",
        "ingest/pgn_scan.py",
        "ingest/inbox.py",
        "ingest/trf.py",
        "systems/site/classification.py",
        "schemas.py",
    ):
        assert needed in closure
    for apart in (
        "lake/publishing.py",
        "systems/fide/export.py",
        "systems/site/replay.py",
        "lake/query.py",
    ):
        assert apart not in closure


def test_every_module_the_ingest_store_loads_is_in_the_closure() -> None:
    """The static closure holds at least what importing the ingest store loads at run time."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sys, rating_core.lake.ingest_store\n"
                "print('\\n'.join(m.__file__ for n, m in sys.modules.items()"
                " if n.split('.')[0] == 'rating_core' and getattr(m, '__file__', None)))"
            ),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    closure = fingerprints.imported_modules(CORE, fingerprints.READER_ENTRY)
    assert loaded and {Path(p).resolve() for p in loaded} <= closure
