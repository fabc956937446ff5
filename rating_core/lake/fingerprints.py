"""What identifies a file's content and the code that reads it: `content_hash` (change detection
of inbox and lake files) and `reader_version` (a new version of `rating_core` reads every inbox
file again; `code_version`, a new version of any of it, computes every derived fact again). A module of its own, below `facts`,
`digests` and `ingest_store`, which all use them."""

from __future__ import annotations

import ast
import hashlib
from functools import cache
from pathlib import Path

import polars as pl
import xxhash

READER_ENTRY = "rating_core.lake.ingest_store"
"""The module that turns inbox files into the games table's groups: what it imports, directly or
not, is the code `reader_version` hashes."""


@cache
def reader_version() -> str:
    """A digest of the code that turns files into rows: the `rating_core` modules the ingest
    store imports, directly or through others (function-level imports included), and Polars'
    version. A change to one of them reads every inbox file again; a change elsewhere (the
    engines, publishing, queries) does not, so upgrading the rating code costs no re-ingest."""
    root = Path(__file__).resolve().parents[1]  # rating_core
    return source_digest(root, sorted(imported_modules(root, READER_ENTRY)))


@cache
def code_version() -> str:
    """A digest of every `rating_core` module and Polars' version: a derived fact
    (`rating_core.lake.facts`) computed by another version of the code is computed again."""
    root = Path(__file__).resolve().parents[1]
    return source_digest(root, sorted(root.rglob("*.py")))


def source_digest(root: Path, paths: list[Path]) -> str:
    """SHA-256 over Polars' version and each file's path (relative to `root`'s parent) and bytes."""
    digest = hashlib.sha256(pl.__version__.encode())
    for path in paths:
        digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def imported_modules(root: Path, entry: str) -> set[Path]:
    """The source files of `entry` (a dotted module name under the package at `root`) and of every
    module of that package it imports, transitively, read from the source (`ast`), so a function's
    own imports count too; the packages' `__init__.py` on the way are included."""
    package = root.name
    found: set[Path] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        path = _module_file(root, name)
        if path is None or path in found:
            continue
        found.add(path)
        parts = name.split(".")
        todo.extend(".".join(parts[:n]) for n in range(1, len(parts)))
        todo.extend(
            imported
            for imported in _imports(path, name)
            if imported == package or imported.startswith(package + ".")
        )
    return found


def _module_file(root: Path, name: str) -> Path | None:
    """The file of module `name` under the package at `root` (None: not a module there)."""
    folder = root.parent.joinpath(*name.split("."))
    for path in (folder / "__init__.py", folder.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def _imports(path: Path, name: str) -> list[str]:
    """Every module name `path` (module `name`) may import: `import a.b`, `from a import b` (as
    `a` and `a.b`, since b may be a module), relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
    return names


def content_hash(path: Path) -> bytes:
    """XXH3-128 of a file's bytes, read in 4 MiB blocks into one reused buffer: change
    detection, not a published checksum (those are SHA-256); it reads a 645 MB PGN file in a
    tenth of SHA-256's CPU time. (A memory map would count the whole file in this process's
    memory: 3 GB for a 3 GB archive.)"""
    digest = xxhash.xxh3_128()
    block = bytearray(4 << 20)
    view = memoryview(block)
    with path.open("rb", buffering=0) as handle:
        while count := handle.readinto(block):
            digest.update(view[:count])
    return digest.digest()
