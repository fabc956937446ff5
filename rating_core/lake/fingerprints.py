"""What identifies a file's content and the code that reads it: `content_hash` (change detection
of inbox and lake files) and `reader_version` (a new version of `rating_core` reads every inbox
file again and computes every derived fact again). A module of its own, below `facts`,
`digests` and `ingest_store`, which all use them."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import polars as pl
import xxhash


@cache
def reader_version() -> str:
    """A digest of the code that turns files into rows (every `rating_core` module): a new
    version of it reads every group again."""
    digest = hashlib.sha256(pl.__version__.encode())
    root = Path(__file__).resolve().parents[1]  # rating_core
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


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
